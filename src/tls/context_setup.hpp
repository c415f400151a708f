#pragma once

// Context setup shared by the TLS and DTLS contexts; internal to src/tls/.

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "tls/context.hpp"
#include "tls/identity.hpp"

namespace tlscmp::tls::detail {

// The TLS 1.2 suites a server offers unless told otherwise (--cipher): ECDHE
// and AEAD alone, in the order of Mozilla's "intermediate" configuration, and
// the server's order decides (SSL_OP_CIPHER_SERVER_PREFERENCE). No CBC suite
// (LUCKY13, which scanners report), no static RSA key exchange. TLS 1.3 keeps
// the library's suites, all AEAD. DTLS servers take the same list.
inline constexpr const char* kServerTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// A context for `method` limited to min_version..max_version. Throws tlscmp::Error.
std::shared_ptr<SSL_CTX> new_context(const SSL_METHOD* method, int min_version, int max_version);
// The certificate chain and key; throws if they cannot be used or do not match.
void use_identity(SSL_CTX* ctx, const Identity& identity);
void trust_pem(SSL_CTX* ctx, const std::string& pem);
// `what` names the file in messages ("CA file").
void trust_file(SSL_CTX* ctx, const std::string& file, const char* what);
// Verify the server as the client config says: --insecure, --ca, the embedded CA, or the system's store.
void set_client_trust(SSL_CTX* ctx, const ClientOptions& config);

}  // namespace tlscmp::tls::detail
