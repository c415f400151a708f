#include "kinds/tls_failure.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// The TLS library's words for "no version, suite or group in common".
bool is_negotiation_failure(const std::string& detail) {
  for (const char* sign :
       {"handshake failure", "protocol version", "no shared", "no suitable", "unsupported protocol",
        "wrong version number", "insufficient security", "no cipher"}) {
    if (detail.find(sign) != std::string::npos) return true;
  }
  return false;
}

std::string client_certificate_hint(const std::string& detail) {
  if (detail.find("certificate required") != std::string::npos) {
    return " (the server requires a client certificate: --cert FILE --key FILE)";
  }
  if (detail.find("unknown ca") != std::string::npos || detail.find("bad certificate") != std::string::npos ||
      detail.find("certificate unknown") != std::string::npos) {
    return " (the server does not trust the client certificate)";
  }
  return {};
}

// In TLS 1.3 the server judges the client certificate after the client's
// handshake is done: its verdict arrives as an alert on the first read, or, when
// the server's close reset the connection first, not at all. Then the request
// for a certificate this client did not have is the likely reason.
}  // namespace

std::string rejection_hint(const Stream& stream, const session::ClientConfig& config) {
  std::string hint = client_certificate_hint(stream.error_detail());
  const tls::TlsStream* tls = stream.tls();
  if (hint.empty() && tls != nullptr && tls->certificate_requested() && config.cert_file.empty()) {
    hint = " (the server asked for a client certificate: --cert FILE --key FILE)";
  }
  return hint;
}

namespace {

std::string offers_text(const tls::Offer& mine, const protocol::TestAccept& accept) {
  return fmt::format(
      "; the client offered versions {}, ciphers {}, groups {}; the server accepts versions {}, ciphers {}, "
      "groups {}",
      mine.versions, mine.ciphers, mine.groups, accept.tls_versions, accept.tls_ciphers, accept.tls_groups);
}

// The certificate a TLS 1.2 cipher name needs: "ECDHE-ECDSA-..." an ECDSA (or
// Ed25519) one, "ECDHE-RSA-...", "DHE-RSA-..." and plain "AES..." an RSA one.
std::string certificate_for_cipher(const std::string& cipher) {
  if (cipher.find("ECDSA") != std::string::npos) return "ECDSA";
  if (cipher.find("RSA") != std::string::npos || cipher.rfind("AES", 0) == 0) return "RSA";
  return {};
}

// "the server's certificate is ECDSA P-256; TLS 1.2 cipher ECDHE-RSA-... needs an
// RSA certificate", where no cipher of a TLS 1.2 list fits the server's
// certificate; else "".
std::string cipher_certificate_mismatch(const std::string& ciphers, const std::string& certificate) {
  if (ciphers.empty() || ciphers.rfind("TLS_", 0) == 0 || certificate.empty()) return {};
  std::string needs;
  std::size_t start = 0;
  while (start <= ciphers.size()) {
    const std::size_t end = std::min(ciphers.find(':', start), ciphers.size());
    needs = certificate_for_cipher(ciphers.substr(start, end - start));
    const bool fits = needs.empty() || (needs == "RSA" && certificate.rfind("RSA", 0) == 0) ||
                      (needs == "ECDSA" && (certificate.rfind("ECDSA", 0) == 0 || certificate == "Ed25519"));
    if (fits) return {};
    start = end + 1;
  }
  return fmt::format("the server's certificate is {}; TLS 1.2 cipher {} needs {} certificate", certificate,
                     ciphers, needs == "RSA" ? "an RSA" : "an ECDSA or Ed25519");
}

// Why a TLS handshake with the server failed, in one line that says what to
// change: the certificate (expired, not yet valid, not for this name, not
// from the trusted CA), a cipher the certificate cannot serve, or what each
// side offers when they share nothing.
}  // namespace

std::string explain_handshake_failure(const tls::TlsStream& stream, std::error_code ec,
                                      const session::ClientConfig& config, const tls::Offer& mine,
                                      const protocol::TestAccept& accept) {
  std::string reason = describe(ec, stream.error_detail());
  switch (stream.verify_failure()) {
    case tls::VerifyFailure::untrusted:
      if (config.ca_file.empty())
        reason += " (trust the server's CA with --ca FILE, or skip verification with --insecure)";
      return reason;
    case tls::VerifyFailure::name_mismatch:
      return reason + fmt::format(" (the server's certificate does not name '{}'; see tlscmp certs --host)",
                                  config.host);
    case tls::VerifyFailure::none:
      break;
    default:
      return reason;
  }
  if (!is_negotiation_failure(stream.error_detail())) return reason;
  const std::string mismatch =
      cipher_certificate_mismatch(config.tls_policy.cipher, accept.certificate_key_type);
  return mismatch.empty() ? reason + offers_text(mine, accept) : mismatch;
}

}  // namespace tlscmp::kinds
