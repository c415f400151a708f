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

bool GnutlsBackend::dtls_available(std::string& why) const {
  why =
      "tlscmp's GnuTLS backend has no DTLS yet (GnuTLS has DTLS 1.2: to come); DTLS tests need OpenSSL "
      "(--tls-lib openssl, or openssl first in its list)";
  return false;
}

DtlsContext GnutlsBackend::dtls_server_context(const Identity&) const {
  std::string why;
  dtls_available(why);
  throw Error(why);
}

DtlsContext GnutlsBackend::dtls_client_context(const ClientOptions&) const {
  std::string why;
  dtls_available(why);
  throw Error(why);
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
