#include "support/certificates.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace tlscmp::test {
namespace {

struct FileClose {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileClose>;

File open(const std::filesystem::path& path, const char* mode) {
  File f(std::fopen(path.c_str(), mode));
  if (!f) throw std::runtime_error("cannot open " + path.string());
  return f;
}

std::unique_ptr<X509, void (*)(X509*)> read_certificate(const std::filesystem::path& path) {
  X509* cert = PEM_read_X509(open(path, "r").get(), nullptr, nullptr, nullptr);
  if (cert == nullptr) throw std::runtime_error("no certificate in " + path.string());
  return {cert, X509_free};
}

std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> read_key(const std::filesystem::path& path) {
  EVP_PKEY* key = PEM_read_PrivateKey(open(path, "r").get(), nullptr, nullptr, nullptr);
  if (key == nullptr) throw std::runtime_error("no key in " + path.string());
  return {key, EVP_PKEY_free};
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr || X509_add_ext(cert, ext, -1) != 1) throw std::runtime_error("cannot add an extension");
  X509_EXTENSION_free(ext);
}

}  // namespace

void reissue_server_certificate(const std::filesystem::path& dir, long not_before_s, long not_after_s) {
  const auto ca = read_certificate(dir / "ca.pem");
  const auto ca_key = read_key(dir / "ca.key");
  const auto key = read_key(dir / "server.key");
  std::unique_ptr<X509, void (*)(X509*)> cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 4242);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), not_before_s);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), not_after_s);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("tlscmp server"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  add_extension(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), ca.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), ca.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) throw std::runtime_error("cannot sign");
  if (PEM_write_X509(open(dir / "server.pem", "w").get(), cert.get()) != 1)
    throw std::runtime_error("cannot write server.pem");
}

}  // namespace tlscmp::test
