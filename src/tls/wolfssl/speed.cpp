// wolfSSL's AEAD figure: each suite's cipher as its record layer calls it
// (wolfCrypt's AES-GCM with a key set once, or ChaCha20-Poly1305), with
// each record's nonce and additional data.

#include <fmt/format.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/chacha20_poly1305.h>

#include <array>
#include <chrono>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kTag = 16;

// One AEAD with a key of zeros: AES-GCM's key schedule made once, as a
// connection's is; ChaCha20-Poly1305 keyed per record, as wolfCrypt's is.
class Aead {
 public:
  explicit Aead(const std::string& name) : chacha_(name == "ChaCha20-Poly1305") {
    if (!chacha_ && name != "AES-128-GCM" && name != "AES-256-GCM")
      throw Error(fmt::format("wolfSSL's backend knows no AEAD {}", name));
    if (chacha_) return;
    if (wc_AesInit(&aes_, nullptr, INVALID_DEVID) != 0) throw Error("wolfCrypt cannot set up AES");
    const word32 key_size = name == "AES-128-GCM" ? 16 : 32;
    if (wc_AesGcmSetKey(&aes_, key_.data(), key_size) != 0)
      throw Error("wolfCrypt cannot set an AES-GCM key");
  }
  ~Aead() {
    if (!chacha_) wc_AesFree(&aes_);
  }
  Aead(const Aead&) = delete;
  Aead& operator=(const Aead&) = delete;

  // Seals `plain` into `sealed` (the tag after it), or opens it back, as
  // record `sequence`: its number in the nonce, as the record layer makes each record's.
  void apply(bool seal, std::uint64_t sequence, const std::vector<std::uint8_t>& aad,
             std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& sealed) {
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
                                    kTag, aad.data(), aad_size)
                 : wc_AesGcmDecrypt(&aes_, plain.data(), sealed.data(), size, nonce.data(), nonce.size(), tag,
                                    kTag, aad.data(), aad_size);
    }
    if (ret != 0) throw Error(fmt::format("wolfCrypt cannot {} a record: {}", seal ? "seal" : "open", ret));
  }

 private:
  bool chacha_;
  Aes aes_{};
  std::array<std::uint8_t, 32> key_{};
};

// Records sealed one after another, or record 0 opened again and again,
// until `seconds` pass: the records done, and the seconds.
std::pair<std::uint64_t, double> run_aead(Aead& aead, bool seal, const std::vector<std::uint8_t>& aad,
                                          std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& sealed,
                                          double seconds) {
  std::uint64_t records = 0;
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point now = start;
  const std::uint64_t batch = plain.size() >= 16384 ? 4 : 32;
  do {
    for (std::uint64_t i = 0; i < batch; ++i, ++records)
      aead.apply(seal, seal ? records : 0, aad, plain, sealed);
    now = Clock::now();
  } while (now < end);
  return {records, std::chrono::duration<double>(now - start).count()};
}

}  // namespace

measure::AeadFigure WolfsslBackend::measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                                 double seconds) const {
  const bool tls13 = suite.version == "1.3";
  Aead sealer(suite.aead);
  std::vector<std::uint8_t> plain(payload_bytes, 0x42);
  std::vector<std::uint8_t> sealed(payload_bytes + kTag);
  const std::vector<std::uint8_t> aad = record_aad(tls13, sealed.size(), payload_bytes);
  measure::AeadFigure figure{suite.name, suite.version, suite.aead,
                             static_cast<std::uint32_t>(payload_bytes)};
  const auto [sealed_records, seal_s] = run_aead(sealer, true, aad, plain, sealed, seconds);
  // The record to open: sealed with sequence 0, as the opening loop expects.
  sealer.apply(true, 0, aad, plain, sealed);
  Aead opener(suite.aead);
  const auto [opened_records, open_s] = run_aead(opener, false, aad, plain, sealed, seconds);
  figure.records = sealed_records;
  figure.seal_bytes_per_s = static_cast<double>(sealed_records * payload_bytes) / seal_s;
  figure.open_bytes_per_s = static_cast<double>(opened_records * payload_bytes) / open_s;
  return figure;
}

}  // namespace tlscmp::tls::wolfssl
