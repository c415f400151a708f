#include "transport/stream.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>

#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp {
namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void Stream::read_exact(std::span<std::byte> buf, std::error_code& ec) {
  while (!buf.empty()) {
    const std::size_t n = read_some(buf, ec);
    if (ec) return;
    buf = buf.subspan(n);
  }
}

void Stream::write_all(std::span<const std::byte> buf, std::error_code& ec) {
  while (!buf.empty()) {
    const std::size_t n = write_some(buf, ec);
    if (ec) return;
    buf = buf.subspan(n);
  }
}

void Stream::set_deadline(Deadline deadline) {
  deadline_ = deadline;
  if (transfer_phase_) {
    if (!library_waits_) set_nonblocking(fd_.get(), true);
    transfer_phase_ = false;
  }
}

std::error_code Stream::enter_transfer_phase(std::chrono::milliseconds idle, std::uint64_t min_rate) {
  min_rate_ = min_rate;
  window_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(idle).count();
  restart_rate_window();
  constexpr std::chrono::milliseconds kMaxTick{250};
  const std::chrono::milliseconds tick = std::min(idle, kMaxTick);
  idle_ticks_ = static_cast<int>((idle + tick - std::chrono::milliseconds(1)) / tick);
  stalled_ticks_ = 0;
  tick_ = tick;
  if (library_waits_) {
    transfer_phase_ = true;
    return {};
  }
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(tick).count();
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(us / 1'000'000);
  tv.tv_usec = static_cast<suseconds_t>(us % 1'000'000);
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      ::setsockopt(fd_.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
    return {errno, std::system_category()};
  }
  set_nonblocking(fd_.get(), false);
  transfer_phase_ = true;
  return {};
}

void Stream::enter_event_loop_phase() {
  if (!library_waits_) set_nonblocking(fd_.get(), true);
  transfer_phase_ = false;
  event_loop_ = true;
}

bool Stream::readable_within(std::chrono::nanoseconds wait, std::error_code& ec) {
  return readable_fd_within(native_handle(), wait, ec);
}

std::size_t Stream::read_now(std::span<std::byte> buf, std::error_code& ec) {
  if (!transfer_phase_ || library_waits_) return read_some(buf, ec);
  set_nonblocking(fd_.get(), true);
  no_wait_ = true;
  const std::size_t n = read_some(buf, ec);
  no_wait_ = false;
  set_nonblocking(fd_.get(), false);
  return n;
}

std::error_code Stream::wait_ready(short events) {
  if (event_loop_ || no_wait_) {
    wanted_events_ = events;
    return TransportErrc::would_block;
  }
  if (transfer_phase_) return nothing_came();
  return wait_fd(fd_.get(), events, deadline_);
}

std::chrono::milliseconds Stream::wait_limit() const {
  if (event_loop_) return std::chrono::milliseconds(0);
  if (transfer_phase_) return tick_;
  return std::chrono::milliseconds(deadline_.remaining_ms());
}

std::error_code Stream::nothing_came() {
  if (event_loop_) return TransportErrc::would_block;
  if (transfer_phase_) {
    if (min_rate_ > 0 && !window_moved_enough(steady_ns())) return TransportErrc::too_slow;
    return ++stalled_ticks_ < idle_ticks_ ? std::error_code{} : TransportErrc::timeout;
  }
  return deadline_.expired() ? std::error_code(TransportErrc::timeout) : std::error_code{};
}

void Stream::restart_rate_window() {
  if (min_rate_ == 0) return;
  window_start_ns_ = steady_ns();
  window_bytes_ = 0;
  calls_unchecked_ = 0;
}

bool Stream::rate_holds(std::size_t n) {
  window_bytes_ += n;
  // The clock is read once every 16 calls at most: a stream that moves
  // fast pays a counter; a trickle is caught within 16 of its reads.
  constexpr unsigned kCallsPerCheck = 16;
  if (++calls_unchecked_ < kCallsPerCheck) return true;
  calls_unchecked_ = 0;
  return window_moved_enough(steady_ns());
}

bool Stream::window_moved_enough(std::int64_t now_ns) {
  // Nothing at all is a stall, which the idle timeout reports as one.
  if (now_ns - window_start_ns_ < window_ns_ || window_bytes_ == 0) return true;
  const double due = static_cast<double>(min_rate_) * static_cast<double>(now_ns - window_start_ns_) / 1e9;
  if (static_cast<double>(window_bytes_) < due) return false;
  window_start_ns_ = now_ns;
  window_bytes_ = 0;
  return true;
}

namespace {

std::error_code from_errno(int err) {
  if (err == ECONNRESET || err == EPIPE) return TransportErrc::reset;
  return {err, std::system_category()};
}

}  // namespace

std::size_t TcpStream::read_some(std::span<std::byte> buf, std::error_code& ec) {
  for (;;) {
    const ssize_t n = ::read(fd_.get(), buf.data(), buf.size());
    if (n > 0) {
      if (!progressed(static_cast<std::size_t>(n))) {
        ec = TransportErrc::too_slow;
        return 0;
      }
      return static_cast<std::size_t>(n);
    }
    if (n == 0) {
      ec = TransportErrc::eof;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if ((ec = wait_ready(POLLIN))) return 0;
      continue;
    }
    ec = from_errno(errno);
    return 0;
  }
}

std::size_t TcpStream::write_some(std::span<const std::byte> buf, std::error_code& ec) {
  for (;;) {
    // MSG_NOSIGNAL: a vanished peer is an EPIPE error here, never a SIGPIPE.
    const ssize_t n = ::send(fd_.get(), buf.data(), buf.size(), MSG_NOSIGNAL);
    ++send_calls_;
    if (n >= 0) {
      if (!progressed(static_cast<std::size_t>(n))) {
        ec = TransportErrc::too_slow;
        return 0;
      }
      return static_cast<std::size_t>(n);
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if ((ec = wait_ready(POLLOUT))) return 0;
      continue;
    }
    ec = from_errno(errno);
    return 0;
  }
}

void TcpStream::shutdown_send(std::error_code& ec) {
  if (::shutdown(fd_.get(), SHUT_WR) != 0) ec = from_errno(errno);
}

}  // namespace tlscmp
