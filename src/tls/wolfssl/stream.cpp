// The TLS stream over wolfSSL: a WOLFSSL on a TCP socket, through I/O
// callbacks of our own (read/write, counting the record bytes each way, as
// OpenSSL's socket BIO counts them).

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wolfssl/error-ssl.h>
#include <wolfssl/wolfcrypt/error-crypt.h>

#include <cerrno>
#include <climits>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"
#include "transport/errors.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

// TLS handshake message types, as the message callback sees them.
constexpr int kHandshakeContent = 22;
constexpr unsigned char kClientHello = 1;
constexpr unsigned char kServerHello = 2;
constexpr unsigned char kCertificateRequest = 13;

// The bytes one way of a handshake, up to the first record that is not a
// plaintext handshake record (ChangeCipherSpec, or an encrypted one): the
// hello messages, whose sizes it adds up.
class HelloLog {
 public:
  void log(const char* data, ssize_t n) {
    if (bytes_.size() < kMost) bytes_.append(data, static_cast<std::size_t>(n));
  }
  // The bytes of the handshake messages of `type` (their 4-byte header
  // included, the records' not), as tls_stream.hpp counts them.
  std::uint32_t message_bytes(unsigned char type) const {
    std::string messages;  // the plaintext handshake records' payloads, joined
    for (std::size_t at = 0; at + 5 <= bytes_.size();) {
      const auto length = static_cast<std::size_t>(byte(at + 3) << 8 | byte(at + 4));
      if (byte(at) != kHandshakeContent || at + 5 + length > bytes_.size()) break;
      messages.append(bytes_, at + 5, length);
      at += 5 + length;
    }
    std::uint32_t total = 0;
    for (std::size_t at = 0; at + 4 <= messages.size();) {
      const std::size_t length = static_cast<std::size_t>(static_cast<unsigned char>(messages[at + 1]) << 16 |
                                                          static_cast<unsigned char>(messages[at + 2]) << 8 |
                                                          static_cast<unsigned char>(messages[at + 3]));
      if (static_cast<unsigned char>(messages[at]) == type) total += static_cast<std::uint32_t>(length + 4);
      at += 4 + length;
    }
    return total;
  }

 private:
  static constexpr std::size_t kMost = 64 * 1024;
  unsigned byte(std::size_t at) const { return static_cast<unsigned char>(bytes_[at]); }
  std::string bytes_;
};

}  // namespace

bool is_verify_error(int error) {
  switch (error) {
    case ASN_AFTER_DATE_E:
    case ASN_BEFORE_DATE_E:
    case ASN_NO_SIGNER_E:
    case ASN_SIG_CONFIRM_E:
    case ASN_SELF_SIGNED_E:
    case DOMAIN_NAME_MISMATCH:
    case IPADDR_MISMATCH:
    case VERIFY_CERT_ERROR:
      return true;
    default:
      return false;
  }
}

VerifyFailure verify_failure_of(int error) {
  switch (error) {
    case 0:
      return VerifyFailure::none;
    case ASN_AFTER_DATE_E:
      return VerifyFailure::expired;
    case ASN_BEFORE_DATE_E:
      return VerifyFailure::not_yet_valid;
    case DOMAIN_NAME_MISMATCH:
    case IPADDR_MISMATCH:
      return VerifyFailure::name_mismatch;
    case ASN_NO_SIGNER_E:
    case ASN_SIG_CONFIRM_E:
    case ASN_SELF_SIGNED_E:
      return VerifyFailure::untrusted;
    default:
      return VerifyFailure::other;
  }
}

std::string verify_failure_detail(int error, const std::string& trust) {
  if (std::string text = verify_failure_text(verify_failure_of(error), trust); !text.empty()) return text;
  return fmt::format("certificate verification failed: {}", reason(error));
}

namespace {

class WolfsslStream final : public TlsStream {
 public:
  WolfsslStream(UniqueFd fd, WOLFSSL* ssl, bool server, std::string trust, bool offered_ticket)
      : TlsStream(std::move(fd)),
        ssl_(ssl),
        server_(server),
        offered_ticket_(offered_ticket),
        trust_(std::move(trust)) {
    wolfSSL_SSLSetIORecv(ssl_, receive);
    wolfSSL_SSLSetIOSend(ssl_, send);
    wolfSSL_SetIOReadCtx(ssl_, this);
    wolfSSL_SetIOWriteCtx(ssl_, this);
    // The handshake's messages, for a client's CertificateRequest (and the hellos, where counted).
    wolfSSL_set_msg_callback_arg(ssl_, this);
    if (!server_) wolfSSL_set_msg_callback(ssl_, watch_messages);
  }
  ~WolfsslStream() override { wolfSSL_free(ssl_); }
  WolfsslStream(const WolfsslStream&) = delete;
  WolfsslStream& operator=(const WolfsslStream&) = delete;

  std::error_code handshake() override;
  SessionInfo session_info() const override;
  VerifyFailure verify_failure() const override;
  void set_trust_description(std::string text) override { trust_ = std::move(text); }
  bool certificate_requested() const override { return certificate_requested_; }
  Session session() const override { return saved_session(ssl_, offered_ticket_); }
  bool has_new_session() const override;
  void set_max_record_size(std::size_t bytes) override {
    throw Error(fmt::format(
        "--record-size {}: wolfSSL caps its records only by negotiating max_fragment_length (512 to 4096 "
        "bytes, both ways), not at a size of its own; leave --record-size out for wolfssl",
        bytes));
  }
  // wolfSSL calls no message callback for TLS 1.3's hellos: the hello
  // messages are read from the plaintext records each way instead.
  void count_hellos() override { count_hellos_ = true; }
  bool resumed() const override { return wolfSSL_session_reused(ssl_) != 0; }
  const char* resumed_by() const override;
  std::uint64_t bytes_read() const override { return bytes_read_; }
  std::uint64_t bytes_written() const override { return bytes_written_; }
  // wolfSSL gives each record's large buffer back as it goes: nothing to release.
  void release_buffers() override {}
  void use_library_buffers() override {}
  void send_close_notify(std::error_code& ec) override;

  std::size_t read_some(std::span<std::byte> buf, std::error_code& ec) override;
  std::size_t write_some(std::span<const std::byte> buf, std::error_code& ec) override;
  void shutdown_send(std::error_code& ec) override;
  bool has_buffered() const override { return wolfSSL_pending(ssl_) > 0 || wolfSSL_has_pending(ssl_) != 0; }

 private:
  static int receive(WOLFSSL* ssl, char* buf, int size, void* self);
  static int send(WOLFSSL* ssl, char* buf, int size, void* self);
  // A send or recv's result for wolfSSL: the bytes, added to `bytes`; or an
  // I/O callback's error, with errno kept.
  int counted(ssize_t n, std::uint64_t& bytes);
  static void watch_messages(int write_p, int version, int content_type, const void* buf, std::size_t len,
                             WOLFSSL* ssl, void* self);
  // A failed call's result `ret` as an error; {} where it waited and the call should go again.
  std::error_code failure(int ret);
  std::size_t moved(int n, std::error_code& ec);
  std::string explain_verify_failure() const;

  WOLFSSL* ssl_;
  bool server_;
  bool offered_ticket_;  // a client's: the session it offered came with a ticket
  std::string trust_;
  int last_errno_ = 0;        // of the last send or recv that failed
  bool peer_closed_ = false;  // recv saw the peer's FIN
  int verify_error_ = 0;      // the error that failed the handshake's certificate check
  bool count_hellos_ = false;
  HelloLog sent_;  // with count_hellos(): the handshake's plaintext records each way
  HelloLog received_;
  bool certificate_requested_ = false;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint32_t client_hello_bytes_ = 0;
  std::uint32_t server_hello_bytes_ = 0;
};

int WolfsslStream::receive(WOLFSSL*, char* buf, int size, void* self) {
  auto* stream = static_cast<WolfsslStream*>(self);
  // read and write, as OpenSSL's socket BIO reads and writes: the run's
  // count of each side's system calls (/proc/thread-self/io) sees them.
  const ssize_t n = ::read(stream->native_handle(), buf, static_cast<std::size_t>(size));
  if (n == 0) {
    stream->peer_closed_ = true;
    return WOLFSSL_CBIO_ERR_CONN_CLOSE;
  }
  if (n > 0 && stream->count_hellos_) stream->received_.log(buf, n);
  return stream->counted(n, stream->bytes_read_);
}

int WolfsslStream::send(WOLFSSL*, char* buf, int size, void* self) {
  auto* stream = static_cast<WolfsslStream*>(self);
  const ssize_t n = ::write(stream->native_handle(), buf, static_cast<std::size_t>(size));
  if (n > 0 && stream->count_hellos_) stream->sent_.log(buf, n);
  return stream->counted(n, stream->bytes_written_);
}

int WolfsslStream::counted(ssize_t n, std::uint64_t& bytes) {
  if (n >= 0) {
    bytes += static_cast<std::uint64_t>(n);
    return static_cast<int>(n);
  }
  last_errno_ = errno;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return WOLFSSL_CBIO_ERR_WANT_READ;  // the same as WANT_WRITE
  if (errno == EINTR) return WOLFSSL_CBIO_ERR_ISR;
  if (errno == ECONNRESET || errno == EPIPE) return WOLFSSL_CBIO_ERR_CONN_RST;
  return WOLFSSL_CBIO_ERR_GENERAL;
}

void WolfsslStream::watch_messages(int write_p, int, int content_type, const void* buf, std::size_t len,
                                   WOLFSSL*, void* self) {
  if (content_type != kHandshakeContent || len == 0) return;
  auto* stream = static_cast<WolfsslStream*>(self);
  const unsigned char type = *static_cast<const unsigned char*>(buf);
  if (type == kCertificateRequest && write_p == 0) stream->certificate_requested_ = true;
}

std::error_code WolfsslStream::failure(int ret) {
  const int error = wolfSSL_get_error(ssl_, ret);
  switch (error) {
    case WOLFSSL_ERROR_WANT_READ:
      return wait_ready(POLLIN);
    case WOLFSSL_ERROR_WANT_WRITE:
      return wait_ready(POLLOUT);
    case WOLFSSL_ERROR_ZERO_RETURN:
      return TransportErrc::eof;
    case WOLFSSL_ERROR_SYSCALL:
    case SOCKET_PEER_CLOSED_E:
    case SOCKET_ERROR_E:
      if (peer_closed_) return TransportErrc::truncated;
      if (last_errno_ == ECONNRESET || last_errno_ == EPIPE) return TransportErrc::reset;
      return {last_errno_ != 0 ? last_errno_ : EIO, std::system_category()};
    default:
      if (is_verify_error(error)) {
        verify_error_ = error;
        error_detail_ = explain_verify_failure();
      } else {
        error_detail_ = reason(error);
      }
      return TransportErrc::tls_failure;
  }
}

std::error_code WolfsslStream::handshake() {
  on_this_thread();
  for (;;) {
    const int ret = server_ ? wolfSSL_accept(ssl_) : wolfSSL_connect(ssl_);
    if (ret == WOLFSSL_SUCCESS) {
      wolfSSL_set_msg_callback(ssl_, nullptr);
      if (count_hellos_) {
        count_hellos_ = false;
        for (const HelloLog* log : {&sent_, &received_}) {
          client_hello_bytes_ += log->message_bytes(kClientHello);
          server_hello_bytes_ += log->message_bytes(kServerHello);
        }
        sent_ = {};
        received_ = {};
      }
      return {};
    }
    if (const std::error_code ec = failure(ret)) {
      if (ec == TransportErrc::eof || ec == TransportErrc::truncated) {
        error_detail_ = "the peer closed the connection during the handshake";
        return TransportErrc::tls_failure;
      }
      return ec;
    }
  }
}

std::size_t WolfsslStream::moved(int n, std::error_code& ec) {
  if (!progressed(static_cast<std::size_t>(n))) {
    ec = TransportErrc::too_slow;
    return 0;
  }
  return static_cast<std::size_t>(n);
}

std::size_t WolfsslStream::read_some(std::span<std::byte> buf, std::error_code& ec) {
  const int size = static_cast<int>(std::min<std::size_t>(buf.size(), INT_MAX));
  for (;;) {
    const int n = wolfSSL_read(ssl_, buf.data(), size);
    if (n > 0) return moved(n, ec);
    if ((ec = failure(n))) return 0;
  }
}

std::size_t WolfsslStream::write_some(std::span<const std::byte> buf, std::error_code& ec) {
  const int size = static_cast<int>(std::min<std::size_t>(buf.size(), INT_MAX / 2));
  for (;;) {
    const int n = wolfSSL_write(ssl_, buf.data(), size);
    if (n > 0) return moved(n, ec);
    if ((ec = failure(n))) return 0;
  }
}

void WolfsslStream::send_close_notify(std::error_code& ec) {
  for (;;) {
    const int ret = wolfSSL_shutdown(ssl_);
    if (ret == WOLFSSL_SUCCESS || ret == WOLFSSL_SHUTDOWN_NOT_DONE) return;
    if ((ec = failure(ret))) return;
  }
}

void WolfsslStream::shutdown_send(std::error_code& ec) {
  send_close_notify(ec);
  if (ec) return;
  if (::shutdown(native_handle(), SHUT_WR) != 0) ec = {errno, std::system_category()};
}

SessionInfo WolfsslStream::session_info() const {
  SessionInfo info = session_facts(ssl_, server_);
  info.bytes_read = bytes_read_;
  info.bytes_written = bytes_written_;
  info.client_hello_bytes = client_hello_bytes_;
  info.server_hello_bytes = server_hello_bytes_;
  return info;
}

bool has_ticket(WOLFSSL* ssl) {
  const WOLFSSL_SESSION* session = wolfSSL_get_session(ssl);
  return session != nullptr && wolfSSL_SESSION_has_ticket(session) != 0;
}

bool WolfsslStream::has_new_session() const {
  return !resumed() || wolfSSL_version(ssl_) == TLS1_3_VERSION || has_ticket(ssl_);
}

const char* WolfsslStream::resumed_by() const {
  if (!resumed()) return "";
  if (wolfSSL_version(ssl_) == TLS1_3_VERSION) return "ticket";
  if (!server_) return offered_ticket_ ? "ticket" : "session id";
  return has_ticket(ssl_) ? "ticket" : "session id";
}

VerifyFailure WolfsslStream::verify_failure() const {
  return verify_failure_of(verify_error_);
}

std::string WolfsslStream::explain_verify_failure() const {
  return verify_failure_detail(verify_error_, trust_);
}

}  // namespace

std::unique_ptr<TlsStream> make_stream(UniqueFd fd, WOLFSSL* ssl, bool server, std::string trust,
                                       const SavedSession* offered) {
  return std::make_unique<WolfsslStream>(std::move(fd), ssl, server, std::move(trust),
                                         offered != nullptr && offered->ticket);
}

}  // namespace tlscmp::tls::wolfssl
