#include "tls/identity.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "error.hpp"
#include "tls/ossl_ptr.hpp"
#include "tls/ssl_backend.hpp"
#include "tls/ssl_compat.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls {
namespace {

PkeyPtr new_key(KeyType type) {
  PkeyPtr key(compat::generate_key(type));
  if (!key) throw_tls_error(fmt::format("cannot generate a {} key", to_string(type)));
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509ExtPtr ext(X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1)
    throw_tls_error(fmt::format("cannot add extension '{}'", value));
}

X509Ptr new_certificate(const std::string& common_name, EVP_PKEY* key, int validity_days) {
  X509Ptr cert(X509_new());
  if (!cert) throw_tls_error("cannot allocate a certificate");
  X509_set_version(cert.get(), 2);  // X.509 v3
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) throw_tls_error("cannot draw a serial number");
  serial[0] &= 0x7f;  // a positive INTEGER
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);  // tolerate a little clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(validity_days) * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("tlscmp"), -1,
                             -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  return cert;
}

void sign(X509* cert, X509* issuer, EVP_PKEY* issuer_key) {
  X509_set_issuer_name(cert, X509_get_subject_name(issuer));
  if (X509_sign(cert, issuer_key, compat::signing_digest(issuer_key)) == 0) {
    throw_tls_error("cannot sign a certificate");
  }
}

std::string to_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) throw_tls_error("cannot encode a certificate");
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

std::string to_pem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    throw_tls_error("cannot encode a private key");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

Identity issue(const std::string& common_name, const std::string& extended_key_usage,
               const std::string& alt_names, X509* ca, EVP_PKEY* ca_key, int validity_days,
               KeyType key_type) {
  PkeyPtr key = new_key(key_type);
  X509Ptr cert = new_certificate(common_name, key.get(), validity_days);
  add_extension(cert.get(), ca, NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), ca, NID_key_usage, "critical,digitalSignature");
  add_extension(cert.get(), ca, NID_ext_key_usage, extended_key_usage);
  add_extension(cert.get(), ca, NID_subject_key_identifier, "hash");
  add_extension(cert.get(), ca, NID_authority_key_identifier, "keyid:always");
  if (!alt_names.empty()) add_extension(cert.get(), ca, NID_subject_alt_name, alt_names);
  sign(cert.get(), ca, ca_key);
  return Identity{to_pem(cert.get()), to_pem(key.get())};
}

X509Ptr leaf_of(const std::string& chain_pem) {
  BioPtr bio = memory_bio(chain_pem);
  X509Ptr leaf(PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr));
  ERR_clear_error();
  return leaf;
}

}  // namespace

CertificateSet ssl::SslBackend::generate_certificates(const std::vector<std::string>& extra_hosts,
                                                      int validity_days, KeyType key_type,
                                                      const std::optional<Identity>& given_ca) const {
  std::string alt_names;
  for (const std::string& host : server_certificate_names(extra_hosts))
    alt_names +=
        fmt::format("{}{}:{}", alt_names.empty() ? "" : ",", is_ip_literal(host) ? "IP" : "DNS", host);

  PkeyPtr ca_key;
  X509Ptr ca;
  if (given_ca) {
    ca = leaf_of(given_ca->certificate_chain_pem);
    BioPtr bio = memory_bio(given_ca->private_key_pem);
    ca_key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
    ERR_clear_error();
    if (!ca || !ca_key) throw Error("the CA's certificate or key cannot be read");
    if (X509_check_ca(ca.get()) == 0)
      throw Error("the CA's certificate is not a CA certificate (no CA:TRUE)");
  } else {
    ca_key = new_key(key_type);
    ca = new_certificate("tlscmp CA", ca_key.get(), validity_days);
    add_extension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_extension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    add_extension(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
    sign(ca.get(), ca.get(), ca_key.get());
  }

  CertificateSet set;
  set.ca = Identity{to_pem(ca.get()), to_pem(ca_key.get())};
  set.server =
      issue("tlscmp server", "serverAuth", alt_names, ca.get(), ca_key.get(), validity_days, key_type);
  set.client = issue("tlscmp client", "clientAuth", {}, ca.get(), ca_key.get(), validity_days, key_type);
  return set;
}

Identity ssl::SslBackend::load_identity(const std::string& cert_file, const std::string& key_file) const {
  Identity id{read_text_file(cert_file, "certificate file"), read_text_file(key_file, "key file")};
  X509Ptr leaf = leaf_of(id.certificate_chain_pem);
  if (!leaf) throw Error(fmt::format("certificate file '{}' holds no PEM certificate", cert_file));
  BioPtr bio = memory_bio(id.private_key_pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  ERR_clear_error();
  if (!key) {
    throw Error(fmt::format("key file '{}' holds no unencrypted PEM private key", key_file));
  }
  if (X509_check_private_key(leaf.get(), key.get()) != 1) {
    ERR_clear_error();
    throw Error(fmt::format("key file '{}' does not match the certificate in '{}'", key_file, cert_file));
  }
  return id;
}

std::string ssl::SslBackend::certificate_key_type(const std::string& chain_pem) const {
  X509Ptr leaf = leaf_of(chain_pem);
  return compat::certificate_key_type(leaf.get());
}

CertificateFacts ssl::SslBackend::certificate_facts(const std::string& chain_pem) const {
  CertificateFacts facts;
  X509Ptr leaf = leaf_of(chain_pem);
  if (!leaf) return facts;
  facts.not_before = compat::time_text(X509_get0_notBefore(leaf.get()));
  facts.not_after = compat::time_text(X509_get0_notAfter(leaf.get()));
  facts.not_yet_valid = X509_cmp_current_time(X509_get0_notBefore(leaf.get())) > 0;
  int days = 0;
  int seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, nullptr, X509_get0_notAfter(leaf.get())) == 1) {
    const long total_s = static_cast<long>(days) * 86400 + seconds;  // both carry the same sign
    facts.days_left = total_s >= 0 ? total_s / 86400 : -((-total_s + 86399) / 86400);
  }
  facts.names = compat::subject_alt_names(leaf.get());
  return facts;
}

std::string ssl::SslBackend::certificate_fingerprint(const std::string& chain_pem) const {
  X509Ptr leaf = leaf_of(chain_pem);
  if (!leaf) return {};
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (X509_digest(leaf.get(), EVP_sha256(), digest, &len) != 1) return {};
  std::string text;
  for (unsigned int i = 0; i < len; ++i)
    text += fmt::format("{}{:02X}", i == 0 ? "" : ":", digest[i]);
  return text;
}

}  // namespace tlscmp::tls
