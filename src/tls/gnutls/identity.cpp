// Keys and certificates through GnuTLS's X.509 API: what `tlscmp certs`
// makes, what a server is given, what a run reports of a certificate.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls::gnutls {
namespace {

struct KeyDeleter {
  void operator()(gnutls_x509_privkey_int* k) const { gnutls_x509_privkey_deinit(k); }
};
using Key = std::unique_ptr<gnutls_x509_privkey_int, KeyDeleter>;

std::string take_text(gnutls_datum_t& d) {
  std::string out(reinterpret_cast<char*>(d.data), d.size);
  gnutls_free(d.data);
  return out;
}

Key new_key(KeyType type) {
  gnutls_x509_privkey_t made = nullptr;
  check(gnutls_x509_privkey_init(&made), "cannot make a key");
  Key key(made);
  gnutls_pk_algorithm_t algorithm = GNUTLS_PK_RSA;
  unsigned bits = 0;
  switch (type) {
    case KeyType::rsa_2048:
      bits = 2048;
      break;
    case KeyType::rsa_3072:
      bits = 3072;
      break;
    case KeyType::rsa_4096:
      bits = 4096;
      break;
    case KeyType::ecdsa_p256:
      algorithm = GNUTLS_PK_ECDSA;
      bits = GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1);
      break;
    case KeyType::ecdsa_p384:
      algorithm = GNUTLS_PK_ECDSA;
      bits = GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP384R1);
      break;
    case KeyType::ed25519:
      algorithm = GNUTLS_PK_EDDSA_ED25519;
      bits = GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_ED25519);
      break;
  }
  check(gnutls_x509_privkey_generate2(key.get(), algorithm, bits, 0, nullptr, 0),
        fmt::format("cannot make a {} key", to_string(type)));
  return key;
}

Crt new_certificate(const std::string& common_name, gnutls_x509_privkey_t key, int validity_days) {
  gnutls_x509_crt_t made = nullptr;
  check(gnutls_x509_crt_init(&made), "cannot make a certificate");
  Crt crt(made);
  std::array<unsigned char, 16> serial{};
  check(gnutls_rnd(GNUTLS_RND_NONCE, serial.data(), serial.size()), "cannot draw a serial number");
  serial[0] &= 0x7f;  // a positive number
  const std::time_t now = std::time(nullptr);
  const std::string dn = fmt::format("O=tlscmp,CN={}", common_name);
  check(gnutls_x509_crt_set_version(crt.get(), 3), "certificate version");
  check(gnutls_x509_crt_set_serial(crt.get(), serial.data(), serial.size()), "certificate serial");
  check(gnutls_x509_crt_set_activation_time(crt.get(), now - 60), "certificate start");
  check(gnutls_x509_crt_set_expiration_time(crt.get(), now + static_cast<std::time_t>(validity_days) * 86400),
        "certificate end");
  check(gnutls_x509_crt_set_dn(crt.get(), dn.c_str(), nullptr), "certificate name");
  check(gnutls_x509_crt_set_key(crt.get(), key), "certificate key");
  std::array<unsigned char, 64> id{};
  std::size_t id_size = id.size();
  check(gnutls_x509_crt_get_key_id(crt.get(), 0, id.data(), &id_size), "certificate key id");
  check(gnutls_x509_crt_set_subject_key_id(crt.get(), id.data(), id_size), "certificate key id");
  return crt;
}

void sign(gnutls_x509_crt_t crt, gnutls_x509_crt_t issuer, gnutls_x509_privkey_t issuer_key) {
  gnutls_privkey_t signer = nullptr;
  check(gnutls_privkey_init(&signer), "cannot sign a certificate");
  const std::unique_ptr<gnutls_privkey_st, void (*)(gnutls_privkey_t)> held(signer, gnutls_privkey_deinit);
  check(gnutls_privkey_import_x509(signer, issuer_key, 0), "cannot sign a certificate");
  std::array<unsigned char, 64> id{};
  std::size_t id_size = id.size();
  if (gnutls_x509_crt_get_subject_key_id(issuer, id.data(), &id_size, nullptr) >= 0)
    gnutls_x509_crt_set_authority_key_id(crt, id.data(), id_size);
  const bool eddsa = gnutls_x509_privkey_get_pk_algorithm(issuer_key) == GNUTLS_PK_EDDSA_ED25519;
  check(gnutls_x509_crt_privkey_sign(crt, issuer, signer, eddsa ? GNUTLS_DIG_SHA512 : GNUTLS_DIG_SHA256, 0),
        "cannot sign a certificate");
}

std::string crt_pem(gnutls_x509_crt_t crt) {
  gnutls_datum_t out{};
  check(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out), "cannot encode a certificate");
  return take_text(out);
}

std::string key_pem(gnutls_x509_privkey_t key) {
  gnutls_datum_t out{};
  check(gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, nullptr, GNUTLS_PKCS_PLAIN, &out),
        "cannot encode a private key");
  return take_text(out);
}

void add_name(gnutls_x509_crt_t crt, const std::string& host) {
  std::array<unsigned char, 16> raw{};
  if (::inet_pton(AF_INET, host.c_str(), raw.data()) == 1) {
    check(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, raw.data(), 4, GNUTLS_FSAN_APPEND),
          "certificate address");
  } else if (::inet_pton(AF_INET6, host.c_str(), raw.data()) == 1) {
    check(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, raw.data(), 16, GNUTLS_FSAN_APPEND),
          "certificate address");
  } else {
    check(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, host.data(),
                                               static_cast<unsigned>(host.size()), GNUTLS_FSAN_APPEND),
          "certificate name");
  }
}

Identity issue(const std::string& common_name, const char* purpose, const std::vector<std::string>& names,
               gnutls_x509_crt_t ca, gnutls_x509_privkey_t ca_key, int validity_days, KeyType key_type) {
  Key key = new_key(key_type);
  Crt crt = new_certificate(common_name, key.get(), validity_days);
  check(gnutls_x509_crt_set_basic_constraints(crt.get(), 0, -1), "certificate constraints");
  check(gnutls_x509_crt_set_key_usage(crt.get(), GNUTLS_KEY_DIGITAL_SIGNATURE), "certificate key usage");
  check(gnutls_x509_crt_set_key_purpose_oid(crt.get(), purpose, 0), "certificate purpose");
  for (const std::string& name : names)
    add_name(crt.get(), name);
  sign(crt.get(), ca, ca_key);
  return Identity{crt_pem(crt.get()), key_pem(key.get())};
}

Key read_key(const std::string& pem) {
  gnutls_x509_privkey_t made = nullptr;
  check(gnutls_x509_privkey_init(&made), "cannot read a key");
  Key key(made);
  const gnutls_datum_t d = datum(pem);
  if (gnutls_x509_privkey_import2(key.get(), &d, GNUTLS_X509_FMT_PEM, nullptr, GNUTLS_PKCS_PLAIN) < 0)
    return nullptr;
  return key;
}

std::string time_text(std::time_t t) {
  std::tm parts{};
  ::gmtime_r(&t, &parts);
  std::array<char, 32> out{};
  std::strftime(out.data(), out.size(), "%Y-%m-%d %H:%M:%SZ", &parts);
  return out.data();
}

}  // namespace

Crt der_certificate(const gnutls_datum_t& der) {
  gnutls_x509_crt_t made = nullptr;
  check(gnutls_x509_crt_init(&made), "cannot read a certificate");
  Crt crt(made);
  check(gnutls_x509_crt_import(crt.get(), &der, GNUTLS_X509_FMT_DER), "cannot read a certificate");
  return crt;
}

Crt leaf_certificate(const std::string& pem) {
  gnutls_x509_crt_t made = nullptr;
  check(gnutls_x509_crt_init(&made), "cannot read a certificate");
  Crt crt(made);
  const gnutls_datum_t d = datum(pem);
  check(gnutls_x509_crt_import(crt.get(), &d, GNUTLS_X509_FMT_PEM), "no PEM certificate");
  return crt;
}

std::string key_description(gnutls_x509_crt_t crt) {
  unsigned bits = 0;
  const int algorithm = gnutls_x509_crt_get_pk_algorithm(crt, &bits);
  switch (algorithm) {
    case GNUTLS_PK_RSA:
    case GNUTLS_PK_RSA_PSS:
      return fmt::format("RSA {}", bits);
    case GNUTLS_PK_EDDSA_ED25519:
      return "Ed25519";
    case GNUTLS_PK_ECDSA: {
      gnutls_ecc_curve_t curve = GNUTLS_ECC_CURVE_INVALID;
      gnutls_x509_crt_get_pk_ecc_raw(crt, &curve, nullptr, nullptr);
      if (curve == GNUTLS_ECC_CURVE_SECP256R1) return "ECDSA P-256";
      if (curve == GNUTLS_ECC_CURVE_SECP384R1) return "ECDSA P-384";
      if (curve == GNUTLS_ECC_CURVE_SECP521R1) return "ECDSA P-521";
      return fmt::format("ECDSA {}", gnutls_ecc_curve_get_name(curve));
    }
    default:
      return gnutls_pk_algorithm_get_name(static_cast<gnutls_pk_algorithm_t>(algorithm));
  }
}

CertificateSet GnutlsBackend::generate_certificates(const std::vector<std::string>& extra_hosts,
                                                    int validity_days, KeyType key_type,
                                                    const std::optional<Identity>& given_ca) const {
  Key ca_key;
  Crt ca;
  if (given_ca) {
    try {
      ca = leaf_certificate(given_ca->certificate_chain_pem);
    } catch (const Error&) {
    }
    ca_key = read_key(given_ca->private_key_pem);
    if (!ca || !ca_key) throw Error("the CA's certificate or key cannot be read");
    unsigned is_ca = 0;
    if (gnutls_x509_crt_get_basic_constraints(ca.get(), nullptr, &is_ca, nullptr) < 0 || is_ca == 0)
      throw Error("the CA's certificate is not a CA certificate (no CA:TRUE)");
  } else {
    ca_key = new_key(key_type);
    ca = new_certificate("tlscmp CA", ca_key.get(), validity_days);
    check(gnutls_x509_crt_set_basic_constraints(ca.get(), 1, 0), "CA constraints");
    check(gnutls_x509_crt_set_key_usage(ca.get(), GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN),
          "CA usage");
    sign(ca.get(), ca.get(), ca_key.get());
  }
  CertificateSet set;
  set.ca = Identity{crt_pem(ca.get()), key_pem(ca_key.get())};
  set.server = issue("tlscmp server", GNUTLS_KP_TLS_WWW_SERVER, server_certificate_names(extra_hosts),
                     ca.get(), ca_key.get(), validity_days, key_type);
  set.client =
      issue("tlscmp client", GNUTLS_KP_TLS_WWW_CLIENT, {}, ca.get(), ca_key.get(), validity_days, key_type);
  return set;
}

Identity GnutlsBackend::load_identity(const std::string& cert_file, const std::string& key_file) const {
  Identity id{read_text_file(cert_file, "certificate file"), read_text_file(key_file, "key file")};
  try {
    leaf_certificate(id.certificate_chain_pem);
  } catch (const Error&) {
    throw Error(fmt::format("certificate file '{}' holds no PEM certificate", cert_file));
  }
  if (!read_key(id.private_key_pem))
    throw Error(fmt::format("key file '{}' holds no unencrypted PEM private key", key_file));
  Credentials scratch = new_credentials();
  const gnutls_datum_t chain = datum(id.certificate_chain_pem);
  const gnutls_datum_t key = datum(id.private_key_pem);
  if (gnutls_certificate_set_x509_key_mem(scratch.get(), &chain, &key, GNUTLS_X509_FMT_PEM) < 0)
    throw Error(fmt::format("key file '{}' does not match the certificate in '{}'", key_file, cert_file));
  return id;
}

std::string GnutlsBackend::certificate_key_type(const std::string& chain_pem) const {
  try {
    return key_description(leaf_certificate(chain_pem).get());
  } catch (const Error&) {
    return {};
  }
}

CertificateFacts GnutlsBackend::certificate_facts(const std::string& chain_pem) const {
  CertificateFacts facts;
  const Crt leaf = leaf_certificate(chain_pem);
  for (unsigned i = 0;; ++i) {
    std::array<char, 512> name{};
    std::size_t size = name.size();
    const int type = gnutls_x509_crt_get_subject_alt_name(leaf.get(), i, name.data(), &size, nullptr);
    if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE || type < 0) break;
    if (type == GNUTLS_SAN_DNSNAME) facts.names.emplace_back(name.data(), size);
    if (type == GNUTLS_SAN_IPADDRESS && (size == 4 || size == 16)) {
      std::array<char, INET6_ADDRSTRLEN> text{};
      ::inet_ntop(size == 4 ? AF_INET : AF_INET6, name.data(), text.data(), text.size());
      facts.names.emplace_back(text.data());
    }
  }
  const std::time_t begins = gnutls_x509_crt_get_activation_time(leaf.get());
  const std::time_t ends = gnutls_x509_crt_get_expiration_time(leaf.get());
  const std::time_t now = std::time(nullptr);
  facts.not_before = time_text(begins);
  facts.not_after = time_text(ends);
  facts.not_yet_valid = now < begins;
  const long total_s = static_cast<long>(ends - now);
  facts.days_left = total_s >= 0 ? total_s / 86400 : -((-total_s + 86399) / 86400);
  return facts;
}

std::string GnutlsBackend::certificate_fingerprint(const std::string& chain_pem) const {
  const Crt leaf = leaf_certificate(chain_pem);
  std::array<unsigned char, 64> digest{};
  std::size_t size = digest.size();
  check(gnutls_x509_crt_get_fingerprint(leaf.get(), GNUTLS_DIG_SHA256, digest.data(), &size),
        "cannot take a certificate's fingerprint");
  std::string text;
  for (std::size_t i = 0; i < size; ++i)
    text += fmt::format("{}{:02X}", i == 0 ? "" : ":", digest[i]);
  return text;
}

}  // namespace tlscmp::tls::gnutls
