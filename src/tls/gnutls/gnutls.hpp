#pragma once

// The backend of GnuTLS (Debian's libgnutls28-dev): tls::Backend over
// gnutls_session_t, in this folder alone, built into tls-gnutls.so
// (src/CMakeLists.txt). Library-bound: only the files here include it.

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <memory>
#include <string>
#include <vector>

#include "tls/backend.hpp"
#include "tls/tls_stream.hpp"

namespace tlscmp::tls::gnutls {

// Text as GnuTLS's datum, which GnuTLS only reads.
inline gnutls_datum_t datum(const std::string& text) {
  return {reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())),
          static_cast<unsigned>(text.size())};
}

// Throws tlscmp::Error "`what`: GnuTLS's reason" where `ret` is an error.
int check(int ret, const std::string& what);

// Owners of GnuTLS's objects.
struct CredentialsDeleter {
  void operator()(gnutls_certificate_credentials_st* c) const { gnutls_certificate_free_credentials(c); }
};
using Credentials = std::shared_ptr<gnutls_certificate_credentials_st>;
Credentials new_credentials();
struct CrtDeleter {
  void operator()(gnutls_x509_crt_int* c) const { gnutls_x509_crt_deinit(c); }
};
using Crt = std::unique_ptr<gnutls_x509_crt_int, CrtDeleter>;
// The first certificate of a PEM chain (or one DER certificate). Throws.
Crt leaf_certificate(const std::string& pem);
Crt der_certificate(const gnutls_datum_t& der);
// "ECDSA P-256", "RSA 2048", "Ed25519" for a certificate's key.
std::string key_description(gnutls_x509_crt_t crt);

// Names between tlscmp and GnuTLS: groups ("P-256" and GROUP-SECP256R1),
// the suites tlscmp knows (OpenSSL's names and GnuTLS's priorities).
std::string group_priority(const std::string& tlscmp_name);  // "" where GnuTLS has it not
std::string group_name(gnutls_group_t group);                // tlscmp's name
std::vector<std::string> gnutls_groups();                    // those of known_groups() it has
// The negotiated suite as tlscmp and OpenSSL name it ("TLS_AES_128_GCM_SHA256",
// "ECDHE-ECDSA-AES128-GCM-SHA256"); GnuTLS's own name for one it does not know.
std::string suite_name(gnutls_session_t session);
// The priority string of a policy: versions, suites, groups. Throws
// tlscmp::Error naming what GnuTLS cannot take.
std::string priority_of(const Policy& policy, bool server);

// What a client's Session holds: the session's data, and whether the
// server gave it a ticket (TLS 1.2 resumes by ticket or by session ID).
struct SavedSession {
  std::vector<unsigned char> data;
  bool ticket = false;
};

// What kind of failure the session's check of the peer's certificate found.
VerifyFailure verify_failure_of(gnutls_session_t session);

// What a session's handshake settled on (version and suite as OpenSSL
// names them, the group, each side's certificate key, whether it resumed),
// as `server` or client sees it; the byte counts are its transport's to add.
SessionInfo session_facts(gnutls_session_t session, bool server);
// A client's session to resume next time (TLS 1.3: once a ticket came);
// `offered_ticket`: the session it resumed came with one.
Session saved_session(gnutls_session_t session, bool offered_ticket);

// A new session of a context of this backend (throws for another's): a
// server's, or a client's for `host` offering `resume`.
gnutls_session_t new_server_session(const Context& context);
// A client's session, with what it checks the server's certificate against:
// GnuTLS keeps pointers to the name or address it is given
// (gnutls_session_set_verify_cert), so they are to live as long as the session.
struct ClientSession {
  gnutls_session_t session = nullptr;
  std::shared_ptr<void> verify_target;
};
ClientSession new_client_session(const Context& context, const std::string& host, const Session& resume);

// Credentials of a server's identity; of a client's trust (--ca, the
// embedded server's CA, the system's, none with --insecure) and identity,
// `trust` set to what the server's chain must lead to, in words. Throw.
Credentials identity_credentials(const Identity& identity);
Credentials client_credentials(const ClientOptions& options, std::string& trust);
// Has `session` check the server's certificate against `host` (a name or an
// address); what it returns holds what the session points to, and is to
// live as long as the session.
std::shared_ptr<void> verify_host(gnutls_session_t session, const std::string& host);

// The TLS stream over a TCP socket; a client's offers `offered` (or nothing).
// `keep`: what lives as long as the session (a client's verify target).
std::unique_ptr<TlsStream> make_stream(UniqueFd fd, gnutls_session_t session, bool server, std::string trust,
                                       const SavedSession* offered = nullptr,
                                       std::shared_ptr<void> keep = {});

class GnutlsBackend final : public Backend {
 public:
  const char* name() const override { return "gnutls"; }
  std::string library_version() const override;
  std::string header_version() const override;
  std::string library_package() const override { return {}; }
  std::vector<std::string> available_groups() const override { return gnutls_groups(); }
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

const GnutlsBackend& gnutls_backend();

}  // namespace tlscmp::tls::gnutls
