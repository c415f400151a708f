#pragma once

#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace tlscmp::app {

// Threads that are joined, never detached: a thread is only gone when its
// exit (thread-local cleanup, such as the TLS library's error state) is done,
// so that nothing outlives the object that started it.
class ThreadSet {
 public:
  ThreadSet() = default;
  ThreadSet(const ThreadSet&) = delete;
  ThreadSet& operator=(const ThreadSet&) = delete;
  ~ThreadSet() { join_all(); }

  // Starts `work` on a thread of its own. Throws std::system_error if no thread can start.
  void spawn(std::function<void()> work);
  // Joins the threads whose work is done; cheap, call it often.
  void reap();
  // Joins every thread; their work must be about to end.
  void join_all();

 private:
  std::mutex mutex_;
  std::list<std::thread> running_;
  std::vector<std::thread::id> finished_;
};

}  // namespace tlscmp::app
