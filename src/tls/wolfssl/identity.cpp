// Certificates through wolfCrypt and wolfSSL's X.509 API: what `tlscmp
// certs` makes, what a server is given, what a run reports of a certificate.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <wolfssl/wolfcrypt/asn.h>
#include <wolfssl/wolfcrypt/hash.h>

#include <array>
#include <cstring>
#include <ctime>

#include "error.hpp"
#include "tls/wolfssl/keys.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

using Der = std::vector<byte>;

// DER's length octets for `size` bytes.
void put_length(Der& out, std::size_t size) {
  if (size < 0x80) {
    out.push_back(static_cast<byte>(size));
  } else if (size < 0x100) {
    out.insert(out.end(), {0x81, static_cast<byte>(size)});
  } else {
    out.insert(out.end(), {0x82, static_cast<byte>(size >> 8), static_cast<byte>(size & 0xff)});
  }
}

// The subjectAltName's GeneralNames: DNS names [2] and IP addresses [7].
Der alt_names(const std::vector<std::string>& hosts) {
  Der names;
  for (const std::string& host : hosts) {
    std::array<unsigned char, 16> raw{};
    std::size_t size = 0;
    if (::inet_pton(AF_INET, host.c_str(), raw.data()) == 1)
      size = 4;
    else if (::inet_pton(AF_INET6, host.c_str(), raw.data()) == 1)
      size = 16;
    names.push_back(size != 0 ? 0x87 : 0x82);
    put_length(names, size != 0 ? size : host.size());
    if (size != 0)
      names.insert(names.end(), raw.begin(), raw.begin() + static_cast<long>(size));
    else
      names.insert(names.end(), host.begin(), host.end());
  }
  Der out{0x30};
  put_length(out, names.size());
  out.insert(out.end(), names.begin(), names.end());
  return out;
}

void check_wc(int ret, const char* what) {
  if (ret < 0) throw Error(fmt::format("wolfCrypt cannot {}: {}", what, reason(ret)));
}

// A certificate for `key`, named O=tlscmp, CN=`common_name`, before its
// issuer's name, extensions and signature are set.
void start_certificate(Cert& cert, const std::string& common_name, int validity_days, Random& random) {
  check_wc(wc_InitCert(&cert), "start a certificate");
  std::strncpy(cert.subject.org, "tlscmp", CTC_NAME_SIZE - 1);
  std::strncpy(cert.subject.commonName, common_name.c_str(), CTC_NAME_SIZE - 1);
  cert.daysValid = validity_days;
  cert.serialSz = 16;
  check_wc(wc_RNG_GenerateBlock(&random.rng, cert.serial, 16), "draw a serial number");
  cert.serial[0] = static_cast<byte>((cert.serial[0] & 0x7f) | 0x01);  // positive, and 16 bytes long
}

// `cert` for `key`, signed by `issuer`: its DER.
Der sign(Cert& cert, WcKey& key, WcKey& issuer, Random& random) {
  cert.sigType = issuer.signature_type();
  check_wc(wc_SetSubjectKeyIdFromPublicKey_ex(&cert, key.type(), key.native()), "set a key identifier");
  Der der(16384);
  check_wc(wc_MakeCert_ex(&cert, der.data(), static_cast<word32>(der.size()), key.type(), key.native(),
                          &random.rng),
           "make a certificate");
  const int size = wc_SignCert_ex(cert.bodySz, cert.sigType, der.data(), static_cast<word32>(der.size()),
                                  issuer.type(), issuer.native(), &random.rng);
  check_wc(size, "sign a certificate");
  der.resize(static_cast<std::size_t>(size));
  return der;
}

Identity issue(const std::string& common_name, const char* purpose, const std::vector<std::string>& names,
               const Der& ca, WcKey& ca_key, int validity_days, KeyType key_type, Random& random) {
  std::unique_ptr<WcKey> key = WcKey::generate(key_type, random);
  Cert cert;
  start_certificate(cert, common_name, validity_days, random);
  check_wc(wc_SetIssuerBuffer(&cert, ca.data(), static_cast<int>(ca.size())), "name a certificate's issuer");
  check_wc(wc_SetAuthKeyIdFromCert(&cert, ca.data(), static_cast<int>(ca.size())), "set the issuer's key id");
  check_wc(wc_SetKeyUsage(&cert, "digitalSignature"), "set a key usage");
  check_wc(wc_SetExtKeyUsage(&cert, purpose), "set a key purpose");
  if (!names.empty()) {
    const Der san = alt_names(names);
    if (san.size() > sizeof(cert.altNames)) throw Error("too many names for one certificate under wolfSSL");
    std::memcpy(cert.altNames, san.data(), san.size());
    cert.altNamesSz = static_cast<int>(san.size());
  }
  const Der der = sign(cert, *key, ca_key, random);
  return Identity{pem_of(der.data(), static_cast<word32>(der.size()), CERT_TYPE), key->pkcs8_pem()};
}

Der pem_to_der(const std::string& pem) {
  Der der(pem.size());
  const int size =
      wc_CertPemToDer(reinterpret_cast<const unsigned char*>(pem.data()), static_cast<int>(pem.size()),
                      der.data(), static_cast<int>(der.size()), CERT_TYPE);
  if (size <= 0) return {};
  der.resize(static_cast<std::size_t>(size));
  return der;
}

std::string time_text(const WOLFSSL_ASN1_TIME* when, std::time_t& out) {
  std::tm parts{};
  if (when == nullptr || wolfSSL_ASN1_TIME_to_tm(when, &parts) != WOLFSSL_SUCCESS) return {};
  out = ::timegm(&parts);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%SZ", &parts);
  return text.data();
}

}  // namespace

X509 leaf_certificate(const std::string& pem) {
  X509 leaf(wolfSSL_X509_load_certificate_buffer(reinterpret_cast<const unsigned char*>(pem.data()),
                                                 static_cast<int>(pem.size()), WOLFSSL_FILETYPE_PEM));
  if (!leaf) throw Error("no PEM certificate");
  return leaf;
}

std::string key_description(WOLFSSL_X509* x509) {
  std::array<unsigned char, 2048> spki{};
  int size = static_cast<int>(spki.size());
  const int type = wolfSSL_X509_get_pubkey_type(x509);
  if (type == ED25519k) return "Ed25519";
  if (wolfSSL_X509_get_pubkey_buffer(x509, spki.data(), &size) != WOLFSSL_SUCCESS) return {};
  word32 at = 0;
  if (type == RSAk) {
    RsaKey rsa;
    wc_InitRsaKey(&rsa, nullptr);
    const int bits = wc_RsaPublicKeyDecode(spki.data(), &at, &rsa, static_cast<word32>(size)) == 0
                         ? wc_RsaEncryptSize(&rsa) * 8
                         : 0;
    wc_FreeRsaKey(&rsa);
    return fmt::format("RSA {}", bits);
  }
  if (type == ECDSAk) {
    ecc_key ecc;
    wc_ecc_init(&ecc);
    const int bytes =
        wc_EccPublicKeyDecode(spki.data(), &at, &ecc, static_cast<word32>(size)) == 0 ? wc_ecc_size(&ecc) : 0;
    wc_ecc_free(&ecc);
    return bytes == 32 ? "ECDSA P-256" : bytes == 48 ? "ECDSA P-384" : bytes == 66 ? "ECDSA P-521" : "ECDSA";
  }
  return {};
}

CertificateSet WolfsslBackend::generate_certificates(const std::vector<std::string>& extra_hosts,
                                                     int validity_days, KeyType key_type,
                                                     const std::optional<Identity>& given_ca) const {
  on_this_thread();
  Random random;
  std::unique_ptr<WcKey> ca_key;
  Der ca;
  if (given_ca) {
    ca = pem_to_der(given_ca->certificate_chain_pem);
    ca_key = WcKey::from_pem(given_ca->private_key_pem);
    if (ca.empty() || !ca_key) throw Error("the CA's certificate or key cannot be read");
    X509 parsed(wolfSSL_X509_d2i(nullptr, ca.data(), static_cast<int>(ca.size())));
    if (!parsed || wolfSSL_X509_get_isCA(parsed.get()) == 0)
      throw Error("the CA's certificate is not a CA certificate (no CA:TRUE)");
  } else {
    ca_key = WcKey::generate(key_type, random);
    Cert cert;
    start_certificate(cert, "tlscmp CA", validity_days, random);
    cert.isCA = 1;
    check_wc(wc_SetAuthKeyIdFromPublicKey_ex(&cert, ca_key->type(), ca_key->native()), "set the CA's key id");
    check_wc(wc_SetKeyUsage(&cert, "keyCertSign,cRLSign"), "set the CA's key usage");
    ca = sign(cert, *ca_key, *ca_key, random);
  }
  CertificateSet set;
  set.ca = Identity{pem_of(ca.data(), static_cast<word32>(ca.size()), CERT_TYPE), ca_key->pkcs8_pem()};
  set.server = issue("tlscmp server", "serverAuth", server_certificate_names(extra_hosts), ca, *ca_key,
                     validity_days, key_type, random);
  set.client = issue("tlscmp client", "clientAuth", {}, ca, *ca_key, validity_days, key_type, random);
  return set;
}

Identity WolfsslBackend::load_identity(const std::string& cert_file, const std::string& key_file) const {
  Identity id{read_text_file(cert_file, "certificate file"), read_text_file(key_file, "key file")};
  if (pem_to_der(id.certificate_chain_pem).empty())
    throw Error(fmt::format("certificate file '{}' holds no PEM certificate", cert_file));
  if (!WcKey::from_pem(id.private_key_pem))
    throw Error(fmt::format("key file '{}' holds no unencrypted PEM private key", key_file));
  const Ctx scratch(wolfSSL_CTX_new(wolfSSLv23_server_method()), CtxDeleter{});
  const auto* chain = reinterpret_cast<const unsigned char*>(id.certificate_chain_pem.data());
  const auto* key = reinterpret_cast<const unsigned char*>(id.private_key_pem.data());
  if (!scratch ||
      wolfSSL_CTX_use_certificate_chain_buffer_format(scratch.get(), chain,
                                                      static_cast<long>(id.certificate_chain_pem.size()),
                                                      WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS ||
      wolfSSL_CTX_use_PrivateKey_buffer(scratch.get(), key, static_cast<long>(id.private_key_pem.size()),
                                        WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS ||
      wolfSSL_CTX_check_private_key(scratch.get()) != WOLFSSL_SUCCESS)
    throw Error(fmt::format("key file '{}' does not match the certificate in '{}'", key_file, cert_file));
  return id;
}

std::string WolfsslBackend::certificate_key_type(const std::string& chain_pem) const {
  try {
    return key_description(leaf_certificate(chain_pem).get());
  } catch (const Error&) {
    return {};
  }
}

CertificateFacts WolfsslBackend::certificate_facts(const std::string& chain_pem) const {
  CertificateFacts facts;
  const X509 leaf = leaf_certificate(chain_pem);
  for (char* name = wolfSSL_X509_get_next_altname(leaf.get()); name != nullptr;
       name = wolfSSL_X509_get_next_altname(leaf.get()))
    facts.names.emplace_back(name);
  std::time_t begins = 0;
  std::time_t ends = 0;
  facts.not_before = time_text(wolfSSL_X509_get_notBefore(leaf.get()), begins);
  facts.not_after = time_text(wolfSSL_X509_get_notAfter(leaf.get()), ends);
  const std::time_t now = std::time(nullptr);
  facts.not_yet_valid = now < begins;
  const long total_s = static_cast<long>(ends - now);
  facts.days_left = total_s >= 0 ? total_s / 86400 : -((-total_s + 86399) / 86400);
  return facts;
}

std::string WolfsslBackend::certificate_fingerprint(const std::string& chain_pem) const {
  const X509 leaf = leaf_certificate(chain_pem);
  int size = 0;
  const unsigned char* der = wolfSSL_X509_get_der(leaf.get(), &size);
  std::array<byte, 32> digest{};
  if (der == nullptr || wc_Sha256Hash(der, static_cast<word32>(size), digest.data()) != 0)
    throw Error("cannot take a certificate's fingerprint");
  std::string text;
  for (std::size_t i = 0; i < digest.size(); ++i)
    text += fmt::format("{}{:02X}", i == 0 ? "" : ":", digest[i]);
  return text;
}

}  // namespace tlscmp::tls::wolfssl
