// The TLS stream over GnuTLS: gnutls_session_t on a TCP socket, through
// push and pull functions of our own (writev/read, counting the record bytes
// each way, as OpenSSL's socket BIO counts them).

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"
#include "transport/errors.hpp"

namespace tlscmp::tls::gnutls {
namespace {

class GnutlsStream final : public TlsStream {
 public:
  GnutlsStream(UniqueFd fd, gnutls_session_t session, bool server, std::string trust, bool offered_ticket,
               std::shared_ptr<void> keep)
      : TlsStream(std::move(fd)),
        keep_(std::move(keep)),
        session_(session),
        server_(server),
        offered_ticket_(offered_ticket),
        trust_(std::move(trust)) {
    gnutls_transport_set_ptr(session_, this);
    gnutls_transport_set_vec_push_function(session_, push);
    gnutls_transport_set_pull_function(session_, pull);
    gnutls_transport_set_pull_timeout_function(session_, pull_timeout);
  }
  ~GnutlsStream() override { gnutls_deinit(session_); }

  std::error_code handshake() override;
  SessionInfo session_info() const override;
  VerifyFailure verify_failure() const override;
  void set_trust_description(std::string text) override { trust_ = std::move(text); }
  bool certificate_requested() const override {
    return !server_ && gnutls_certificate_client_get_request_status(session_) != 0;
  }
  Session session() const override;
  bool has_new_session() const override {
    return !resumed() || (gnutls_session_get_flags(session_) & GNUTLS_SFLAGS_SESSION_TICKET) != 0;
  }
  void set_max_record_size(std::size_t bytes) override {
    check(static_cast<int>(gnutls_record_set_max_size(session_, bytes)), "--record-size under GnuTLS");
  }
  void count_hellos() override {
    gnutls_handshake_set_hook_function(session_, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_POST, watch_hellos);
  }
  bool resumed() const override { return gnutls_session_is_resumed(session_) != 0; }
  const char* resumed_by() const override;
  std::uint64_t bytes_read() const override { return bytes_read_; }
  std::uint64_t bytes_written() const override { return bytes_written_; }
  // GnuTLS allocates each record's buffer as it goes: nothing to release.
  void release_buffers() override {}
  void use_library_buffers() override {}
  void send_close_notify(std::error_code& ec) override;

  std::size_t read_some(std::span<std::byte> buf, std::error_code& ec) override;
  std::size_t write_some(std::span<const std::byte> buf, std::error_code& ec) override;
  void shutdown_send(std::error_code& ec) override;
  bool has_buffered() const override { return gnutls_record_check_pending(session_) > 0; }

 private:
  static ssize_t push(gnutls_transport_ptr_t self, const giovec_t* iov, int count);
  static ssize_t pull(gnutls_transport_ptr_t self, void* data, std::size_t size);
  static int pull_timeout(gnutls_transport_ptr_t self, unsigned int ms);
  // A send or recv's result `n` for GnuTLS: the bytes, added to `bytes`; or
  // -1, with its errno kept and handed to GnuTLS.
  ssize_t counted(ssize_t n, std::uint64_t& bytes);
  static int watch_hellos(gnutls_session_t session, unsigned int type, unsigned when, unsigned int incoming,
                          const gnutls_datum_t* message);
  // A failed call's result as an error; {} where it waited and the call should go again.
  std::error_code failure(int ret);
  // `n` > 0 bytes a call moved, counted against the minimum rate.
  std::size_t moved(ssize_t n, std::error_code& ec);
  std::string explain_verify_failure() const;

  std::shared_ptr<void> keep_;  // what the session points to: it goes after the session
  gnutls_session_t session_;
  bool server_;
  bool offered_ticket_;  // a client's: the session it offered came with a ticket
  std::string trust_;
  int last_errno_ = 0;  // of the last push or pull that failed
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint32_t client_hello_bytes_ = 0;
  std::uint32_t server_hello_bytes_ = 0;
};

ssize_t GnutlsStream::push(gnutls_transport_ptr_t self, const giovec_t* iov, int count) {
  auto* stream = static_cast<GnutlsStream*>(self);
  // writev and read, as OpenSSL's socket BIO writes and reads: the run's
  // count of each side's system calls (/proc/thread-self/io) sees them.
  return stream->counted(::writev(stream->native_handle(), reinterpret_cast<const iovec*>(iov), count),
                         stream->bytes_written_);
}

ssize_t GnutlsStream::pull(gnutls_transport_ptr_t self, void* data, std::size_t size) {
  auto* stream = static_cast<GnutlsStream*>(self);
  return stream->counted(::read(stream->native_handle(), data, size), stream->bytes_read_);
}

ssize_t GnutlsStream::counted(ssize_t n, std::uint64_t& bytes) {
  if (n < 0) {
    last_errno_ = errno;
    gnutls_transport_set_errno(session_, errno);
    return -1;
  }
  bytes += static_cast<std::uint64_t>(n);
  return n;
}

int GnutlsStream::pull_timeout(gnutls_transport_ptr_t self, unsigned int ms) {
  auto* stream = static_cast<GnutlsStream*>(self);
  pollfd p{stream->native_handle(), POLLIN, 0};
  const int timeout = ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : static_cast<int>(ms);
  return ::poll(&p, 1, timeout);
}

int GnutlsStream::watch_hellos(gnutls_session_t session, unsigned int type, unsigned, unsigned int,
                               const gnutls_datum_t* message) {
  auto* stream = static_cast<GnutlsStream*>(gnutls_transport_get_ptr(session));
  const auto bytes = static_cast<std::uint32_t>(message->size + 4);  // the message header too
  if (type == GNUTLS_HANDSHAKE_CLIENT_HELLO) stream->client_hello_bytes_ += bytes;
  if (type == GNUTLS_HANDSHAKE_SERVER_HELLO) stream->server_hello_bytes_ += bytes;
  return 0;
}

std::error_code GnutlsStream::failure(int ret) {
  switch (ret) {
    case GNUTLS_E_AGAIN:
    case GNUTLS_E_INTERRUPTED:
      return wait_ready(gnutls_record_get_direction(session_) == 0 ? POLLIN : POLLOUT);
    case GNUTLS_E_PREMATURE_TERMINATION:
      return TransportErrc::truncated;
    case GNUTLS_E_PUSH_ERROR:
    case GNUTLS_E_PULL_ERROR:
      if (last_errno_ == ECONNRESET || last_errno_ == EPIPE) return TransportErrc::reset;
      return {last_errno_ != 0 ? last_errno_ : EIO, std::system_category()};
    case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
      error_detail_ = explain_verify_failure();
      return TransportErrc::tls_failure;
    default:
      error_detail_ = gnutls_strerror(ret);
      if (ret == GNUTLS_E_FATAL_ALERT_RECEIVED || ret == GNUTLS_E_WARNING_ALERT_RECEIVED)
        error_detail_ += fmt::format(" ({})", gnutls_alert_get_name(gnutls_alert_get(session_)));
      return TransportErrc::tls_failure;
  }
}

std::error_code GnutlsStream::handshake() {
  for (;;) {
    const int ret = gnutls_handshake(session_);
    if (ret == GNUTLS_E_SUCCESS) {
      gnutls_handshake_set_hook_function(session_, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_POST, nullptr);
      return {};
    }
    if (gnutls_error_is_fatal(ret) == 0 && ret != GNUTLS_E_AGAIN && ret != GNUTLS_E_INTERRUPTED) continue;
    if (const std::error_code ec = failure(ret)) {
      if (ec == TransportErrc::eof || ec == TransportErrc::truncated) {
        error_detail_ = "the peer closed the connection during the handshake";
        return TransportErrc::tls_failure;
      }
      return ec;
    }
  }
}

std::size_t GnutlsStream::moved(ssize_t n, std::error_code& ec) {
  if (!progressed(static_cast<std::size_t>(n))) {
    ec = TransportErrc::too_slow;
    return 0;
  }
  return static_cast<std::size_t>(n);
}

std::size_t GnutlsStream::read_some(std::span<std::byte> buf, std::error_code& ec) {
  for (;;) {
    const ssize_t n = gnutls_record_recv(session_, buf.data(), buf.size());
    if (n > 0) return moved(n, ec);
    if (n == 0) {
      ec = TransportErrc::eof;
      return 0;
    }
    if (gnutls_error_is_fatal(static_cast<int>(n)) == 0 && n != GNUTLS_E_AGAIN && n != GNUTLS_E_INTERRUPTED)
      continue;  // a post-handshake message (a TLS 1.3 ticket), a warning
    if ((ec = failure(static_cast<int>(n)))) return 0;
  }
}

std::size_t GnutlsStream::write_some(std::span<const std::byte> buf, std::error_code& ec) {
  for (;;) {
    const ssize_t n = gnutls_record_send(session_, buf.data(), buf.size());
    if (n > 0) return moved(n, ec);
    if ((ec = failure(static_cast<int>(n)))) return 0;
  }
}

void GnutlsStream::send_close_notify(std::error_code& ec) {
  for (;;) {
    const int ret = gnutls_bye(session_, GNUTLS_SHUT_WR);
    if (ret == GNUTLS_E_SUCCESS) return;
    if ((ec = failure(ret))) return;
  }
}

void GnutlsStream::shutdown_send(std::error_code& ec) {
  send_close_notify(ec);
  if (ec) return;
  if (::shutdown(native_handle(), SHUT_WR) != 0) ec = {errno, std::system_category()};
}

std::string certificate_key(const gnutls_datum_t* der) {
  if (der == nullptr || der->size == 0) return {};
  try {
    return key_description(der_certificate(*der).get());
  } catch (const Error&) {
    return {};
  }
}

SessionInfo GnutlsStream::session_info() const {
  SessionInfo info = session_facts(session_, server_);
  info.bytes_read = bytes_read_;
  info.bytes_written = bytes_written_;
  info.client_hello_bytes = client_hello_bytes_;
  info.server_hello_bytes = server_hello_bytes_;
  return info;
}

const char* GnutlsStream::resumed_by() const {
  if (!resumed()) return "";
  if (gnutls_protocol_get_version(session_) == GNUTLS_TLS1_3) return "ticket";
  if (!server_) return offered_ticket_ ? "ticket" : "session id";
  return (gnutls_session_get_flags(session_) & GNUTLS_SFLAGS_SESSION_TICKET) != 0 ? "ticket" : "session id";
}

Session GnutlsStream::session() const {
  return saved_session(session_, offered_ticket_);
}

VerifyFailure GnutlsStream::verify_failure() const {
  return verify_failure_of(session_);
}

std::string GnutlsStream::explain_verify_failure() const {
  if (std::string text = verify_failure_text(verify_failure(), trust_); !text.empty()) return text;
  gnutls_datum_t text{};
  if (gnutls_certificate_verification_status_print(gnutls_session_get_verify_cert_status(session_),
                                                   GNUTLS_CRT_X509, &text, 0) < 0)
    return "certificate verification failed";
  std::string out = fmt::format("certificate verification failed: {}", reinterpret_cast<char*>(text.data));
  gnutls_free(text.data);
  return out;
}

}  // namespace

VerifyFailure verify_failure_of(gnutls_session_t session) {
  const unsigned status = gnutls_session_get_verify_cert_status(session);
  if (status == 0) return VerifyFailure::none;
  if ((status & GNUTLS_CERT_EXPIRED) != 0) return VerifyFailure::expired;
  if ((status & GNUTLS_CERT_NOT_ACTIVATED) != 0) return VerifyFailure::not_yet_valid;
  if ((status & GNUTLS_CERT_UNEXPECTED_OWNER) != 0) return VerifyFailure::name_mismatch;
  if ((status & (GNUTLS_CERT_SIGNER_NOT_FOUND | GNUTLS_CERT_SIGNATURE_FAILURE)) != 0)
    return VerifyFailure::untrusted;
  return VerifyFailure::other;
}

SessionInfo session_facts(gnutls_session_t session, bool server) {
  SessionInfo info;
  const gnutls_protocol_t version = gnutls_protocol_get_version(session);
  info.version = version == GNUTLS_TLS1_3 ? "TLSv1.3" : version == GNUTLS_TLS1_2 ? "TLSv1.2" : "?";
  info.cipher = suite_name(session);
  info.group = group_name(gnutls_group_get(session));
  unsigned peers = 0;
  const gnutls_datum_t* peer = gnutls_certificate_get_peers(session, &peers);
  const std::string peer_key = certificate_key(peers > 0 ? peer : nullptr);
  const std::string own_key = certificate_key(gnutls_certificate_get_ours(session));
  info.certificate_key_type = server ? own_key : peer_key;
  info.client_certificate_key_type = server ? peer_key : own_key;
  info.resumed = gnutls_session_is_resumed(session) != 0;
  gnutls_datum_t alpn{};
  if (gnutls_alpn_get_selected_protocol(session, &alpn) == GNUTLS_E_SUCCESS)
    info.alpn.assign(reinterpret_cast<const char*>(alpn.data), alpn.size);
  return info;
}

Session saved_session(gnutls_session_t session, bool offered_ticket) {
  const bool ticket = (gnutls_session_get_flags(session) & GNUTLS_SFLAGS_SESSION_TICKET) != 0;
  if (gnutls_protocol_get_version(session) == GNUTLS_TLS1_3 && !ticket) return {};
  gnutls_datum_t data{};
  if (gnutls_session_get_data2(session, &data) < 0) return {};
  auto held = std::make_shared<SavedSession>();
  held->data.assign(data.data, data.data + data.size);
  held->ticket = ticket || (gnutls_session_is_resumed(session) != 0 && offered_ticket);
  gnutls_free(data.data);
  return Session(std::move(held));
}

std::unique_ptr<TlsStream> make_stream(UniqueFd fd, gnutls_session_t session, bool server, std::string trust,
                                       const SavedSession* offered, std::shared_ptr<void> keep) {
  return std::make_unique<GnutlsStream>(std::move(fd), session, server, std::move(trust),
                                        offered != nullptr && offered->ticket, std::move(keep));
}

}  // namespace tlscmp::tls::gnutls
