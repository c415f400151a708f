#include "tls/dtls.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/endian/conversion.hpp>

#include <array>
#include <cerrno>
#include <cstring>

#include "error.hpp"
#include "measure/clock.hpp"
#include "tls/context_setup.hpp"
#include "tls/ossl_ptr.hpp"
#include "tls/ssl_backend.hpp"
#include "tls/ssl_compat.hpp"
#include "transport/socket.hpp"

#if TLSCMP_HAVE_DTLS
#include <openssl/evp.h>
#endif

namespace tlscmp::tls::ssl {

#if TLSCMP_HAVE_DTLS

namespace {

// A DTLS session over an SSL object: the handshake on the socket, then
// records sealed and opened through memory BIOs.
class SslDtlsSession final : public DtlsSession {
 public:
  SslDtlsSession(SSL* ssl, int fd) : ssl_(ssl), fd_(fd) {}
  ~SslDtlsSession() override { SSL_free(ssl_); }  // frees the BIOs too; the socket is the caller's
  std::size_t seal(std::span<const std::byte> plain, std::span<std::byte> out) override;
  std::optional<std::size_t> open(std::span<const std::byte> datagram, std::span<std::byte> out) override;
  SSL* native() const { return ssl_; }
  void use_memory();  // after the handshake

 private:
  void flush();  // sends what the library wrote (handshake retransmissions)

  SSL* ssl_;
  int fd_;  // the UDP socket, owned by the caller
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
};

class SslDtlsContext final : public DtlsContextImpl {
 public:
  SslDtlsContext(std::shared_ptr<SSL_CTX> ctx, const Backend& backend)
      : DtlsContextImpl(backend), ctx_(std::move(ctx)) {}
  std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                       DtlsHandshake& handshake) const override;
  std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const override;

 private:
  std::shared_ptr<SSL_CTX> ctx_;
};

constexpr std::size_t kCookieSecretBytes = 32;

// The key of the cookie MAC: random, one per process.
const std::array<unsigned char, kCookieSecretBytes>& cookie_secret() {
  static const auto secret = [] {
    std::array<unsigned char, kCookieSecretBytes> s{};
    if (RAND_bytes(s.data(), static_cast<int>(s.size())) != 1)
      throw_tls_error("cannot make a DTLS cookie key");
    return s;
  }();
  return secret;
}

// The cookie for the peer the datagram BIO last heard from: an HMAC of its
// address and port, so that the server keeps no state before the client
// proves it can receive at its address.
bool peer_cookie(SSL* ssl, unsigned char* cookie, std::size_t capacity, std::size_t& length) {
  BIO_ADDR* peer = BIO_ADDR_new();
  if (peer == nullptr) return false;
  std::array<unsigned char, 2 + 16 + 2> data{};
  std::size_t address_bytes = 16;
  bool ok = BIO_dgram_get_peer(SSL_get_rbio(ssl), peer) > 0 &&
            BIO_ADDR_rawaddress(peer, data.data() + 2, &address_bytes) == 1;
  if (ok) {
    const int family = BIO_ADDR_family(peer);
    boost::endian::store_big_u16(data.data(), static_cast<std::uint16_t>(family));
    const unsigned short port = BIO_ADDR_rawport(peer);
    std::memcpy(data.data() + 2 + address_bytes, &port, sizeof port);
    const auto& secret = cookie_secret();
    ok = EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, secret.data(), secret.size(), data.data(),
                   2 + address_bytes + sizeof port, cookie, capacity, &length) != nullptr;
  }
  BIO_ADDR_free(peer);
  return ok;
}

int generate_cookie(SSL* ssl, unsigned char* cookie, unsigned int* length) {
  std::size_t n = 0;
  if (!peer_cookie(ssl, cookie, DTLS1_COOKIE_LENGTH, n)) return 0;
  *length = static_cast<unsigned int>(n);
  return 1;
}

int verify_cookie(SSL* ssl, const unsigned char* cookie, unsigned int length) {
  std::array<unsigned char, DTLS1_COOKIE_LENGTH> expected{};
  std::size_t n = 0;
  return peer_cookie(ssl, expected.data(), expected.size(), n) && n == length &&
                 CRYPTO_memcmp(expected.data(), cookie, n) == 0
             ? 1
             : 0;
}

std::shared_ptr<SSL_CTX> new_dtls_context(const SSL_METHOD* method) {
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(method), SSL_CTX_free);
  if (!ctx) throw_tls_error("cannot create a DTLS context");
  SSL_CTX_set_min_proto_version(ctx.get(), DTLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx.get(), DTLS1_2_VERSION);
  return ctx;
}

// The reason a handshake failed, with the certificate check's verdict where it failed.
std::string handshake_failure(SSL* ssl) {
  std::string reason = take_error_reason();
  const long verify = compat::verify_result(ssl);
  if (verify != X509_V_OK) {
    reason = fmt::format("certificate verify failed: {}", X509_verify_cert_error_string(verify));
  }
  return reason.empty() ? "the peer ended it" : reason;
}

// Drives the handshake with the DTLS retransmission timer until it is done.
void run_handshake(SSL* ssl, int fd, Deadline deadline, const char* who) {
  for (;;) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl);
    if (rc == 1) return;
    const int err = SSL_get_error(ssl, rc);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      throw Error(fmt::format("DTLS handshake with the {} failed: {}", who, handshake_failure(ssl)));
    }
    if (deadline.expired()) throw Error(fmt::format("DTLS handshake with the {} timed out", who));
    timeval timer{};
    Deadline wait = deadline;
    if (DTLSv1_get_timeout(ssl, &timer) == 1) {
      const auto ms = std::chrono::milliseconds(timer.tv_sec * 1000 + timer.tv_usec / 1000);
      wait = Deadline::earlier(deadline, Deadline::after(ms));
    }
    const std::error_code ec = wait_fd(
        fd, err == SSL_ERROR_WANT_WRITE ? static_cast<short>(POLLOUT) : static_cast<short>(POLLIN), wait);
    if (ec && DTLSv1_handle_timeout(ssl) < 0) {
      throw Error(fmt::format("DTLS handshake with the {} failed: {}", who, handshake_failure(ssl)));
    }
  }
}

void note_session(SSL* ssl, DtlsHandshake& handshake) {
  handshake.version = SSL_get_version(ssl);
  handshake.cipher = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
  handshake.group = compat::negotiated_group(ssl);
}

// The client's clock: when its first ClientHello left, when the HelloVerifyRequest came.
struct HandshakeClock {
  std::int64_t start_ns = 0;
  std::int64_t cookie_ns = 0;
};

void watch_messages(int write_p, int, int content_type, const void* buf, std::size_t len, SSL*, void* arg) {
  auto* clock = static_cast<HandshakeClock*>(arg);
  if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
      *static_cast<const std::byte*>(buf) == kDtlsHelloVerifyRequest && clock->cookie_ns == 0) {
    clock->cookie_ns = measure::now_ns();
  }
}

// BIO_ADDR as a sockaddr, for connect(2).
socklen_t to_sockaddr(const BIO_ADDR* address, sockaddr_storage& out) {
  out = {};
  std::size_t length = 0;
  if (BIO_ADDR_family(address) == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&out);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = BIO_ADDR_rawport(address);
    length = sizeof in6->sin6_addr;
    BIO_ADDR_rawaddress(address, &in6->sin6_addr, &length);
    return sizeof *in6;
  }
  auto* in = reinterpret_cast<sockaddr_in*>(&out);
  in->sin_family = AF_INET;
  in->sin_port = BIO_ADDR_rawport(address);
  length = sizeof in->sin_addr;
  BIO_ADDR_rawaddress(address, &in->sin_addr, &length);
  return sizeof *in;
}

}  // namespace

bool SslBackend::dtls_available(std::string& why) const {
  why.clear();
  return true;
}

DtlsContext SslBackend::dtls_server_context(const Identity& identity) const {
  auto ctx = new_dtls_context(DTLS_server_method());
  detail::use_identity(ctx.get(), identity);
  if (SSL_CTX_set_cipher_list(ctx.get(), detail::kServerTls12Ciphers) != 1)
    throw_tls_error("cannot set the DTLS server's suites");
  SSL_CTX_set_options(ctx.get(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_cookie_generate_cb(ctx.get(), generate_cookie);
  SSL_CTX_set_cookie_verify_cb(ctx.get(), verify_cookie);
  return DtlsContext(std::make_shared<SslDtlsContext>(std::move(ctx), *this));
}

DtlsContext SslBackend::dtls_client_context(const ClientOptions& config) const {
  auto ctx = new_dtls_context(DTLS_client_method());
  detail::set_client_trust(ctx.get(), config);
  if (config.identity) detail::use_identity(ctx.get(), *config.identity);
  return DtlsContext(std::make_shared<SslDtlsContext>(std::move(ctx), *this));
}

std::unique_ptr<DtlsSession> SslDtlsContext::connect(int fd, const std::string& host, Deadline deadline,
                                                     DtlsHandshake& handshake) const {
  SSL* ssl = SSL_new(ctx_.get());
  if (ssl == nullptr) throw_tls_error("cannot create a DTLS session");
  auto session = std::make_unique<SslDtlsSession>(ssl, fd);
  BIO* bio = BIO_new_dgram(fd, BIO_NOCLOSE);
  if (bio == nullptr) throw_tls_error("cannot create a datagram BIO");
  sockaddr_storage peer{};
  socklen_t peer_length = sizeof peer;
  ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length);
  BIO_ctrl(bio, BIO_CTRL_DGRAM_SET_CONNECTED, 0, &peer);
  SSL_set_bio(ssl, bio, bio);
  if (is_ip_literal(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set1_host(ssl, host.c_str());
    compat::set_server_name(ssl, host.c_str());
  }
  HandshakeClock clock;
  SSL_set_msg_callback(ssl, watch_messages);
  SSL_set_msg_callback_arg(ssl, &clock);
  SSL_set_connect_state(ssl);
  clock.start_ns = measure::now_ns();
  run_handshake(ssl, fd, deadline, "server");
  const std::int64_t end_ns = measure::now_ns();
  SSL_set_msg_callback(ssl, nullptr);
  handshake.set_times(clock.start_ns, clock.cookie_ns, end_ns);
  note_session(ssl, handshake);
  session->use_memory();
  return session;
}

std::unique_ptr<DtlsSession> SslDtlsContext::accept(int fd, Deadline deadline) const {
  SSL* ssl = SSL_new(ctx_.get());
  if (ssl == nullptr) throw_tls_error("cannot create a DTLS session");
  auto session = std::make_unique<SslDtlsSession>(ssl, fd);
  BIO* bio = BIO_new_dgram(fd, BIO_NOCLOSE);
  if (bio == nullptr) throw_tls_error("cannot create a datagram BIO");
  SSL_set_bio(ssl, bio, bio);
  SSL_set_options(ssl, SSL_OP_COOKIE_EXCHANGE);
  std::unique_ptr<BIO_ADDR, Deleter<BIO_ADDR_free>> client(BIO_ADDR_new());
  if (!client) throw_tls_error("cannot make room for an address");
  for (;;) {
    ERR_clear_error();
    const int rc = DTLSv1_listen(ssl, client.get());
    if (rc > 0) break;
    if (rc < 0) throw Error(fmt::format("DTLS: not a usable ClientHello: {}", handshake_failure(ssl)));
    if (const std::error_code ec = wait_fd(fd, POLLIN, deadline)) {
      throw Error("no DTLS ClientHello came before the handshake timeout");
    }
  }
  sockaddr_storage address{};
  const socklen_t length = to_sockaddr(client.get(), address);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    throw Error(fmt::format("cannot connect the DTLS socket to its client: {}", std::strerror(errno)));
  }
  BIO_ctrl(SSL_get_rbio(ssl), BIO_CTRL_DGRAM_SET_CONNECTED, 0, client.get());
  run_handshake(ssl, fd, deadline, "client");
  session->use_memory();
  return session;
}

void SslDtlsSession::use_memory() {
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  if (in_ == nullptr || out_ == nullptr) {
    BIO_free(in_);
    BIO_free(out_);
    throw_tls_error("cannot create memory BIOs");
  }
  BIO_set_mem_eof_return(in_, -1);  // empty means "wait for more", not the end
  SSL_set_bio(ssl_, in_, out_);     // frees the datagram BIO
}

std::size_t SslDtlsSession::seal(std::span<const std::byte> plain, std::span<std::byte> out) {
  ERR_clear_error();
  if (SSL_write(ssl_, plain.data(), static_cast<int>(plain.size())) <= 0) {
    throw_tls_error("cannot seal a DTLS record");
  }
  const std::size_t pending = BIO_ctrl_pending(out_);
  if (pending > out.size()) throw Error("a DTLS record came out larger than its room");
  return static_cast<std::size_t>(BIO_read(out_, out.data(), static_cast<int>(pending)));
}

std::optional<std::size_t> SslDtlsSession::open(std::span<const std::byte> datagram,
                                                std::span<std::byte> out) {
  if (datagram.empty()) return std::nullopt;
  BIO_write(in_, datagram.data(), static_cast<int>(datagram.size()));
  ERR_clear_error();
  const int n = SSL_read(ssl_, out.data(), static_cast<int>(out.size()));
  std::optional<std::size_t> plain;
  if (n > 0) {
    plain = static_cast<std::size_t>(n);
  } else {
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_ZERO_RETURN) throw Error("the client closed the DTLS session");
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      throw_tls_error("the DTLS session failed");
    }
  }
  // Only one datagram at a time: what the record layer left of this one goes.
  if (BIO_ctrl_pending(in_) > 0) (void)BIO_reset(in_);
  flush();
  return plain;
}

void SslDtlsSession::flush() {
  std::array<std::byte, 2048> chunk{};
  while (BIO_ctrl_pending(out_) > 0) {
    const int n = BIO_read(out_, chunk.data(), static_cast<int>(chunk.size()));
    if (n <= 0) break;
    (void)::send(fd_, chunk.data(), static_cast<std::size_t>(n), MSG_DONTWAIT);
  }
}

#else  // BoringSSL: no DTLSv1_listen, no cookie callbacks

namespace {
constexpr const char* kNoDtls =
    "BoringSSL has no DTLS server tlscmp can use (no DTLSv1_listen, its stateless cookie exchange): run "
    "dtls on another library (--tls-lib openssl, gnutls or wolfssl, or one of them first in its list)";
}

bool SslBackend::dtls_available(std::string& why) const {
  why = kNoDtls;
  return false;
}
DtlsContext SslBackend::dtls_server_context(const Identity&) const {
  throw Error(kNoDtls);
}
DtlsContext SslBackend::dtls_client_context(const ClientOptions&) const {
  throw Error(kNoDtls);
}

#endif

}  // namespace tlscmp::tls::ssl
