#pragma once

// Context setup shared by the TLS and DTLS contexts; internal to src/tls/.

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "tls/context.hpp"
#include "tls/identity.hpp"

namespace tlscmp::tls::detail {

// A context for `method` limited to min_version..max_version. Throws tlscmp::Error.
std::shared_ptr<SSL_CTX> new_context(const SSL_METHOD* method, int min_version, int max_version);
// The certificate chain and key; throws if they cannot be used or do not match.
void use_identity(SSL_CTX* ctx, const Identity& identity);
void trust_pem(SSL_CTX* ctx, const std::string& pem);
// `what` names the file in messages ("CA file").
void trust_file(SSL_CTX* ctx, const std::string& file, const char* what);
// Verify the server as the client config says: --insecure, --ca, the embedded CA, or the system's store.
void set_client_trust(SSL_CTX* ctx, const ClientConfig& config);

}  // namespace tlscmp::tls::detail
