// wolfSSL's DTLS 1.2 (tls/dtls.hpp), on its own API. The server's socket is
// unconnected until a ClientHello comes back with the cookie of its
// sender's address (wolfSSL's stateless cookie, RFC 6347 4.2.1): only then,
// as wolfSSL answers it, is it connected to that client. The handshake runs on the socket with wolfSSL's
// retransmission timer; then each record is sealed and opened in memory,
// one datagram at a time, through the connection's I/O callbacks.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "error.hpp"
#include "measure/clock.hpp"
#include "tls/wolfssl/wolfssl.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

// The server's suites, as OpenSSL's DTLS server has them: ECDHE with AEAD.
constexpr const char* kDtlsServerSuites =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// A connection's I/O: the UDP socket during the handshake (the server's
// unconnected until its client is known); then one datagram in or one
// record out at a time, in memory, and what the library sends of itself
// (a retransmitted flight) on the socket.
struct DatagramIo {
  int fd = -1;
  bool connected = true;    // server: false until its client's cookie came back
  sockaddr_storage peer{};  // server, unconnected: whom the last datagram came from
  socklen_t peer_length = 0;
  bool in_memory = false;
  std::span<const std::byte> in;          // the datagram to open, until read
  std::vector<std::byte>* out = nullptr;  // while sealing: where the record goes
  std::int64_t hello_verify_ns = 0;       // client: when the server's cookie came
};

// The server: a datagram from an unconnected socket, ClientHellos alone
// (anything else is dropped), its sender told to wolfSSL, whose stateless
// cookie binds that address.
int receive_unconnected(WOLFSSL* ssl, DatagramIo& io, char* buf, int size) {
  io.peer_length = sizeof io.peer;
  const ssize_t n = ::recvfrom(io.fd, buf, static_cast<std::size_t>(size), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&io.peer), &io.peer_length);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? WOLFSSL_CBIO_ERR_WANT_READ : WOLFSSL_CBIO_ERR_GENERAL;
  const std::span<const std::byte> datagram{reinterpret_cast<const std::byte*>(buf),
                                            static_cast<std::size_t>(n)};
  if (!starts_with_handshake_message(datagram, kDtlsClientHello)) return WOLFSSL_CBIO_ERR_WANT_READ;
  wolfSSL_dtls_set_peer(ssl, &io.peer, io.peer_length);
  return static_cast<int>(n);
}

int dtls_receive(WOLFSSL* ssl, char* buf, int size, void* ctx) {
  auto& io = *static_cast<DatagramIo*>(ctx);
  if (io.in_memory) {
    if (io.in.empty()) return WOLFSSL_CBIO_ERR_WANT_READ;
    const std::size_t n = std::min(io.in.size(), static_cast<std::size_t>(size));
    std::memcpy(buf, io.in.data(), n);
    io.in = {};  // one datagram, whole or cut as a socket cuts it
    return static_cast<int>(n);
  }
  if (!io.connected) return receive_unconnected(ssl, io, buf, size);
  const ssize_t n = ::recv(io.fd, buf, static_cast<std::size_t>(size), MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? WOLFSSL_CBIO_ERR_WANT_READ : WOLFSSL_CBIO_ERR_GENERAL;
  if (io.hello_verify_ns == 0 &&
      is_hello_verify_request({reinterpret_cast<const std::byte*>(buf), static_cast<std::size_t>(n)}))
    io.hello_verify_ns = measure::now_ns();
  return static_cast<int>(n);
}

int dtls_send(WOLFSSL*, char* buf, int size, void* ctx) {
  auto& io = *static_cast<DatagramIo*>(ctx);
  const auto bytes = static_cast<std::size_t>(size);
  if (io.in_memory && io.out != nullptr) {
    const auto* from = reinterpret_cast<const std::byte*>(buf);
    io.out->insert(io.out->end(), from, from + bytes);
    return size;
  }
  // The server answers a ClientHello whose cookie wolfSSL found good with
  // its ServerHello: that client has proved its address, and the socket is
  // its alone from now on (as DTLSv1_listen leaves OpenSSL's).
  if (!io.connected &&
      starts_with_handshake_message({reinterpret_cast<const std::byte*>(buf), bytes}, kDtlsServerHello)) {
    if (::connect(io.fd, reinterpret_cast<const sockaddr*>(&io.peer), io.peer_length) != 0)
      return WOLFSSL_CBIO_ERR_GENERAL;
    io.connected = true;
  }
  const ssize_t sent = io.connected ? ::send(io.fd, buf, bytes, MSG_DONTWAIT | MSG_NOSIGNAL)
                                    : ::sendto(io.fd, buf, bytes, MSG_DONTWAIT | MSG_NOSIGNAL,
                                               reinterpret_cast<const sockaddr*>(&io.peer), io.peer_length);
  // What the socket cannot take now is lost, as a datagram on the path is:
  // DTLS retransmits its flights.
  if (sent < 0) return errno == EAGAIN || errno == ENOBUFS ? size : WOLFSSL_CBIO_ERR_GENERAL;
  return static_cast<int>(sent);
}

class WolfsslDtlsSession final : public DtlsSession {
 public:
  WolfsslDtlsSession(WOLFSSL* ssl, int fd, bool server) : ssl_(ssl) {
    io_.fd = fd;
    io_.connected = !server;  // a server's socket waits for its client's cookie
    wolfSSL_SSLSetIORecv(ssl_, dtls_receive);
    wolfSSL_SSLSetIOSend(ssl_, dtls_send);
    wolfSSL_SetIOReadCtx(ssl_, &io_);
    wolfSSL_SetIOWriteCtx(ssl_, &io_);
    wolfSSL_dtls_set_using_nonblock(ssl_, 1);
  }
  ~WolfsslDtlsSession() override { wolfSSL_free(ssl_); }
  WolfsslDtlsSession(const WolfsslDtlsSession&) = delete;
  WolfsslDtlsSession& operator=(const WolfsslDtlsSession&) = delete;
  WOLFSSL* native() const { return ssl_; }
  const DatagramIo& io() const { return io_; }

  // Drives the handshake with wolfSSL's retransmission timer until it is done.
  void handshake(bool server, Deadline deadline, const std::string& trust);

  // After the handshake: records in memory. (Debian builds wolfSSL without
  // wolfSSL_dtls_set_mtu; its records take up to 2^14 bytes.)
  void use_memory() { io_.in_memory = true; }

  std::size_t largest_plaintext() const override {
    const int most = wolfSSL_GetMaxOutputSize(ssl_);  // its MTU less what a record adds
    return most > 0 ? static_cast<std::size_t>(most) : 0;
  }

  std::size_t seal(std::span<const std::byte> plain, std::span<std::byte> out) override {
    sealed_.clear();
    io_.out = &sealed_;
    const int ret = wolfSSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
    io_.out = nullptr;
    if (ret <= 0)
      throw Error(fmt::format("cannot seal a DTLS record: {}", reason(wolfSSL_get_error(ssl_, ret))));
    if (sealed_.size() > out.size()) throw Error("a DTLS record came out larger than its room");
    std::memcpy(out.data(), sealed_.data(), sealed_.size());
    return sealed_.size();
  }

  std::optional<std::size_t> open(std::span<const std::byte> datagram, std::span<std::byte> out) override {
    if (datagram.empty()) return std::nullopt;
    io_.in = datagram;
    const int n = wolfSSL_read(ssl_, out.data(), static_cast<int>(out.size()));
    io_.in = {};
    if (n > 0) return static_cast<std::size_t>(n);
    const int error = wolfSSL_get_error(ssl_, n);
    if (error == WOLFSSL_ERROR_ZERO_RETURN) throw Error("the client closed the DTLS session");
    // Garbage, a replay or a record of another epoch: wolfSSL drops it.
    if (error == WOLFSSL_ERROR_WANT_READ || error == WOLFSSL_ERROR_WANT_WRITE) return std::nullopt;
    throw Error(fmt::format("the DTLS session failed: {}", reason(error)));
  }

 private:
  WOLFSSL* ssl_;
  DatagramIo io_;
  std::vector<std::byte> sealed_;
};

void WolfsslDtlsSession::handshake(bool server, Deadline deadline, const std::string& trust) {
  on_this_thread();
  const char* who = server ? "client" : "server";
  for (;;) {
    const int ret = server ? wolfSSL_accept(ssl_) : wolfSSL_connect(ssl_);
    if (ret == WOLFSSL_SUCCESS) return;
    const int error = wolfSSL_get_error(ssl_, ret);
    if (error != WOLFSSL_ERROR_WANT_READ && error != WOLFSSL_ERROR_WANT_WRITE) {
      const std::string why = is_verify_error(error) ? fmt::format("certificate verify failed: {}",
                                                                   verify_failure_detail(error, trust))
                                                     : reason(error);
      throw Error(fmt::format("DTLS handshake with the {} failed: {}", who, why));
    }
    if (deadline.expired()) throw Error(fmt::format("DTLS handshake with the {} timed out", who));
    const auto timer = std::chrono::seconds(std::max(1, wolfSSL_dtls_get_current_timeout(ssl_)));
    if (wait_fd(io_.fd, POLLIN, Deadline::earlier(deadline, Deadline::after(timer))) && io_.connected &&
        wolfSSL_dtls_got_timeout(ssl_) != WOLFSSL_SUCCESS) {
      const int late = wolfSSL_get_error(ssl_, 0);
      if (late != WOLFSSL_ERROR_WANT_READ && late != WOLFSSL_ERROR_WANT_WRITE)
        throw Error(fmt::format("DTLS handshake with the {} failed: {}", who, reason(late)));
    }
  }
}

class WolfsslDtlsContext final : public DtlsContextImpl {
 public:
  // A client's (`verify`: check the server's certificate), or a server's.
  WolfsslDtlsContext(const Backend& backend, Ctx ctx, bool verify, std::string trust)
      : DtlsContextImpl(backend), ctx_(std::move(ctx)), verify_(verify), trust_(std::move(trust)) {}

  std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                       DtlsHandshake& handshake) const override {
    auto made = std::make_unique<WolfsslDtlsSession>(new_ssl(), fd, false);
    WOLFSSL* ssl = made->native();
    if (!host.empty() && !is_ip_literal(host))
      wolfSSL_UseSNI(ssl, WOLFSSL_SNI_HOST_NAME, host.data(), static_cast<word16>(host.size()));
    if (verify_) check_server_host(ssl, host);
    const std::int64_t start_ns = measure::now_ns();
    made->handshake(false, deadline, trust_);
    handshake.set_times(start_ns, made->io().hello_verify_ns, measure::now_ns());
    handshake.version = "DTLSv1.2";
    handshake.cipher = suite_name(wolfSSL_get_cipher_name(ssl));
    handshake.group = group_name(wolfSSL_get_curve_name(ssl));
    made->use_memory();
    return made;
  }

  // A ClientHello wolfSSL fails on before any client has proved its address
  // (its cookie back) ends nothing: the server starts over, having kept no state.
  std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const override {
    for (;;) {
      auto made = std::make_unique<WolfsslDtlsSession>(new_ssl(), fd, true);
      try {
        made->handshake(true, deadline, {});
        made->use_memory();
        return made;
      } catch (const Error&) {
        if (made->io().connected) throw;
        if (deadline.expired())
          throw Error("no DTLS ClientHello came back with its cookie before the handshake timeout");
      }
    }
  }

 private:
  WOLFSSL* new_ssl() const {
    WOLFSSL* ssl = wolfSSL_new(ctx_.get());
    if (ssl == nullptr) throw Error("cannot make a wolfSSL DTLS connection");
    return ssl;
  }

  Ctx ctx_;
  bool verify_ = false;
  std::string trust_;
};

Ctx new_dtls_ctx(bool server) {
  Ctx ctx(wolfSSL_CTX_new(server ? wolfDTLSv1_2_server_method() : wolfDTLSv1_2_client_method()),
          CtxDeleter{});
  if (!ctx) throw Error("cannot make a wolfSSL DTLS context");
  return ctx;
}

}  // namespace

bool WolfsslBackend::dtls_available(std::string& why) const {
  why.clear();
  return true;
}

DtlsContext WolfsslBackend::dtls_server_context(const Identity& identity) const {
  Ctx ctx = new_dtls_ctx(true);
  use_identity(ctx.get(), identity);
  check(wolfSSL_CTX_set_cipher_list(ctx.get(), kDtlsServerSuites), "cannot set the DTLS server's suites");
  wolfSSL_CTX_set_verify(ctx.get(), WOLFSSL_VERIFY_NONE, nullptr);
  return DtlsContext(std::make_shared<WolfsslDtlsContext>(*this, std::move(ctx), false, std::string()));
}

DtlsContext WolfsslBackend::dtls_client_context(const ClientOptions& options) const {
  Ctx ctx = new_dtls_ctx(false);
  std::string trust;
  use_client_trust(ctx.get(), options, trust);
  return DtlsContext(
      std::make_shared<WolfsslDtlsContext>(*this, std::move(ctx), !options.insecure, std::move(trust)));
}

}  // namespace tlscmp::tls::wolfssl
