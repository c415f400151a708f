#pragma once

// A TLS library as the rest of tlscmp sees it: one table of what a library
// does (contexts, which make the streams; DTLS; keys and certificates; the
// in-memory measures of `tlscmp speed`; the facts a run states). Each
// library's backend implements it in its own files (tls/ssl_*.cpp for
// OpenSSL and BoringSSL); nothing above tls/ and the stacks' library-bound
// files includes a library's headers, so that one process can hold several
// libraries whose symbols clash (docs/development.md).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tls/context.hpp"
#include "tls/dtls.hpp"
#include "tls/identity.hpp"
#include "tls/memory.hpp"
#include "tls/speed.hpp"

namespace tlscmp::tls {

class Backend {
 public:
  virtual ~Backend() = default;

  // The name --tls-lib takes: "openssl", "boringssl".
  virtual const char* name() const = 0;

  // The facts tls/context.hpp's functions of the same names describe.
  virtual std::string library_version() const = 0;
  virtual std::string header_version() const = 0;
  virtual std::string library_package() const = 0;
  virtual std::vector<std::string> available_groups() const = 0;
  virtual bool releases_buffers_always() const = 0;

  // Contexts, whose streams it makes, through Context::for_server and
  // for_client alone: a server's options always name its groups (every one
  // the library has, where none were given).
  virtual Context server_context(const ServerOptions& options) const = 0;
  virtual Context client_context(const ClientOptions& options) const = 0;

  // DTLS 1.2 (tls/dtls.hpp): false, with why, where the library has none.
  virtual bool dtls_available(std::string& why) const = 0;
  virtual DtlsContext dtls_server_context(const Identity& identity) const = 0;
  virtual DtlsContext dtls_client_context(const ClientOptions& options) const = 0;

  // Keys and certificates (tls/identity.hpp).
  virtual CertificateSet generate_certificates(const std::vector<std::string>& extra_hosts, int validity_days,
                                               KeyType key_type, const std::optional<Identity>& ca) const = 0;
  virtual Identity load_identity(const std::string& cert_file, const std::string& key_file) const = 0;
  virtual std::string certificate_key_type(const std::string& chain_pem) const = 0;
  virtual CertificateFacts certificate_facts(const std::string& chain_pem) const = 0;
  virtual std::string certificate_fingerprint(const std::string& chain_pem) const = 0;

  // In memory (tls/speed.hpp, tls/memory.hpp): the AEAD of a suite as the
  // record layer calls it, and two connections joined in memory, over which
  // the core measures bulk, transactions, handshakes and idle sessions.
  virtual measure::AeadFigure measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                           double seconds) const = 0;
  // A client of `client` and a server of `server` (both this backend's)
  // joined in memory with `buffer_bytes` each way, the client offering
  // `resume`: what the measures of tls/speed.hpp drive. Throws tlscmp::Error.
  virtual std::unique_ptr<MemoryPairImpl> memory_pair(const Context& client, const Context& server,
                                                      std::size_t buffer_bytes,
                                                      const Session& resume) const = 0;

  // A stack that runs on this library with a table of its own, which that
  // stack's folder reads ("quic": stacks/quic/quic_library.hpp); null where
  // the library has none for it.
  virtual const void* stack_library(std::string_view stack) const = 0;
};

// The backends this process holds, the default one first (the library a
// run uses unless told otherwise): the modules of tls/backends.cpp, or the
// one a program was linked with. Throws tlscmp::Error where there is none.
std::span<const Backend* const> backends();
// Their names, as --tls-lib takes them, the default first.
std::vector<std::string> backend_names();
// The modules that were there but did not load: "PATH: why".
std::span<const std::string> backend_problems();
const Backend& default_backend();
// --tls-lib: makes the backend of that name the default; false, with `why`
// saying what there is instead, where this process holds none of it.
bool choose_default_backend(std::string_view name, std::string& why);
// The backend of that name; null where this process holds none.
const Backend* find_backend(std::string_view name);

// The backend a context of these options is made by: theirs, or the default.
inline const Backend& backend_of(const Backend* library) {
  return library != nullptr ? *library : default_backend();
}

}  // namespace tlscmp::tls
