#include "stacks/quic/quic_stream.hpp"

#include <poll.h>

#include <algorithm>
#include <climits>

#include "stacks/quic/quic.hpp"
#include "stacks/quic/quic_transactions.hpp"
#include "tls/ssl_compat.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::stacks {

QuicStream::QuicStream(UniqueFd fd, ssl_st* ssl) : SslStream(std::move(fd), ssl) {
  library_waits();
}

QuicStream::QuicStream(std::shared_ptr<QuicStream> connection, ssl_st* stream, bool reports_path)
    : QuicStream(UniqueFd(), stream) {
  watch_ = connection->watch_;
  connection_ = std::move(connection);
  reports_path_ = reports_path;
}

QuicStream::~QuicStream() {
  if (!connection_) detail::close_quic(ssl());  // a stream's end is its FIN or its connection's
  free_ssl();
  if (watch_ && !connection_) watch_->connection_gone();
}

ssl_st* QuicStream::tls_ssl() const {
  return connection_ ? connection_->ssl() : ssl();
}

bool QuicStream::readable_within(std::chrono::nanoseconds wait, std::error_code& ec) {
  (void)ec;
  if (SSL_has_pending(ssl()) == 1) return true;
  wait = std::max(wait, std::chrono::nanoseconds::zero());
  const int fd = connection_ ? connection_->native_handle() : native_handle();
  if (fd < 0) {
    return detail::wait_quic(ssl(), /*write=*/false, std::chrono::ceil<std::chrono::microseconds>(wait),
                             watch_.get());
  }
  // OpenSSL's blocking waits count whole milliseconds (poll(2)) and spin
  // through the last one: an open loop's waits for its next request took a
  // whole core at 1,000 a second. A client's connection has its socket to
  // itself, so the wait is on the socket (to the nanosecond), a millisecond
  // at a time, each followed by a look that lets the library take what
  // came. The library's assist thread runs the timers meanwhile; should it
  // take a response off the socket first, the slice bounds the delay.
  constexpr auto kSlice = std::chrono::milliseconds(1);
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (detail::wait_quic(ssl(), /*write=*/false, std::chrono::microseconds::zero(), watch_.get()))
      return true;
    const auto left = until - std::chrono::steady_clock::now();
    if (left.count() <= 0) return false;
    std::error_code ignored;  // the look that follows says what the socket has
    readable_fd_within(fd, std::min<std::chrono::nanoseconds>(left, kSlice), ignored);
  }
}

std::error_code QuicStream::wait_for(short events) {
  // In an event loop the loop waits (on the client's socket, or a server's QuicPollSet).
  if (in_event_loop()) return wait_ready(events);
  if (detail::wait_quic(ssl(), events == POLLOUT, wait_limit(), watch_.get())) return {};
  return nothing_came();
}

std::shared_ptr<QuicStream> QuicStream::shared() {
  return std::static_pointer_cast<QuicStream>(shared_from_this());
}

std::unique_ptr<Stream> QuicStream::open_stream(bool reports_path) {
  return std::make_unique<QuicStream>(shared(), detail::new_stream(ssl()), reports_path);
}

std::unique_ptr<Stream> QuicStream::accept_stream(std::chrono::milliseconds wait, bool& ended) {
  SSL* stream = detail::accept_stream(ssl(), wait, ended, watch_.get());
  if (stream == nullptr) return nullptr;
  return std::make_unique<QuicStream>(shared(), stream, false);
}

std::unique_ptr<QuicStream> QuicStream::open_sibling() {
  return std::make_unique<QuicStream>(connection_, detail::new_stream(connection_->ssl()), false);
}

std::unique_ptr<QuicStream> QuicStream::accept_sibling(std::chrono::milliseconds wait, bool& ended) {
  ended = false;
  if (SSL_has_pending(ssl()) == 1) return nullptr;
  SSL* stream = detail::accept_stream(connection_->ssl(), wait, ended, watch_.get(), ssl());
  if (stream == nullptr) return nullptr;
  return std::make_unique<QuicStream>(connection_, stream, false);
}

std::unique_ptr<Stream> QuicStream::stream_per_transaction(const TransactionShape& shape) {
  return std::make_unique<QuicTransactions>(*this, shape);
}

std::size_t QuicStream::write_last(std::span<const std::byte> buf, std::error_code& ec) {
  const int length = static_cast<int>(std::min<std::size_t>(buf.size(), INT_MAX));
  return retry_io([&] { return detail::write_concluding(ssl(), buf.data(), length); }, ec);
}

void QuicStream::shutdown_send(std::error_code& ec) {
  if (!detail::conclude_stream(ssl())) {
    ec = TransportErrc::reset;
    return;
  }
  constexpr std::chrono::milliseconds kSlice{1};
  std::uint64_t left = detail::unacknowledged_bytes(ssl());
  auto since = std::chrono::steady_clock::now();  // the last acknowledgement, or the last wait's start
  while (left > 0) {
    detail::wait_quic_events(ssl(), kSlice, watch_.get());
    const std::uint64_t now_left = detail::unacknowledged_bytes(ssl());
    const auto now = std::chrono::steady_clock::now();
    if (now_left < left) {
      left = now_left;
      since = now;
    } else if (now - since >= std::max(wait_limit(), kSlice)) {
      if ((ec = nothing_came())) return;
      since = now;
    }
  }
}

bool QuicStream::loop_wants_write() const {
  return detail::net_write_desired(ssl());
}

std::optional<std::chrono::microseconds> QuicStream::loop_timeout() const {
  return detail::event_timeout(ssl());
}

void QuicStream::handle_loop_events() {
  detail::handle_events(ssl());
}

std::uint64_t QuicStream::unacknowledged_bytes() const {
  return detail::unacknowledged_bytes(ssl());
}

std::optional<UdpPath> QuicStream::udp_path() const {
  if ((connection_ && !reports_path_) || SSL_is_server(tls_ssl()) == 1) return std::nullopt;
  return detail::udp_path(tls_ssl());
}

std::optional<UdpPath> QuicStream::port_path() const {
  if (SSL_is_server(tls_ssl()) != 1 || !watch_) return std::nullopt;
  return watch_->port_path();
}

}  // namespace tlscmp::stacks
