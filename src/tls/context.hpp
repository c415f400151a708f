#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tls/identity.hpp"
#include "tls/tls_stream.hpp"
#include "transport/unique_fd.hpp"

struct ssl_ctx_st;

namespace tlscmp::tls {

// Read-ahead buffer used unless told otherwise: the size with which the bare
// loop in ../shared/bench/tls-ceiling.c reaches its ceiling.
inline constexpr std::size_t kDefaultReadAheadBytes = 256 * 1024;

struct ServerConfig {
  Identity identity;
  std::size_t read_ahead_bytes = kDefaultReadAheadBytes;  // 0: off
};

struct ClientConfig {
  std::string ca_file;    // trust the CAs in this PEM file
  std::string ca_pem;     // or trust this PEM CA held in memory (the embedded server's)
  bool insecure = false;  // or verify nothing; neither set: the system's trust store
  std::string cipher;     // TLS 1.3 suite names or a TLS 1.2 cipher list; empty: library defaults
  std::size_t read_ahead_bytes = kDefaultReadAheadBytes;  // 0: off
};

// One configured TLS context (certificates, trust, ciphers), shared by the
// streams it makes. Copies share the same context. Throws tlscmp::Error
// naming the cause when the configuration cannot be used.
class Context {
 public:
  static Context for_server(const ServerConfig& config);
  static Context for_client(const ClientConfig& config);

  // Wrap a connected socket; TlsStream::handshake() then runs the handshake.
  std::unique_ptr<TlsStream> server_stream(UniqueFd fd) const;
  // `host` is checked against the server's certificate (DNS name or IP address).
  std::unique_ptr<TlsStream> client_stream(UniqueFd fd, const std::string& host) const;

 private:
  explicit Context(std::shared_ptr<ssl_ctx_st> ctx) : ctx_(std::move(ctx)) {}
  std::shared_ptr<ssl_ctx_st> ctx_;
};

// Name and version of the TLS library in use, e.g. "OpenSSL 3.0.19 27 Jan 2026".
std::string library_version();

}  // namespace tlscmp::tls
