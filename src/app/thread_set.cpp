#include "app/thread_set.hpp"

#include <algorithm>

namespace tlscmp::app {

void ThreadSet::spawn(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  running_.emplace_back([this, work = std::move(work)] {
    work();
    std::lock_guard done(mutex_);
    finished_.push_back(std::this_thread::get_id());
  });
}

void ThreadSet::reap() {
  std::list<std::thread> done;
  {
    std::lock_guard lock(mutex_);
    for (auto it = running_.begin(); it != running_.end();) {
      if (std::find(finished_.begin(), finished_.end(), it->get_id()) != finished_.end()) {
        finished_.erase(std::find(finished_.begin(), finished_.end(), it->get_id()));
        done.splice(done.end(), running_, it++);
      } else {
        ++it;
      }
    }
  }
  for (std::thread& t : done)
    t.join();  // outside the lock: a finishing thread takes it
}

void ThreadSet::join_all() {
  std::list<std::thread> all;
  {
    std::lock_guard lock(mutex_);
    all.swap(running_);
    finished_.clear();
  }
  for (std::thread& t : all)
    t.join();
}

}  // namespace tlscmp::app
