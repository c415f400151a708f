// A QUIC connection's streams by number (transport/stream_group.hpp), for
// HTTP/3: the client opens a stream a request and one-way streams for its
// control and QPACK, the server takes them as they come and opens its own
// one-way streams. Each stream's object is the library's, non-blocking;
// one SSL_poll watches them all (and, on a server, its listener, as every
// wait on its domain does: detail::ListenerWatch).

#include <fmt/format.h>
#include <map>
#include <vector>

#include "error.hpp"
#include "stacks/quic/quic_internal.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::stacks {

#if TLSCMP_HAVE_QUIC

namespace {

constexpr std::size_t kReadBytes = 64 * 1024;

class QuicGroup final : public StreamGroup {
 public:
  QuicGroup(std::shared_ptr<QuicStream> connection, SSL* connection_ssl, SSL* base,
            std::shared_ptr<detail::ListenerWatch> watch)
      : connection_(std::move(connection)), conn_(connection_ssl), base_(base), watch_(std::move(watch)) {
    base_id_ = static_cast<std::int64_t>(SSL_get_stream_id(base));
    streams_[base_id_] = {base, true};
  }
  ~QuicGroup() override {
    for (const auto& [id, member] : streams_) {
      if (member.ssl != base_) SSL_free(member.ssl);
    }
  }
  QuicGroup(const QuicGroup&) = delete;
  QuicGroup& operator=(const QuicGroup&) = delete;

  std::int64_t base_id() const override { return base_id_; }
  std::int64_t open(bool bidirectional) override;
  void write(std::int64_t id, std::span<const std::byte> bytes, bool fin, std::chrono::milliseconds idle,
             std::error_code& ec) override;
  bool readable_within(std::chrono::nanoseconds limit, std::error_code& ec) override;
  void read(const Take& take, std::error_code& ec) override;
  const std::string& error_detail() const override { return detail_; }

 private:
  struct Member {
    SSL* ssl = nullptr;
    bool reading = false;  // the peer may still send on it
  };
  // Why a call on `ssl` failed for good.
  std::error_code failure(SSL* ssl, int result);
  // The streams the peer opened since the last look, added.
  void take_new();
  // Polls the streams that may still bring bytes, and the connection for
  // new streams and its end, for up to `limit`: each readable one's number
  // in ready_.
  bool poll(std::chrono::microseconds limit);

  std::shared_ptr<QuicStream> connection_;  // kept open while the group lives
  SSL* conn_;
  SSL* base_;
  std::int64_t base_id_ = 0;
  std::shared_ptr<detail::ListenerWatch> watch_;
  std::map<std::int64_t, Member> streams_;
  std::vector<SSL_POLL_ITEM> items_;
  std::vector<std::int64_t> polled_;  // each item's stream, but the last (the connection)
  std::vector<std::int64_t> ready_;
  bool incoming_ = false;  // the last poll saw new streams
  bool fresh_ = false;     // ready_ is a poll's that nothing has read since
  std::vector<std::byte> buffer_ = std::vector<std::byte>(kReadBytes);
  std::string detail_;
};

std::error_code QuicGroup::failure(SSL* ssl, int result) {
  SSL_CONN_CLOSE_INFO closed{};
  const bool ended = SSL_get_conn_close_info(conn_, &closed, sizeof closed) == 1;
  const int error = SSL_get_error(ssl, result);
  detail_ = tls::take_error_reason();
  if (ended) {
    if (closed.reason != nullptr && closed.reason_len > 0) detail_.assign(closed.reason, closed.reason_len);
    return closed.error_code == 0 ? TransportErrc::eof : TransportErrc::reset;
  }
  if (error == SSL_ERROR_SSL) {
    const int state = SSL_get_stream_read_state(ssl);
    if (state == SSL_STREAM_STATE_RESET_REMOTE ||
        SSL_get_stream_write_state(ssl) == SSL_STREAM_STATE_RESET_REMOTE) {
      std::uint64_t code = 0;
      SSL_get_stream_read_error_code(ssl, &code);
      detail_ = fmt::format("the peer reset stream {} (error {:#x})", SSL_get_stream_id(ssl), code);
      return TransportErrc::reset;
    }
  }
  return TransportErrc::tls_failure;
}

std::int64_t QuicGroup::open(bool bidirectional) {
  // ADVANCE: a stream past the peer's limit is opened at once and waits
  // for its credit in write(), as a blocking open would.
  SSL* stream = SSL_new_stream(conn_, (bidirectional ? 0 : SSL_STREAM_FLAG_UNI) | SSL_STREAM_FLAG_ADVANCE);
  if (stream == nullptr) throw_tls_error("cannot open a QUIC stream");
  SSL_set_blocking_mode(stream, 0);
  const auto id = static_cast<std::int64_t>(SSL_get_stream_id(stream));
  streams_[id] = {stream, bidirectional};
  return id;
}

void QuicGroup::write(std::int64_t id, std::span<const std::byte> bytes, bool fin,
                      std::chrono::milliseconds idle, std::error_code& ec) {
  const auto it = streams_.find(id);
  if (it == streams_.end()) {
    ec = TransportErrc::not_connected;
    return;
  }
  SSL* s = it->second.ssl;
  std::size_t at = 0;
  while (at < bytes.size() || fin) {
    std::size_t written = 0;
    const int ok = at < bytes.size() ? SSL_write_ex2(s, bytes.data() + at, bytes.size() - at,
                                                     fin ? SSL_WRITE_FLAG_CONCLUDE : 0, &written)
                                     : SSL_stream_conclude(s, 0);
    if (ok == 1) {
      at += written;
      if (at < bytes.size()) continue;
      return;  // a stream done both ways is let go at the next poll
    }
    const int error = SSL_get_error(s, ok);
    if (error != SSL_ERROR_WANT_WRITE && error != SSL_ERROR_WANT_READ) {
      ec = failure(s, ok);
      return;
    }
    ERR_clear_error();
    SSL_POLL_ITEM item{};
    item.desc = SSL_as_poll_descriptor(s);
    item.events = SSL_POLL_EVENT_W | SSL_POLL_EVENT_EW;
    if (detail::poll_watching({&item, 1}, idle, watch_.get()) == 0) {
      detail_ =
          fmt::format("QUIC stream {} took nothing for {} ms (the peer's flow control)", id, idle.count());
      ec = TransportErrc::timeout;
      return;
    }
  }
}

void QuicGroup::take_new() {
  while (SSL* stream = SSL_accept_stream(conn_, SSL_ACCEPT_STREAM_NO_BLOCK)) {
    SSL_set_blocking_mode(stream, 0);
    streams_[static_cast<std::int64_t>(SSL_get_stream_id(stream))] = {stream, true};
  }
  ERR_clear_error();
}

bool QuicGroup::poll(std::chrono::microseconds limit) {
  items_.clear();
  polled_.clear();
  ready_.clear();
  for (auto it = streams_.begin(); it != streams_.end();) {
    const auto& [id, member] = *it;
    if (!member.reading) {
      // Done both ways by now (its FIN read, its own sent: the library may
      // say so only once it went out), it is let go: the library frees it
      // and grants the peer another in its place. This side's one-way
      // streams and the base (its QuicStream's) stay.
      if (member.ssl != base_ && SSL_get_stream_write_state(member.ssl) != SSL_STREAM_STATE_OK) {
        SSL_free(member.ssl);
        it = streams_.erase(it);
      } else {
        ++it;
      }
      continue;
    }
    SSL_POLL_ITEM item{};
    item.desc = SSL_as_poll_descriptor(member.ssl);
    item.events = SSL_POLL_EVENT_R | SSL_POLL_EVENT_ER;
    items_.push_back(item);
    polled_.push_back(id);
    ++it;
  }
  SSL_POLL_ITEM connection{};
  connection.desc = SSL_as_poll_descriptor(conn_);
  connection.events = SSL_POLL_EVENT_ISB | SSL_POLL_EVENT_ISU | SSL_POLL_EVENT_EC | SSL_POLL_EVENT_ECD;
  items_.push_back(connection);
  const int polled = detail::poll_watching(items_, limit, watch_.get());
  for (std::size_t i = 0; i < polled_.size(); ++i) {
    if (items_[i].revents != 0) ready_.push_back(polled_[i]);
  }
  incoming_ = (items_.back().revents & (SSL_POLL_EVENT_ISB | SSL_POLL_EVENT_ISU)) != 0;
  fresh_ = true;
  // A failed poll: the reads that follow say what is wrong.
  return polled != 0;
}

bool QuicGroup::readable_within(std::chrono::nanoseconds limit, std::error_code& ec) {
  limit = std::max(limit, std::chrono::nanoseconds::zero());
  const int fd = connection_->native_handle();
  if (fd < 0) return poll(std::chrono::ceil<std::chrono::microseconds>(limit));
  // A client's connection has its socket to itself: the wait is on the
  // socket, a millisecond at a time, each followed by a look that lets the
  // library take what came (the library's own blocking waits spin through
  // their last millisecond: QuicStream::readable_within).
  constexpr auto kSlice = std::chrono::milliseconds(1);
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (poll(std::chrono::microseconds::zero())) return true;
    const auto left = until - std::chrono::steady_clock::now();
    if (left.count() <= 0) return false;
    readable_fd_within(fd, std::min<std::chrono::nanoseconds>(left, kSlice), ec);
    ec.clear();  // the look that follows says what the socket has
  }
}

void QuicGroup::read(const Take& take, std::error_code& ec) {
  if (!fresh_) poll(std::chrono::microseconds::zero());
  fresh_ = false;
  if (incoming_) {
    take_new();
    poll(std::chrono::microseconds::zero());  // the new streams' bytes too
    fresh_ = false;
  }
  for (const std::int64_t id : ready_) {
    const auto it = streams_.find(id);
    if (it == streams_.end() || !it->second.reading) continue;
    SSL* s = it->second.ssl;
    for (;;) {
      std::size_t n = 0;
      const int ok = SSL_read_ex(s, buffer_.data(), buffer_.size(), &n);
      if (ok == 1) {
        take(id, {buffer_.data(), n}, false);
        continue;
      }
      const int error = SSL_get_error(s, ok);
      if (error == SSL_ERROR_WANT_READ) {
        ERR_clear_error();
        break;
      }
      if (error == SSL_ERROR_ZERO_RETURN) {
        ERR_clear_error();
        it->second.reading = false;
        take(id, {}, true);
        break;
      }
      ec = failure(s, ok);
      return;
    }
  }
}

}  // namespace

std::unique_ptr<StreamGroup> QuicStream::stream_group() {
  if (!connection_) return nullptr;  // a connection's default stream: its streams are taken apart
  // The peer's streams are queued for the group, not refused.
  SSL_set_incoming_stream_policy(connection_->ssl(), SSL_INCOMING_STREAM_POLICY_ACCEPT, 0);
  ERR_clear_error();
  return std::make_unique<QuicGroup>(connection_, connection_->ssl(), ssl(), watch_);
}

#else  // no QUIC in this build

std::unique_ptr<StreamGroup> QuicStream::stream_group() {
  detail::refuse_quic();
}

#endif

}  // namespace tlscmp::stacks
