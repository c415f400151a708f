// Keys through wolfCrypt: made, read from PEM, written as PKCS #8, for the
// certificates of tls/wolfssl/identity.cpp.

#include "tls/wolfssl/keys.hpp"

#include <fmt/format.h>
#include <wolfssl/wolfcrypt/asn.h>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {

Random::Random() {
  if (wc_InitRng(&rng) != 0) throw Error("wolfCrypt cannot start its random number generator");
}

Random::~Random() {
  wc_FreeRng(&rng);
}

WcKey::~WcKey() {
  if (!ready_) return;
  if (type_ == RSA_TYPE) wc_FreeRsaKey(&rsa_);
  if (type_ == ECC_TYPE) wc_ecc_free(&ecc_);
  if (type_ == ED25519_TYPE) wc_ed25519_free(&ed25519_);
}

void WcKey::init(int type) {
  type_ = type;
  const int ret = type == RSA_TYPE   ? wc_InitRsaKey(&rsa_, nullptr)
                  : type == ECC_TYPE ? wc_ecc_init(&ecc_)
                                     : wc_ed25519_init(&ed25519_);
  if (ret != 0) throw Error(fmt::format("wolfCrypt cannot set up a key: {}", ret));
  ready_ = true;
}

std::unique_ptr<WcKey> WcKey::generate(KeyType type, Random& random) {
  on_this_thread();
  auto key = std::make_unique<WcKey>();
  int ret = 0;
  switch (type) {
    case KeyType::rsa_2048:
    case KeyType::rsa_3072:
    case KeyType::rsa_4096: {
      key->init(RSA_TYPE);
      const int bits = type == KeyType::rsa_2048 ? 2048 : type == KeyType::rsa_3072 ? 3072 : 4096;
      ret = wc_MakeRsaKey(&key->rsa_, bits, WC_RSA_EXPONENT, &random.rng);
      break;
    }
    case KeyType::ecdsa_p256:
    case KeyType::ecdsa_p384: {
      key->init(ECC_TYPE);
      const bool p256 = type == KeyType::ecdsa_p256;
      ret = wc_ecc_make_key_ex(&random.rng, p256 ? 32 : 48, &key->ecc_, p256 ? ECC_SECP256R1 : ECC_SECP384R1);
      break;
    }
    case KeyType::ed25519:
      key->init(ED25519_TYPE);
      ret = wc_ed25519_make_key(&random.rng, ED25519_KEY_SIZE, &key->ed25519_);
      break;
  }
  if (ret != 0) throw Error(fmt::format("wolfCrypt cannot make a {} key: {}", to_string(type), ret));
  return key;
}

std::unique_ptr<WcKey> WcKey::from_pem(const std::string& pem) {
  std::vector<byte> der(pem.size());
  const int size =
      wc_KeyPemToDer(reinterpret_cast<const unsigned char*>(pem.data()), static_cast<int>(pem.size()),
                     der.data(), static_cast<int>(der.size()), nullptr);
  if (size <= 0) return nullptr;
  auto key = std::make_unique<WcKey>();
  word32 at = 0;
  key->init(ED25519_TYPE);
  if (wc_Ed25519PrivateKeyDecode(der.data(), &at, &key->ed25519_, static_cast<word32>(size)) == 0) return key;
  key = std::make_unique<WcKey>();
  word32 traditional = 0;
  if (wc_GetPkcs8TraditionalOffset(der.data(), &traditional, static_cast<word32>(size)) < 0) traditional = 0;
  at = traditional;
  key->init(ECC_TYPE);
  if (wc_EccPrivateKeyDecode(der.data(), &at, &key->ecc_, static_cast<word32>(size)) == 0) return key;
  key = std::make_unique<WcKey>();
  at = traditional;
  key->init(RSA_TYPE);
  if (wc_RsaPrivateKeyDecode(der.data(), &at, &key->rsa_, static_cast<word32>(size)) == 0) return key;
  return nullptr;
}

void* WcKey::native() {
  return type_ == RSA_TYPE   ? static_cast<void*>(&rsa_)
         : type_ == ECC_TYPE ? static_cast<void*>(&ecc_)
                             : static_cast<void*>(&ed25519_);
}

int WcKey::signature_type() const {
  if (type_ == RSA_TYPE) return CTC_SHA256wRSA;
  if (type_ == ED25519_TYPE) return CTC_ED25519;
  return wc_ecc_size(const_cast<ecc_key*>(&ecc_)) > 32 ? CTC_SHA384wECDSA : CTC_SHA256wECDSA;
}

std::string WcKey::pkcs8_pem() {
  std::vector<byte> der(8192);
  word32 size = static_cast<word32>(der.size());
  int ret = 0;
  if (type_ == RSA_TYPE) {
    std::vector<byte> pkcs1(8192);
    const int pkcs1_size = wc_RsaKeyToDer(&rsa_, pkcs1.data(), static_cast<word32>(pkcs1.size()));
    ret = pkcs1_size < 0 ? pkcs1_size
                         : wc_CreatePKCS8Key(der.data(), &size, pkcs1.data(), static_cast<word32>(pkcs1_size),
                                             RSAk, nullptr, 0);
  } else if (type_ == ECC_TYPE) {
    // SEC 1 with its public key (wc_EccPrivateKeyToPKCS8 leaves it out, and GnuTLS needs it), wrapped.
    std::vector<byte> sec1(1024);
    const int sec1_size = wc_EccKeyToDer(&ecc_, sec1.data(), static_cast<word32>(sec1.size()));
    const byte* curve = nullptr;
    word32 curve_size = 0;
    ret = sec1_size < 0 ? sec1_size : wc_ecc_get_oid(ecc_.dp->oidSum, &curve, &curve_size);
    if (ret >= 0)
      ret = wc_CreatePKCS8Key(der.data(), &size, sec1.data(), static_cast<word32>(sec1_size), ECDSAk, curve,
                              curve_size);
  } else {
    ret = wc_Ed25519PrivateKeyToDer(&ed25519_, der.data(), size);
  }
  if (ret < 0) throw Error(fmt::format("wolfCrypt cannot encode a private key: {}", ret));
  return pem_of(der.data(), static_cast<word32>(ret), PKCS8_PRIVATEKEY_TYPE);
}

std::string pem_of(const byte* der, word32 size, int type) {
  std::vector<byte> pem(size * 2 + 256);
  const int n = wc_DerToPem(der, size, pem.data(), static_cast<word32>(pem.size()), type);
  if (n < 0) throw Error(fmt::format("wolfCrypt cannot write PEM: {}", n));
  return std::string(reinterpret_cast<const char*>(pem.data()), static_cast<std::size_t>(n));
}

}  // namespace tlscmp::tls::wolfssl
