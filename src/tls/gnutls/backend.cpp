// GnuTLS's facts, what it lacks here, and the entry the core finds the
// module by (tls/backends.cpp).

#include <fmt/format.h>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"

namespace tlscmp::tls::gnutls {

int check(int ret, const std::string& what) {
  if (ret < 0) throw Error(fmt::format("{}: {}", what, gnutls_strerror(ret)));
  return ret;
}

Credentials new_credentials() {
  gnutls_certificate_credentials_t made = nullptr;
  check(gnutls_certificate_allocate_credentials(&made), "cannot make GnuTLS credentials");
  return Credentials(made, CredentialsDeleter{});
}

std::string GnutlsBackend::library_version() const {
  return fmt::format("GnuTLS {}", gnutls_check_version(nullptr));
}

std::string GnutlsBackend::header_version() const {
  return fmt::format("GnuTLS {}", GNUTLS_VERSION);
}

const GnutlsBackend& gnutls_backend() {
  static const GnutlsBackend backend;
  return backend;
}

}  // namespace tlscmp::tls::gnutls

// The entry the core finds a backend by (tls/backends.cpp).
extern "C" const tlscmp::tls::Backend* tlscmp_tls_backend_v1() {
  return &tlscmp::tls::gnutls::gnutls_backend();
}
