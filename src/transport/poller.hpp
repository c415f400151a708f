#pragma once

// An epoll set, for the event loops that hold many connections on one
// thread (kinds/flows), and an eventfd that wakes one from another thread.
// Level-triggered: a loop that stops short of EAGAIN is woken again.

#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "transport/unique_fd.hpp"

namespace tlscmp {

class Poller {
 public:
  // Throws tlscmp::Error where the kernel will not make one.
  explicit Poller(std::size_t batch = 256);
  // `events`: EPOLLIN, EPOLLOUT or both; `tag` comes back with each event.
  // Each throws tlscmp::Error naming the call (a closed or foreign fd).
  void add(int fd, std::uint32_t events, std::uint64_t tag);
  void modify(int fd, std::uint32_t events, std::uint64_t tag);
  void remove(int fd);
  // The ready events, waiting at most `timeout_ms` (0: not at all); empty
  // on a timeout or a signal.
  std::span<const epoll_event> wait(int timeout_ms);
  // The same to the nanosecond (epoll_pwait2, Linux 5.11; to the
  // millisecond, rounded up, where the kernel lacks it).
  std::span<const epoll_event> wait(std::chrono::nanoseconds timeout);

 private:
  std::span<const epoll_event> done(int n);

  UniqueFd fd_;
  std::vector<epoll_event> ready_;
  bool fine_timeouts_ = true;  // epoll_pwait2 works here
};

// A counter another thread bumps to wake a loop that polls it for EPOLLIN.
class Wakeup {
 public:
  Wakeup();  // throws tlscmp::Error
  int fd() const { return fd_.get(); }
  void signal();
  void drain();

 private:
  UniqueFd fd_;
};

}  // namespace tlscmp
