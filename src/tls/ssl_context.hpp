#pragma once

// A context of the OpenSSL family (tls::ContextImpl over an SSL_CTX), for the
// files that make its connections: its streams, the memory pair, QUIC's.
// Library-bound: only the files built with the library include it.

#include <memory>
#include <string>

#include "tls/context.hpp"

struct ssl_ctx_st;
struct ssl_st;

namespace tlscmp::tls::ssl {

class SslContext final : public ContextImpl {
 public:
  struct ServerState;  // a server's: contexts by SNI name, granted ciphers
  SslContext(std::shared_ptr<ssl_ctx_st> ctx, std::shared_ptr<ServerState> server, std::string trust)
      : ctx_(std::move(ctx)), server_(std::move(server)), trust_(std::move(trust)) {}

  std::unique_ptr<TlsStream> server_stream(UniqueFd fd) const override;
  std::unique_ptr<TlsStream> client_stream(UniqueFd fd, const std::string& host, const Session& resume,
                                           const std::string& server_name) const override;
  void add_server_name(const std::string& server_name, const ContextImpl& other) override;
  CipherGrant grant_cipher(const std::string& cipher) const override;

  // A server's new connection. Throws tlscmp::Error.
  ssl_st* new_server_ssl() const;
  // A client's new connection that checks `host` and offers `resume`
  // (client_stream's arguments). Throws tlscmp::Error.
  ssl_st* new_client_ssl(const std::string& host, const Session& resume,
                         const std::string& server_name) const;
  ssl_ctx_st* native() const { return ctx_.get(); }

 private:
  std::shared_ptr<ssl_ctx_st> ctx_;
  std::shared_ptr<ServerState> server_;
  std::string trust_;  // client: what the server's chain must lead to, in words
};

// The SslContext of `context`. Throws tlscmp::Error where another library made it.
const SslContext& ssl_context(const Context& context);

}  // namespace tlscmp::tls::ssl
