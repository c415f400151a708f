#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tls/identity.hpp"
#include "tls/policy.hpp"
#include "tls/tls_stream.hpp"
#include "transport/unique_fd.hpp"

struct ssl_ctx_st;
struct ssl_method_st;

namespace tlscmp::tls {

class Backend;

// Read-ahead buffer used unless told otherwise: the size with which the bare
// loop in bench/tls-ceiling.c reaches its ceiling.
inline constexpr std::size_t kDefaultReadAheadBytes = 256 * 1024;

// A stack that runs its own transport under this library's TLS (QUIC,
// stacks/quic/) and so makes its contexts its own way: the library's method
// for a side (TLS 1.3 alone), what it sets on a new context (`event_loop`:
// an event loop drives its connections, ClientOptions::event_loop), and the
// ALPN protocol a client offers. Its connections' streams are the stack's
// to make (SslContext::new_client_ssl, native(): tls/ssl_context.hpp).
struct ContextShape {
  const ssl_method_st* (*method)(bool server) = nullptr;
  void (*set_up)(ssl_ctx_st* ctx, bool server, bool event_loop) = nullptr;
  const char* alpn = nullptr;
};

// What a server's TLS context is made of (the TLS library's options, not the
// server's settings: those are session::ServerConfig).
struct ServerOptions {
  Identity identity;
  std::size_t read_ahead_bytes = kDefaultReadAheadBytes;  // 0: off
  Policy policy;
  std::string client_ca_file;        // trust client certificates from these CAs
  bool require_client_cert = false;  // mutual TLS: refuse a client without a trusted certificate
  Resumption resumption = Resumption::tickets;
  const ContextShape* shape = nullptr;  // a stack's own (QUIC's): no read-ahead, no TLS 1.2 suites
  const Backend* library = nullptr;     // the TLS library: null for the default (tls/backend.hpp)
  // The application protocols (ALPN) it agrees to where a client offers
  // one, in its order of preference ("h2", "http/1.1"); a client that
  // offers none of them is served without ALPN, never refused.
  std::vector<std::string> alpn;
};

// What a client's TLS context is made of: trust, policy and a client
// certificate (not the client's settings: those are session::ClientConfig).
struct ClientOptions {
  std::string ca_file;    // trust the CAs in this PEM file
  std::string ca_pem;     // or trust this PEM CA held in memory (the embedded server's)
  bool insecure = false;  // or verify nothing; neither set: the system's trust store
  std::size_t read_ahead_bytes = kDefaultReadAheadBytes;  // 0: off
  Policy policy;
  std::optional<Identity> identity;     // a client certificate, for mutual TLS
  const ContextShape* shape = nullptr;  // a stack's own (QUIC's): no read-ahead
  // With a shape: an event loop drives each connection (Stream::loop_timeout,
  // handle_loop_events), as --flows does; no thread of the library's.
  bool event_loop = false;
  const Backend* library = nullptr;  // the TLS library: null for the default (tls/backend.hpp)
  // The library the server is asked to shake hands with (--tls-lib's name,
  // "openssl"), named in the test request and before each ClientHello that
  // the server tells by its first byte; "": the server's own default.
  std::string server_library;
  // The application protocols (ALPN) it offers, in its order of preference,
  // beside a stack's own and a cipher grant's; none: no ALPN of its own.
  std::vector<std::string> alpn;
};

// A server's leave for one test to use a suite outside the server's
// defaults (Context::grant_cipher).
struct CipherGrant {
  std::string suites;            // those outside the defaults, colon-separated; "": nothing granted
  std::shared_ptr<void> holder;  // while any copy lives, clients that ask for the suite get it
};

// What a library's context does (its backend's: tls/backend.hpp); Context
// below holds one, with what is said of it in any library's words.
class ContextImpl {
 public:
  virtual ~ContextImpl() = default;
  virtual std::unique_ptr<TlsStream> server_stream(UniqueFd fd) const = 0;
  virtual std::unique_ptr<TlsStream> client_stream(UniqueFd fd, const std::string& host,
                                                   const Session& resume,
                                                   const std::string& server_name) const = 0;
  // `other` is of the same backend (Context::add_server_name checks).
  virtual void add_server_name(const std::string& server_name, const ContextImpl& other) = 0;
  virtual CipherGrant grant_cipher(const std::string& cipher) const = 0;
};

// One configured TLS context (certificates, trust, ciphers), shared by the
// streams it makes. Copies share the same context. Throws tlscmp::Error
// naming the cause when the configuration cannot be used.
class Context {
 public:
  // Made by the options' library (ServerOptions::library), or the default's.
  static Context for_server(const ServerOptions& config);
  static Context for_client(const ClientOptions& config);
  // A backend's context: `trust` says what a client's server chain must lead to.
  Context(std::shared_ptr<ContextImpl> impl, const Backend& backend, Offer offer, std::string trust = {})
      : impl_(std::move(impl)), backend_(&backend), offer_(std::move(offer)), trust_(std::move(trust)) {}

  // Wrap a connected socket; TlsStream::handshake() then runs the handshake.
  std::unique_ptr<TlsStream> server_stream(UniqueFd fd) const { return impl_->server_stream(std::move(fd)); }
  // `host` is checked against the server's certificate (DNS name or IP
  // address). With `resume`, the client offers that session for resumption.
  // `server_name`, if given, is the name sent (SNI) instead of `host`.
  // A QUIC context's `fd` is a UDP socket connected to the server.
  std::unique_ptr<TlsStream> client_stream(UniqueFd fd, const std::string& host, const Session& resume = {},
                                           const std::string& server_name = {}) const {
    return impl_->client_stream(std::move(fd), host, resume, server_name);
  }
  // Server: a client that asks for `server_name` (SNI) gets `other`'s
  // certificate and settings instead of this context's. Thread-safe; a
  // name added later replaces the one before. Throws tlscmp::Error where
  // `other` is another library's.
  void add_server_name(const std::string& server_name, const Context& other);

  // Server: lets the connections of clients whose --cipher is `cipher` use
  // it, though it lies outside this server's defaults (TLS 1.3, and TLS 1.2
  // with ECDHE and AEAD suites), as long as the grant is held: a measuring
  // tool must be able to measure what a hardened server would refuse, and
  // a scanner still finds the defaults alone. Such a client says so in its
  // ClientHello (ALPN), as for_client arranges. Nothing is granted where the
  // cipher is within the defaults, where the server was given a --cipher of
  // its own (its operator's limit), or where the library cannot serve it.
  CipherGrant grant_cipher(const std::string& cipher) const { return impl_->grant_cipher(cipher); }

  // What this context offers a peer.
  const Offer& offer() const { return offer_; }
  // Client: what the server's chain must lead to, in words.
  const std::string& trust_description() const { return trust_; }
  // The library that made it, and its own context (for that library's code).
  const Backend& backend() const { return *backend_; }
  ContextImpl& impl() const { return *impl_; }
  // Client: ClientOptions::server_library.
  const std::string& server_library() const { return server_library_; }

 private:
  std::shared_ptr<ContextImpl> impl_;
  const Backend* backend_;
  Offer offer_;
  std::string trust_;
  std::string server_library_;
};

// True if this kernel offers the "tls" upper-layer protocol that kTLS needs;
// `available` is set to what /proc/sys/net/ipv4/tcp_available_ulp lists.
bool kernel_has_tls_ulp(std::string& available);

// Name and version of the TLS library in use, e.g. "OpenSSL 3.0.19 27 Jan 2026".
std::string library_version();
// The headers this build was compiled with, "OpenSSL 3.0.19 27 Jan 2026"; ""
// where the library has no separate header version (BoringSSL).
std::string header_version();
// Where the library came from, where the build knows it ("Debian's
// android-libboringssl 14.0.0+r11-2"); "" otherwise.
std::string library_package();

// Whether this build has DTLS (the OpenSSL build; BoringSSL has no DTLSv1_listen).
bool has_dtls();

// The key exchange groups tlscmp knows by name (X25519 ... MLKEM ... ffdhe),
// in table order; and those of them this library offers, in the same order.
std::vector<std::string> known_groups();
std::vector<std::string> available_groups();

}  // namespace tlscmp::tls
