// GnuTLS's AEAD figure: each suite's cipher as its record layer calls it
// (gnutls_aead_cipher_encrypt with each record's nonce and additional data).

#include <fmt/format.h>
#include <gnutls/crypto.h>

#include <array>
#include <memory>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"

namespace tlscmp::tls::gnutls {
namespace {

gnutls_cipher_algorithm_t aead_of(const std::string& aead) {
  if (aead == "AES-128-GCM") return GNUTLS_CIPHER_AES_128_GCM;
  if (aead == "AES-256-GCM") return GNUTLS_CIPHER_AES_256_GCM;
  if (aead == "ChaCha20-Poly1305") return GNUTLS_CIPHER_CHACHA20_POLY1305;
  throw Error(fmt::format("GnuTLS's backend knows no AEAD {}", aead));
}

// GnuTLS's AEAD with a key of zeros, as a RecordSealer.
class GnutlsSealer final : public RecordSealer {
 public:
  explicit GnutlsSealer(gnutls_cipher_algorithm_t algorithm) {
    std::array<unsigned char, 32> key_bytes{};
    gnutls_datum_t key{key_bytes.data(), static_cast<unsigned>(gnutls_cipher_get_key_size(algorithm))};
    check(gnutls_aead_cipher_init(&handle_, algorithm, &key), "GnuTLS cannot set up the AEAD");
  }
  ~GnutlsSealer() override { gnutls_aead_cipher_deinit(handle_); }
  GnutlsSealer(const GnutlsSealer&) = delete;
  GnutlsSealer& operator=(const GnutlsSealer&) = delete;

  void apply(bool seal, std::uint64_t sequence, const std::vector<std::uint8_t>& aad,
             std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& sealed) override {
    std::array<std::uint8_t, 12> nonce{};
    for (std::size_t b = 0; b < 8; ++b)
      nonce[11 - b] = static_cast<std::uint8_t>(sequence >> (8 * b));
    std::size_t out = seal ? sealed.size() : plain.size();
    const int ret =
        seal ? gnutls_aead_cipher_encrypt(handle_, nonce.data(), nonce.size(), aad.data(), aad.size(),
                                          kTagBytes, plain.data(), plain.size(), sealed.data(), &out)
             : gnutls_aead_cipher_decrypt(handle_, nonce.data(), nonce.size(), aad.data(), aad.size(),
                                          kTagBytes, sealed.data(), sealed.size(), plain.data(), &out);
    check(ret, fmt::format("GnuTLS cannot {} a record", seal ? "seal" : "open"));
  }

 private:
  gnutls_aead_cipher_hd_t handle_ = nullptr;
};

}  // namespace

measure::AeadFigure GnutlsBackend::measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                                double seconds) const {
  const gnutls_cipher_algorithm_t algorithm = aead_of(suite.aead);
  return aead_figure(suite, payload_bytes, seconds,
                     [algorithm](bool) { return std::make_unique<GnutlsSealer>(algorithm); });
}

}  // namespace tlscmp::tls::gnutls
