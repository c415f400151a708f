#include "tls/ssl_stream.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>

#include "tls/ossl_ptr.hpp"
#include "tls/ssl_compat.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls {
namespace {

int clamp_len(std::size_t n) {
  return n > INT_MAX ? INT_MAX : static_cast<int>(n);
}

// The message callback of count_hellos(): whole handshake messages, each
// starting with its one-byte type.
void watch_handshake(int /*write_p*/, int /*version*/, int content_type, const void* buf, std::size_t len,
                     SSL* ssl, void* /*arg*/) {
  if (content_type != SSL3_RT_HANDSHAKE || len == 0) return;
  auto* owner = static_cast<ConnectionEvents*>(SSL_get_app_data(ssl));
  owner->note_handshake_message(static_cast<const unsigned char*>(buf)[0], len);
}

// What kind of failure an X509_V_ERR_* code is.
VerifyFailure classify_verify_result(long verify) {
  switch (verify) {
    case X509_V_OK:
      return VerifyFailure::none;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return VerifyFailure::name_mismatch;
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return VerifyFailure::expired;
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return VerifyFailure::not_yet_valid;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return VerifyFailure::untrusted;
    default:
      return VerifyFailure::other;
  }
}

}  // namespace

SslStream::SslStream(UniqueFd fd, ssl_st* ssl) : TlsStream(std::move(fd)), ssl_(ssl) {
  SSL_set_app_data(ssl_, static_cast<ConnectionEvents*>(this));  // for the contexts' callbacks
}

SslStream::~SslStream() {
  free_ssl();
}

void SslStream::free_ssl() {
  SSL_free(ssl_);
  ssl_ = nullptr;
}

std::error_code SslStream::wait_for(short events) {
  return wait_ready(events);
}

std::error_code SslStream::handle_failure(int ret) {
  const int err = SSL_get_error(ssl_, ret);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      return wait_for(POLLIN);
    case SSL_ERROR_WANT_WRITE:
      return wait_for(POLLOUT);
    case SSL_ERROR_ZERO_RETURN:
      return TransportErrc::eof;
    case SSL_ERROR_SYSCALL: {
      const int saved_errno = errno;
      const bool queue_empty = ERR_peek_error() == 0;
      ERR_clear_error();
      if (queue_empty && (ret == 0 || saved_errno == 0)) return TransportErrc::truncated;
      if (saved_errno == ECONNRESET || saved_errno == EPIPE) return TransportErrc::reset;
      if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK) return TransportErrc::timeout;
      return {saved_errno != 0 ? saved_errno : EIO, std::system_category()};
    }
    case SSL_ERROR_SSL: {
      if (compat::is_unexpected_eof(ERR_peek_error())) {
        ERR_clear_error();
        return TransportErrc::truncated;
      }
      error_detail_ = take_error_reason();
      // Blame the certificate only where it was checked and found wanting.
      const long verify = compat::verify_result(ssl_);
      if ((SSL_get_verify_mode(ssl_) & SSL_VERIFY_PEER) != 0 && verify != X509_V_OK) {
        error_detail_ = explain_verify_failure(verify);
      }
      return TransportErrc::tls_failure;
    }
    default:
      error_detail_ = take_error_reason();
      return TransportErrc::tls_failure;
  }
}

void SslStream::release_buffers() {
  SSL_set_mode(ssl_, SSL_MODE_RELEASE_BUFFERS);
}

void SslStream::use_library_buffers() {
  compat::use_library_buffers(ssl_);
}

void SslStream::count_hellos() {
  SSL_set_msg_callback(ssl_, watch_handshake);
}

void SslStream::note_handshake_message(unsigned type, std::size_t bytes) {
  const auto counted = static_cast<std::uint32_t>(std::min<std::size_t>(bytes, UINT32_MAX));
  if (type == SSL3_MT_CLIENT_HELLO) client_hello_bytes_ += counted;
  if (type == SSL3_MT_SERVER_HELLO) server_hello_bytes_ += counted;
}

std::error_code SslStream::handshake() {
  for (;;) {
    const int ret = SSL_do_handshake(ssl_);
    if (ret == 1) {
      SSL_set_msg_callback(ssl_, nullptr);
      return {};
    }
    if (auto ec = handle_failure(ret)) {
      if (ec == TransportErrc::eof || ec == TransportErrc::truncated) {
        error_detail_ = "the peer closed the connection during the handshake";
        return TransportErrc::tls_failure;
      }
      return ec;
    }
  }
}

SessionInfo SslStream::session_info() const {
  SessionInfo info;
  SSL* ssl = tls_ssl();  // a QUIC stream's session is its connection's
  info.version = SSL_get_version(ssl);
  if (const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl)) info.cipher = SSL_CIPHER_get_name(cipher);
  info.group = compat::negotiated_group(ssl);
  const bool server = SSL_is_server(ssl) != 0;
  const compat::OwnedX509 peer = compat::peer_certificate(ssl);
  X509* own = SSL_get_certificate(ssl);
  info.certificate_key_type = compat::certificate_key_type(server ? own : peer.get());
  info.client_certificate_key_type = compat::certificate_key_type(server ? peer.get() : own);
  info.resumed = SSL_session_reused(ssl) != 0;
  const unsigned char* alpn = nullptr;
  unsigned alpn_bytes = 0;
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_bytes);
  if (alpn != nullptr) info.alpn.assign(reinterpret_cast<const char*>(alpn), alpn_bytes);
  info.ktls_send = compat::ktls_send(ssl);
  info.ktls_receive = compat::ktls_receive(ssl);
  info.bytes_read = BIO_number_read(SSL_get_rbio(ssl));
  info.bytes_written = BIO_number_written(SSL_get_wbio(ssl));
  info.client_hello_bytes = client_hello_bytes_;
  info.server_hello_bytes = server_hello_bytes_;
  return info;
}

Session adopt_session(ssl_session_st* session) {
  if (session == nullptr) return {};
  return Session(
      std::shared_ptr<void>(session, [](void* p) { SSL_SESSION_free(static_cast<SSL_SESSION*>(p)); }));
}

Session SslStream::session() const {
  // In TLS 1.3 a session is resumable only once a ticket arrived, which the
  // new-session callback reports; SSL_get1_session is what TLS 1.2 has.
  return latest_session_ ? latest_session_ : adopt_session(SSL_get1_session(tls_ssl()));
}

bool SslStream::certificate_requested() const {
  return certificate_requested_;
}

void SslStream::set_max_record_size(std::size_t bytes) {
  compat::set_max_send_fragment(ssl_, bytes);
}

VerifyFailure SslStream::verify_failure() const {
  if ((SSL_get_verify_mode(tls_ssl()) & SSL_VERIFY_PEER) == 0) return VerifyFailure::none;
  return classify_verify_result(compat::verify_result(tls_ssl()));
}

std::string SslStream::explain_verify_failure(long verify) const {
  const VerifyDetail& d = verify_detail_;
  const std::string which = d.error == 0 || d.depth == 0
                                ? std::string("the server's certificate")
                                : fmt::format("the certificate '{}' in the server's chain", d.subject);
  switch (classify_verify_result(verify)) {
    case VerifyFailure::expired:
      return fmt::format("{} expired on {} (it was valid from {}): the server needs a new one", which,
                         d.not_after, d.not_before);
    case VerifyFailure::not_yet_valid:
      return fmt::format("{} is not valid until {}: check the clocks of both hosts", which, d.not_before);
    case VerifyFailure::untrusted:
      return fmt::format(
          "the server's chain does not lead to {} (the certificate '{}' in it is issued by '{}')",
          trust_.empty() ? "a trusted CA" : trust_, d.subject, d.issuer);
    default:
      return fmt::format("certificate verification failed: {}", X509_verify_cert_error_string(verify));
  }
}

std::size_t SslStream::moved(int n, std::error_code& ec) {
  if (n <= 0) {
    ec = handle_failure(n);
    return 0;
  }
  if (!progressed(static_cast<std::size_t>(n))) {
    ec = TransportErrc::too_slow;
    return 0;
  }
  return static_cast<std::size_t>(n);
}

std::size_t SslStream::read_some(std::span<std::byte> buf, std::error_code& ec) {
  return retry_io([&] { return SSL_read(ssl_, buf.data(), clamp_len(buf.size())); }, ec);
}

std::size_t SslStream::write_some(std::span<const std::byte> buf, std::error_code& ec) {
  return retry_io([&] { return SSL_write(ssl_, buf.data(), clamp_len(buf.size())); }, ec);
}

void SslStream::send_close_notify(std::error_code& ec) {
  for (;;) {
    // 0: our close_notify is out; we do not wait for the peer's.
    const int ret = SSL_shutdown(ssl_);
    if (ret >= 0) return;
    if ((ec = handle_failure(ret))) return;
  }
}

void SslStream::shutdown_send(std::error_code& ec) {
  send_close_notify(ec);
  if (ec) return;
  if (::shutdown(native_handle(), SHUT_WR) != 0) ec = {errno, std::system_category()};
}

bool SslStream::resumed() const {
  return SSL_session_reused(tls_ssl()) != 0;
}

const char* SslStream::resumed_by() const {
  if (!resumed()) return "";
  // TLS 1.3 resumes from a ticket (a PSK) only; TLS 1.2 from a ticket when
  // the session offered had one, else from the server's session cache.
  if (SSL_version(tls_ssl()) >= TLS1_3_VERSION) return "ticket";
  const SSL_SESSION* session = SSL_get_session(tls_ssl());
  return session != nullptr && SSL_SESSION_has_ticket(session) != 0 ? "ticket" : "session id";
}

std::uint64_t SslStream::bytes_read() const {
  return BIO_number_read(SSL_get_rbio(tls_ssl()));
}

std::uint64_t SslStream::bytes_written() const {
  return BIO_number_written(SSL_get_wbio(tls_ssl()));
}

bool SslStream::has_buffered() const {
  return SSL_has_pending(ssl_) == 1;
}

}  // namespace tlscmp::tls
