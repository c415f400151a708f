#pragma once

// Keys through wolfCrypt (tls/wolfssl/keys.cpp): what `tlscmp certs`
// signs with under wolfSSL.

// (wolfssl/options.h, which says how the library was built, comes before
// them all: src/CMakeLists.txt.)
#include <wolfssl/wolfcrypt/asn_public.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/rsa.h>

#include <memory>
#include <string>

#include "tls/identity.hpp"

namespace tlscmp::tls::wolfssl {

// wolfCrypt's random number generator, for one making of keys and certificates.
struct Random {
  Random();
  ~Random();
  Random(const Random&) = delete;
  Random& operator=(const Random&) = delete;
  WC_RNG rng{};
};

// An RSA, ECDSA or Ed25519 private key.
class WcKey {
 public:
  WcKey() = default;
  ~WcKey();
  WcKey(const WcKey&) = delete;
  WcKey& operator=(const WcKey&) = delete;

  static std::unique_ptr<WcKey> generate(KeyType type, Random& random);
  // An unencrypted PEM key (PKCS #8, or the traditional forms); null for what is not one.
  static std::unique_ptr<WcKey> from_pem(const std::string& pem);

  // RSA_TYPE, ECC_TYPE or ED25519_TYPE, and the key, as wc_MakeCert_ex takes them.
  int type() const { return type_; }
  void* native();
  // The signature a certificate signed by this key carries (SHA-256 with
  // RSA or ECDSA P-256, SHA-384 with P-384, Ed25519).
  int signature_type() const;
  // "-----BEGIN PRIVATE KEY-----", as OpenSSL and GnuTLS read it.
  std::string pkcs8_pem();

 private:
  void init(int type);

  int type_ = 0;
  bool ready_ = false;
  RsaKey rsa_{};
  ecc_key ecc_{};
  ed25519_key ed25519_{};
};

// DER as PEM of `type` (CERT_TYPE, PKCS8_PRIVATEKEY_TYPE).
std::string pem_of(const byte* der, word32 size, int type);

}  // namespace tlscmp::tls::wolfssl
