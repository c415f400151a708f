#pragma once

// The backend of the OpenSSL family (OpenSSL, BoringSSL): tls::Backend over
// an SSL library, its functions defined in the tls/ files of their subject
// (context.cpp, dtls.cpp, identity.cpp, speed.cpp). Library-bound: only the
// files built with the library include it.

#include "tls/backend.hpp"

namespace tlscmp::tls::ssl {

class SslBackend final : public Backend {
 public:
  const char* name() const override;
  std::string library_version() const override;
  std::string header_version() const override;
  std::string library_package() const override;
  std::vector<std::string> available_groups() const override;
  bool releases_buffers_always() const override;

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
  const void* stack_library(std::string_view stack) const override;
};

// This library's backend, the one instance.
const SslBackend& ssl_backend();

// QUIC's table, built with this library (stacks/quic/quic.cpp: a
// stacks::QuicLibrary, whose builds without QUIC refuse).
const void* quic_library_entry();

}  // namespace tlscmp::tls::ssl
