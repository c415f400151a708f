#include "session/interrupt.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include <csignal>

#include "error.hpp"

namespace tlscmp::session {
namespace {

sigset_t interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

InterruptWatch::InterruptWatch() {
  const sigset_t set = interrupt_signals();
  if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) throw Error("cannot block SIGINT");
  signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC));
  stop_fd_.reset(::eventfd(0, EFD_CLOEXEC));
  if (!signal_fd_.valid() || !stop_fd_.valid()) throw Error("cannot watch for SIGINT");
  watcher_ = std::thread([this] { watch_signals(); });
}

InterruptWatch::~InterruptWatch() {
  const std::uint64_t one = 1;
  (void)::write(stop_fd_.get(), &one, sizeof one);
  watcher_.join();
  const sigset_t set = interrupt_signals();
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void InterruptWatch::watch_signals() {
  pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) continue;  // EINTR
    if (fds[1].revents != 0) return;
    if (fds[0].revents != 0) {
      signalfd_siginfo info{};
      (void)::read(signal_fd_.get(), &info, sizeof info);
      interrupted_.store(true);
      std::lock_guard lock(mutex_);
      for (int fd : fds_)
        ::shutdown(fd, SHUT_RDWR);
    }
  }
}

InterruptWatch::Guard::Guard(InterruptWatch& watch, int fd) : watch_(watch), fd_(fd) {
  std::lock_guard lock(watch_.mutex_);
  watch_.fds_.insert(fd_);
  if (watch_.interrupted()) ::shutdown(fd_, SHUT_RDWR);
}

InterruptWatch::Guard::~Guard() {
  std::lock_guard lock(watch_.mutex_);
  watch_.fds_.erase(watch_.fds_.find(fd_));
}

}  // namespace tlscmp::session
