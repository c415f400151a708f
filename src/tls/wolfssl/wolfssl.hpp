#pragma once

// The backend of wolfSSL (Debian's libwolfssl-dev): tls::Backend over
// wolfSSL's own API (not its OpenSSL compatibility layer), in this folder
// alone, built into tls-wolfssl.so (src/CMakeLists.txt). Library-bound:
// only the files here include it.

// (wolfssl/options.h, which says how the library was built, comes before
// them all: src/CMakeLists.txt.)
#include <wolfssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "tls/backend.hpp"
#include "tls/tls_stream.hpp"

namespace tlscmp::tls::wolfssl {

// Throws tlscmp::Error "`what`: wolfSSL's reason" where `ret` is not
// WOLFSSL_SUCCESS (an error code of wolfSSL or wolfCrypt, or failure).
void check(int ret, const std::string& what);
// wolfSSL's words for an error code.
std::string reason(int code);
// Before wolfCrypt's ECC runs in a thread (a handshake, a key): what the
// thread keeps of it is freed as the thread ends.
void on_this_thread();

// Owners of wolfSSL's objects.
struct CtxDeleter {
  void operator()(WOLFSSL_CTX* c) const { wolfSSL_CTX_free(c); }
};
using Ctx = std::shared_ptr<WOLFSSL_CTX>;
struct X509Deleter {
  void operator()(WOLFSSL_X509* x) const { wolfSSL_X509_free(x); }
};
using X509 = std::unique_ptr<WOLFSSL_X509, X509Deleter>;
// The first certificate of a PEM chain; throws tlscmp::Error where there is none.
X509 leaf_certificate(const std::string& pem);
// "ECDSA P-256", "RSA 2048", "Ed25519" for a certificate's key; "" for none.
std::string key_description(WOLFSSL_X509* x509);

// Names between tlscmp and wolfSSL: groups (P-256 and WOLFSSL_ECC_SECP256R1),
// suites (OpenSSL's names and wolfSSL's).
int group_id(const std::string& tlscmp_name);            // 0 where wolfSSL has it not
std::string group_name(const char* wolfssl_curve_name);  // tlscmp's
std::vector<std::string> wolfssl_groups();               // those of known_groups() it has
std::string suite_name(const char* wolfssl_name);        // OpenSSL's, where tlscmp knows it
// A context's cipher list (wolfSSL's names) and version for a policy:
// `version` comes back "1.2", "1.3" or "" (both). Throws tlscmp::Error
// naming what wolfSSL's backend cannot take.
std::string cipher_list_of(const Policy& policy, bool server, std::string& version);
// The groups of a policy, wolfSSL's ids; empty for the library's defaults.
std::vector<int> groups_of(const Policy& policy);

// What a client's Session holds.
struct SavedSession {
  std::shared_ptr<WOLFSSL_SESSION> session;
  bool ticket = false;
};
Session saved_session(WOLFSSL* ssl, bool offered_ticket);
// What a connection's handshake settled on, as `server` or client sees it;
// the byte counts are its transport's to add.
SessionInfo session_facts(WOLFSSL* ssl, bool server);

// A new connection of a context of this backend (throws for another's): a
// server's, or a client's for `host` offering `resume`.
WOLFSSL* new_server_ssl(const Context& context);
WOLFSSL* new_client_ssl(const Context& context, const std::string& host, const Session& resume,
                        const std::string& server_name = {});

// A certificate check that failed (wolfSSL_get_error's code): whether it
// is one, what kind, and in words, against `trust` (what the chain was to
// lead to).
bool is_verify_error(int error);
VerifyFailure verify_failure_of(int error);
std::string verify_failure_detail(int error, const std::string& trust);

// A context's own certificate and key; a client's trust (--ca, the embedded
// server's CA, the system's, none with --insecure) and identity, `trust`
// set to what the server's chain must lead to, in words. Throw.
void use_identity(WOLFSSL_CTX* ctx, const Identity& identity);
void use_client_trust(WOLFSSL_CTX* ctx, const ClientOptions& options, std::string& trust);
// Has `ssl` check the server's certificate against `host` (a name or an
// address). Throws.
void check_server_host(WOLFSSL* ssl, const std::string& host);

// The TLS stream over a TCP socket; a client's offers `offered` (or nothing).
std::unique_ptr<TlsStream> make_stream(UniqueFd fd, WOLFSSL* ssl, bool server, std::string trust,
                                       const SavedSession* offered = nullptr);

class WolfsslBackend final : public Backend {
 public:
  WolfsslBackend();

  const char* name() const override { return "wolfssl"; }
  std::string library_version() const override;
  std::string header_version() const override;
  std::string library_package() const override { return {}; }
  std::vector<std::string> available_groups() const override { return wolfssl_groups(); }
  bool releases_buffers_always() const override { return true; }

  Context server_context(const ServerOptions& options) const override;
  Context client_context(const ClientOptions& options) const override;

  bool dtls_available(std::string& why) const override;
  DtlsContext dtls_server_context(const Identity& identity) const override;
  DtlsContext dtls_client_context(const ClientOptions& options) const override;

  CertificateSet generate_certificates(const std::vector<std::string>& extra_hosts, int validity_days,
                                       KeyType key_type, const std::optional<Identity>& ca) const override;
  Identity load_identity(const std::string& cert_file, const std::string& key_file) const override;
  std::string certificate_key_type(const std::string& chain_pem) const override;
  CertificateFacts certificate_facts(const std::string& chain_pem) const override;
  std::string certificate_fingerprint(const std::string& chain_pem) const override;

  measure::AeadFigure measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                   double seconds) const override;
  std::unique_ptr<MemoryPairImpl> memory_pair(const Context& client, const Context& server,
                                              std::size_t buffer_bytes, const Session& resume) const override;
  const void* stack_library(std::string_view) const override { return nullptr; }
};

const WolfsslBackend& wolfssl_backend();

}  // namespace tlscmp::tls::wolfssl
