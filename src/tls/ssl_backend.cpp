#include "tls/ssl_backend.hpp"

#include "tls/ssl_compat.hpp"

namespace tlscmp::tls::ssl {

const char* SslBackend::name() const {
#ifdef OPENSSL_IS_BORINGSSL
  return "boringssl";
#else
  return "openssl";
#endif
}

std::string SslBackend::library_version() const {
  return compat::library_version();
}

std::string SslBackend::header_version() const {
  return compat::header_version();
}

std::string SslBackend::library_package() const {
#ifdef TLSCMP_BORINGSSL_PACKAGE
  return TLSCMP_BORINGSSL_PACKAGE;
#else
  return {};
#endif
}

std::vector<std::string> SslBackend::available_groups() const {
  std::vector<std::string> groups;
  for (const std::string& group : known_groups()) {
    if (compat::has_group(group.c_str())) groups.push_back(group);
  }
  return groups;
}

bool SslBackend::releases_buffers_always() const {
  return SSL_MODE_RELEASE_BUFFERS == 0;
}

const void* SslBackend::stack_library(std::string_view stack) const {
  return stack == "quic" ? quic_library_entry() : nullptr;
}

const SslBackend& ssl_backend() {
  static const SslBackend backend;
  return backend;
}

}  // namespace tlscmp::tls::ssl

// The entry the core finds a backend by (tls/backends.cpp).
extern "C" const tlscmp::tls::Backend* tlscmp_tls_backend_v1() {
  return &tlscmp::tls::ssl::ssl_backend();
}
