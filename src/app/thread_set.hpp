#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace tlscmp::app {

// Threads that are joined, never detached: a thread is only gone when its
// exit (thread-local cleanup, such as the TLS library's error state) is done,
// so that nothing outlives the object that started it.
//
// A thread whose work is done waits a while for more before it exits, and
// spawn() hands work to such a waiting thread first: each piece of work still
// has a thread of its own, but a server taking thousands of short
// connections a second (--crr) does not create and tear down a thread for
// each (which cost more than serving a plain TCP connection).
class ThreadSet {
 public:
  // How long a thread with nothing to do waits for more before it exits.
  static constexpr std::chrono::seconds kIdleLinger{2};

  // `linger`: how long a thread with nothing to do waits (tests make it long).
  explicit ThreadSet(std::chrono::milliseconds linger = kIdleLinger) : linger_(linger) {}
  ThreadSet(const ThreadSet&) = delete;
  ThreadSet& operator=(const ThreadSet&) = delete;
  ~ThreadSet() { join_all(); }

  // Starts `work` on a waiting thread, or on a new one. Throws
  // std::system_error if no thread can start.
  void spawn(std::function<void()> work);
  // Joins the threads that have exited; cheap, call it often.
  void reap();
  // Joins every thread; their work must be about to end. Waiting threads exit at once.
  void join_all();
  // How many threads wait for work now.
  int waiting();

 private:
  void run(std::function<void()> work);

  const std::chrono::milliseconds linger_;
  std::mutex mutex_;
  std::condition_variable more_work_;
  std::deque<std::function<void()>> handed_;  // work for waiting threads, one each
  int waiting_ = 0;                           // threads waiting for work
  bool stopping_ = false;
  std::list<std::thread> running_;
  std::vector<std::thread::id> finished_;
};

}  // namespace tlscmp::app
