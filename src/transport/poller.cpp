#include "transport/poller.hpp"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "error.hpp"

namespace tlscmp {
namespace {

void control(int epoll, int op, int fd, std::uint32_t events, std::uint64_t tag, const char* what) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (::epoll_ctl(epoll, op, fd, &event) != 0)
    throw Error(fmt::format("epoll_ctl ({}): {}", what, std::strerror(errno)));
}

}  // namespace

Poller::Poller(std::size_t batch) : fd_(::epoll_create1(EPOLL_CLOEXEC)), ready_(batch) {
  if (!fd_.valid()) throw Error(fmt::format("cannot make an epoll set: {}", std::strerror(errno)));
}

void Poller::add(int fd, std::uint32_t events, std::uint64_t tag) {
  control(fd_.get(), EPOLL_CTL_ADD, fd, events, tag, "add");
}

void Poller::modify(int fd, std::uint32_t events, std::uint64_t tag) {
  control(fd_.get(), EPOLL_CTL_MOD, fd, events, tag, "modify");
}

void Poller::remove(int fd) {
  control(fd_.get(), EPOLL_CTL_DEL, fd, 0, 0, "remove");
}

std::span<const epoll_event> Poller::wait(int timeout_ms) {
  return done(::epoll_wait(fd_.get(), ready_.data(), static_cast<int>(ready_.size()), timeout_ms));
}

std::span<const epoll_event> Poller::wait(std::chrono::nanoseconds timeout) {
  const std::int64_t ns = std::max<std::int64_t>(0, timeout.count());
  if (fine_timeouts_) {
    const timespec t{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    const int n = ::epoll_pwait2(fd_.get(), ready_.data(), static_cast<int>(ready_.size()), &t, nullptr);
    if (n >= 0 || errno != ENOSYS) return done(n);
    fine_timeouts_ = false;
  }
  return wait(static_cast<int>((ns + 999'999) / 1'000'000));
}

std::span<const epoll_event> Poller::done(int n) {
  if (n < 0) {
    if (errno == EINTR) return {};
    throw Error(fmt::format("epoll_wait: {}", std::strerror(errno)));
  }
  return {ready_.data(), static_cast<std::size_t>(n)};
}

Wakeup::Wakeup() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!fd_.valid()) throw Error(fmt::format("cannot make an eventfd: {}", std::strerror(errno)));
}

void Wakeup::signal() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd_.get(), &one, sizeof one);  // a full counter is awake anyway
}

void Wakeup::drain() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd_.get(), &count, sizeof count);
}

}  // namespace tlscmp
