#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "transport/unique_fd.hpp"

namespace tlscmp::session {

// Ctrl-C (SIGINT) and SIGTERM for the client: instead of dying, it marks the
// comparison interrupted and shuts down the sockets in use, so that a
// blocked transfer returns at once with what it measured so far.
//
// Construct it before any other thread starts: it blocks both signals in the
// calling thread, which threads started later inherit, and takes them on a
// thread of its own (signalfd), so no signal handler and no global is needed.
class InterruptWatch {
 public:
  InterruptWatch();
  ~InterruptWatch();  // stops watching and restores the signal mask
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  bool interrupted() const { return interrupted_.load(); }

  // A socket to shut down on interrupt, for as long as the guard lives.
  class Guard {
   public:
    Guard(InterruptWatch& watch, int fd);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    InterruptWatch& watch_;
    int fd_;
  };

 private:
  void watch_signals();

  std::atomic<bool> interrupted_{false};
  std::mutex mutex_;
  std::multiset<int> fds_;
  UniqueFd signal_fd_;
  UniqueFd stop_fd_;  // eventfd: ends the watcher thread
  std::thread watcher_;
};

}  // namespace tlscmp::session
