#include "app/thread_set.hpp"

#include <algorithm>

namespace tlscmp::app {

void ThreadSet::spawn(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  if (waiting_ > static_cast<int>(handed_.size())) {
    handed_.push_back(std::move(work));
    // All of them, each to look: glibc before 2.41 can lose a signal to one
    // waiter (sourceware bug 25847), and the work would wait out a linger.
    more_work_.notify_all();
    return;
  }
  running_.emplace_back([this, work = std::move(work)]() mutable { run(std::move(work)); });
}

void ThreadSet::run(std::function<void()> work) {
  for (;;) {
    work();
    work = nullptr;  // its captures go before the thread waits
    std::unique_lock lock(mutex_);
    ++waiting_;
    more_work_.wait_for(lock, linger_, [&] { return !handed_.empty() || stopping_; });
    --waiting_;
    if (handed_.empty()) {
      finished_.push_back(std::this_thread::get_id());
      return;
    }
    work = std::move(handed_.front());
    handed_.pop_front();
  }
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

int ThreadSet::waiting() {
  std::lock_guard lock(mutex_);
  return waiting_;
}

void ThreadSet::join_all() {
  std::list<std::thread> all;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    all.swap(running_);
    finished_.clear();
  }
  more_work_.notify_all();
  for (std::thread& t : all)
    t.join();
}

}  // namespace tlscmp::app
