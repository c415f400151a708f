// GnuTLS's DTLS 1.2 (tls/dtls.hpp): the server's stateless cookie exchange
// with gnutls_dtls_cookie_send/verify (RFC 6347 4.2.1) before it keeps any
// state, the handshake on the UDP socket with GnuTLS's retransmission
// timer, then each record sealed and opened in memory, one datagram at a
// time, through the session's own transport functions.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <gnutls/dtls.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "error.hpp"
#include "measure/clock.hpp"
#include "tls/gnutls/gnutls.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls::gnutls {
namespace {

// DTLS 1.2 alone; the server's suites as OpenSSL's DTLS server has them:
// ECDHE with AEAD, in the server's order.
// The most plaintext a DTLS record carries (2^14, RFC 6347 4.1), and the
// largest datagram a ClientHello may come in.
constexpr unsigned kRecordPlaintextBytes = 16384;
constexpr std::size_t kLargestDatagram = 65535;

constexpr const char* kClientPriority = "NORMAL:-VERS-ALL:+VERS-DTLS1.2";
constexpr const char* kServerPriority =
    "NORMAL:-VERS-ALL:+VERS-DTLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
    "+CHACHA20-POLY1305:%SERVER_PRECEDENCE";

// A session's transport: the UDP socket during the handshake; then one
// datagram in (`in`) or one record out (`out`) at a time, in memory, and
// what the library sends of itself (a retransmitted flight) on the socket.
struct Transport {
  int fd = -1;
  bool in_memory = false;
  std::span<const std::byte> in;          // the datagram to open, until read
  std::vector<std::byte>* out = nullptr;  // while sealing: where the record goes
  std::int64_t hello_verify_ns = 0;       // client: when the server's cookie came
};

ssize_t dtls_push(gnutls_transport_ptr_t ptr, const void* data, std::size_t size) {
  auto* t = static_cast<Transport*>(ptr);
  if (t->in_memory && t->out != nullptr) {
    const auto* bytes = static_cast<const std::byte*>(data);
    t->out->insert(t->out->end(), bytes, bytes + size);
    return static_cast<ssize_t>(size);
  }
  const ssize_t sent = ::send(t->fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
  // What the socket cannot take now is lost, as a datagram on the path is:
  // DTLS retransmits its flights.
  return sent < 0 && (errno == EAGAIN || errno == ENOBUFS) ? static_cast<ssize_t>(size) : sent;
}

ssize_t dtls_pull(gnutls_transport_ptr_t ptr, void* data, std::size_t size) {
  auto* t = static_cast<Transport*>(ptr);
  if (t->in_memory) {
    if (t->in.empty()) {
      errno = EAGAIN;
      return -1;
    }
    const std::size_t n = std::min(size, t->in.size());
    std::memcpy(data, t->in.data(), n);
    t->in = {};  // one datagram, whole or cut as a socket cuts it
    return static_cast<ssize_t>(n);
  }
  const ssize_t n = ::recv(t->fd, data, size, MSG_DONTWAIT);
  if (n > 0 && t->hello_verify_ns == 0 &&
      is_hello_verify_request({static_cast<const std::byte*>(data), static_cast<std::size_t>(n)}))
    t->hello_verify_ns = measure::now_ns();
  return n;
}

int dtls_pull_timeout(gnutls_transport_ptr_t ptr, unsigned ms) {
  auto* t = static_cast<Transport*>(ptr);
  if (t->in_memory) return t->in.empty() ? 0 : 1;
  pollfd p{t->fd, POLLIN, 0};
  const int ready = ::poll(&p, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : static_cast<int>(ms));
  return ready < 0 ? -1 : ready;
}

void use_transport(gnutls_session_t session, Transport& transport) {
  gnutls_transport_set_ptr(session, &transport);
  gnutls_transport_set_push_function(session, dtls_push);
  gnutls_transport_set_pull_function(session, dtls_pull);
  gnutls_transport_set_pull_timeout_function(session, dtls_pull_timeout);
}

// Where the server's cookie goes: the address its ClientHello came from.
struct CookieReply {
  int fd;
  const sockaddr_storage* peer;
  socklen_t length;
};

ssize_t send_cookie(gnutls_transport_ptr_t ptr, const void* data, std::size_t size) {
  const auto* to = static_cast<const CookieReply*>(ptr);
  return ::sendto(to->fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL,
                  reinterpret_cast<const sockaddr*>(to->peer), to->length);
}

// Why a handshake failed, in the words the TLS streams use.
std::string dtls_failure(gnutls_session_t session, int rc, const std::string& trust) {
  if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR || rc == GNUTLS_E_CERTIFICATE_ERROR) {
    const std::string text = verify_failure_text(verify_failure_of(session), trust);
    return fmt::format("certificate verify failed: {}", text.empty() ? gnutls_strerror(rc) : text);
  }
  if (rc == GNUTLS_E_FATAL_ALERT_RECEIVED)
    return fmt::format("the peer sent the alert '{}'", gnutls_alert_get_name(gnutls_alert_get(session)));
  return gnutls_strerror(rc);
}

// Drives the handshake with GnuTLS's retransmission timer until it is done.
void run_dtls_handshake(gnutls_session_t session, int fd, Deadline deadline, const char* who,
                        const std::string& trust) {
  for (;;) {
    const int rc = gnutls_handshake(session);
    if (rc == GNUTLS_E_SUCCESS) return;
    if (gnutls_error_is_fatal(rc) != 0)
      throw Error(
          fmt::format("DTLS handshake with the {} failed: {}", who, dtls_failure(session, rc, trust)));
    if (deadline.expired()) throw Error(fmt::format("DTLS handshake with the {} timed out", who));
    const auto ms = std::chrono::milliseconds(gnutls_dtls_get_timeout(session));
    (void)wait_fd(fd, POLLIN, Deadline::earlier(deadline, Deadline::after(ms)));
  }
}

class GnutlsDtlsSession final : public DtlsSession {
 public:
  explicit GnutlsDtlsSession(int fd) { transport_.fd = fd; }
  ~GnutlsDtlsSession() override { gnutls_deinit(session_); }
  gnutls_session_t& native() { return session_; }
  Transport& transport() { return transport_; }
  std::shared_ptr<void>& keep() { return keep_; }

  // After the handshake: records in memory, each as large as a datagram may be.
  void use_memory() {
    transport_.in_memory = true;
    gnutls_dtls_set_data_mtu(session_, kRecordPlaintextBytes);
  }

  std::size_t seal(std::span<const std::byte> plain, std::span<std::byte> out) override {
    sealed_.clear();
    transport_.out = &sealed_;
    const ssize_t rc = gnutls_record_send(session_, plain.data(), plain.size());
    transport_.out = nullptr;
    check(static_cast<int>(rc < 0 ? rc : 0), "cannot seal a DTLS record");
    if (sealed_.size() > out.size()) throw Error("a DTLS record came out larger than its room");
    std::memcpy(out.data(), sealed_.data(), sealed_.size());
    return sealed_.size();
  }

  std::optional<std::size_t> open(std::span<const std::byte> datagram, std::span<std::byte> out) override {
    if (datagram.empty()) return std::nullopt;
    transport_.in = datagram;
    const ssize_t n = gnutls_record_recv(session_, out.data(), out.size());
    transport_.in = {};
    if (n > 0) return static_cast<std::size_t>(n);
    if (n == 0) throw Error("the client closed the DTLS session");
    // Garbage, a replay or a record of another epoch: GnuTLS drops it.
    if (gnutls_error_is_fatal(static_cast<int>(n)) == 0) return std::nullopt;
    throw Error(fmt::format("the DTLS session failed: {}", gnutls_strerror(static_cast<int>(n))));
  }

 private:
  gnutls_session_t session_ = nullptr;
  Transport transport_;
  std::vector<std::byte> sealed_;
  std::shared_ptr<void> keep_;  // what the session points to (its verify target)
};

// The client's figures of its handshake.
void note_dtls_session(gnutls_session_t session, std::int64_t start_ns, std::int64_t end_ns,
                       std::int64_t hello_verify_ns, DtlsHandshake& handshake) {
  handshake.set_times(start_ns, hello_verify_ns, end_ns);
  handshake.version = "DTLSv1.2";
  handshake.cipher = suite_name(session);
  handshake.group = group_name(gnutls_group_get(session));
}

class GnutlsDtlsContext final : public DtlsContextImpl {
 public:
  // A client's.
  GnutlsDtlsContext(const Backend& backend, Credentials credentials, bool verify, std::string trust)
      : DtlsContextImpl(backend),
        credentials_(std::move(credentials)),
        verify_(verify),
        trust_(std::move(trust)) {
    init_priority(kClientPriority);
  }
  // A server's.
  GnutlsDtlsContext(const Backend& backend, Credentials credentials)
      : DtlsContextImpl(backend), credentials_(std::move(credentials)) {
    init_priority(kServerPriority);
    check(gnutls_key_generate(&cookie_key_, GNUTLS_COOKIE_KEY_SIZE), "cannot make a DTLS cookie key");
  }
  ~GnutlsDtlsContext() override {
    gnutls_priority_deinit(priority_);
    gnutls_free(cookie_key_.data);
  }
  GnutlsDtlsContext(const GnutlsDtlsContext&) = delete;
  GnutlsDtlsContext& operator=(const GnutlsDtlsContext&) = delete;

  std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                       DtlsHandshake& handshake) const override;
  std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const override;

 private:
  void init_priority(const char* text) {
    check(gnutls_priority_init(&priority_, text, nullptr),
          fmt::format("GnuTLS refused the priority '{}'", text));
  }
  // A session of this context on `fd`, as `side` (GNUTLS_CLIENT or _SERVER),
  // its transport the session's own.
  std::unique_ptr<GnutlsDtlsSession> start(int fd, unsigned side) const {
    auto made = std::make_unique<GnutlsDtlsSession>(fd);
    gnutls_session_t& session = made->native();
    check(gnutls_init(&session, side | GNUTLS_DATAGRAM | GNUTLS_NONBLOCK),
          "cannot make a GnuTLS DTLS session");
    check(gnutls_priority_set(session, priority_), "cannot set the DTLS priority");
    check(gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, credentials_.get()),
          "cannot set the DTLS credentials");
    use_transport(session, made->transport());
    return made;
  }
  // Answers ClientHellos without the cookie with one, until one has it:
  // its sender's address in `peer`, the datagram left on the socket.
  gnutls_dtls_prestate_st await_cookie(int fd, Deadline deadline, sockaddr_storage& peer,
                                       socklen_t& peer_length) const;

  Credentials credentials_;
  gnutls_priority_t priority_ = nullptr;
  mutable gnutls_datum_t cookie_key_{};  // GnuTLS takes it as writable, and only reads it
  bool verify_ = false;
  std::string trust_;
};

std::unique_ptr<DtlsSession> GnutlsDtlsContext::connect(int fd, const std::string& host, Deadline deadline,
                                                        DtlsHandshake& handshake) const {
  auto made = start(fd, GNUTLS_CLIENT);
  gnutls_session_t session = made->native();
  if (!host.empty() && !is_ip_literal(host))
    gnutls_server_name_set(session, GNUTLS_NAME_DNS, host.data(), host.size());
  if (verify_) made->keep() = verify_host(session, host);
  const std::int64_t start_ns = measure::now_ns();
  run_dtls_handshake(session, fd, deadline, "server", trust_);
  note_dtls_session(session, start_ns, measure::now_ns(), made->transport().hello_verify_ns, handshake);
  made->use_memory();
  return made;
}

gnutls_dtls_prestate_st GnutlsDtlsContext::await_cookie(int fd, Deadline deadline, sockaddr_storage& peer,
                                                        socklen_t& peer_length) const {
  std::vector<std::byte> hello(kLargestDatagram);
  for (;;) {
    if (wait_fd(fd, POLLIN, deadline)) throw Error("no DTLS ClientHello came before the handshake timeout");
    peer_length = sizeof peer;
    const ssize_t n = ::recvfrom(fd, hello.data(), hello.size(), MSG_PEEK | MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&peer), &peer_length);
    if (n < 0) continue;
    gnutls_dtls_prestate_st prestate{};
    if (gnutls_dtls_cookie_verify(&cookie_key_, &peer, peer_length, hello.data(), static_cast<std::size_t>(n),
                                  &prestate) == 0)
      return prestate;  // its datagram stays for the handshake
    // No cookie, or not ours: one is sent to the address it came from, keeping nothing.
    CookieReply reply{fd, &peer, peer_length};
    gnutls_dtls_cookie_send(&cookie_key_, &peer, peer_length, &prestate, &reply, send_cookie);
    (void)::recv(fd, hello.data(), hello.size(), MSG_DONTWAIT);  // that datagram is done with
  }
}

std::unique_ptr<DtlsSession> GnutlsDtlsContext::accept(int fd, Deadline deadline) const {
  sockaddr_storage peer{};
  socklen_t peer_length = 0;
  gnutls_dtls_prestate_st prestate = await_cookie(fd, deadline, peer, peer_length);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&peer), peer_length) != 0)
    throw Error(fmt::format("cannot connect the DTLS socket to its client: {}", std::strerror(errno)));
  auto made = start(fd, GNUTLS_SERVER);
  gnutls_session_t session = made->native();
  gnutls_dtls_prestate_set(session, &prestate);
  run_dtls_handshake(session, fd, deadline, "client", {});
  made->use_memory();
  return made;
}

}  // namespace

bool GnutlsBackend::dtls_available(std::string& why) const {
  why.clear();
  return true;
}

DtlsContext GnutlsBackend::dtls_server_context(const Identity& identity) const {
  return DtlsContext(std::make_shared<GnutlsDtlsContext>(*this, identity_credentials(identity)));
}

DtlsContext GnutlsBackend::dtls_client_context(const ClientOptions& options) const {
  std::string trust;
  Credentials credentials = client_credentials(options, trust);
  return DtlsContext(
      std::make_shared<GnutlsDtlsContext>(*this, std::move(credentials), !options.insecure, trust));
}

}  // namespace tlscmp::tls::gnutls
