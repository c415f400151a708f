// wolfSSL's AEAD figure: each suite's cipher as its record layer calls it
// (wolfCrypt's AES-GCM with a key set once, or ChaCha20-Poly1305), with
// each record's nonce and additional data.

#include <fmt/format.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/chacha20_poly1305.h>

#include <array>
#include <memory>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

// One AEAD with a key of zeros, as a RecordSealer: AES-GCM's key schedule
// made once, as a connection's is; ChaCha20-Poly1305 keyed per record, as
// wolfCrypt's is.
class WolfsslSealer final : public RecordSealer {
 public:
  explicit WolfsslSealer(const std::string& name) : chacha_(name == "ChaCha20-Poly1305") {
    if (!chacha_ && name != "AES-128-GCM" && name != "AES-256-GCM")
      throw Error(fmt::format("wolfSSL's backend knows no AEAD {}", name));
    if (chacha_) return;
    if (wc_AesInit(&aes_, nullptr, INVALID_DEVID) != 0) throw Error("wolfCrypt cannot set up AES");
    const word32 key_size = name == "AES-128-GCM" ? 16 : 32;
    if (wc_AesGcmSetKey(&aes_, key_.data(), key_size) != 0)
      throw Error("wolfCrypt cannot set an AES-GCM key");
  }
  ~WolfsslSealer() override {
    if (!chacha_) wc_AesFree(&aes_);
  }
  WolfsslSealer(const WolfsslSealer&) = delete;
  WolfsslSealer& operator=(const WolfsslSealer&) = delete;

  void apply(bool seal, std::uint64_t sequence, const std::vector<std::uint8_t>& aad,
             std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& sealed) override {
    std::array<std::uint8_t, 12> nonce{};
    for (std::size_t b = 0; b < 8; ++b)
      nonce[11 - b] = static_cast<std::uint8_t>(sequence >> (8 * b));
    const auto size = static_cast<word32>(plain.size());
    const auto aad_size = static_cast<word32>(aad.size());
    std::uint8_t* tag = sealed.data() + plain.size();
    int ret = 0;
    if (chacha_) {
      ret = seal ? wc_ChaCha20Poly1305_Encrypt(key_.data(), nonce.data(), aad.data(), aad_size, plain.data(),
                                               size, sealed.data(), tag)
                 : wc_ChaCha20Poly1305_Decrypt(key_.data(), nonce.data(), aad.data(), aad_size, sealed.data(),
                                               size, tag, plain.data());
    } else {
      ret = seal ? wc_AesGcmEncrypt(&aes_, sealed.data(), plain.data(), size, nonce.data(), nonce.size(), tag,
                                    kTagBytes, aad.data(), aad_size)
                 : wc_AesGcmDecrypt(&aes_, plain.data(), sealed.data(), size, nonce.data(), nonce.size(), tag,
                                    kTagBytes, aad.data(), aad_size);
    }
    if (ret != 0) throw Error(fmt::format("wolfCrypt cannot {} a record: {}", seal ? "seal" : "open", ret));
  }

 private:
  bool chacha_;
  Aes aes_{};
  std::array<std::uint8_t, 32> key_{};
};

}  // namespace

measure::AeadFigure WolfsslBackend::measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                                 double seconds) const {
  return aead_figure(suite, payload_bytes, seconds,
                     [&suite](bool) { return std::make_unique<WolfsslSealer>(suite.aead); });
}

}  // namespace tlscmp::tls::wolfssl
