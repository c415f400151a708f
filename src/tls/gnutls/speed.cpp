// GnuTLS's AEAD figure: each suite's cipher as its record layer calls it
// (gnutls_aead_cipher_encrypt with each record's nonce and additional data).

#include <fmt/format.h>
#include <gnutls/crypto.h>

#include <array>
#include <chrono>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"

namespace tlscmp::tls::gnutls {
namespace {

using Clock = std::chrono::steady_clock;

gnutls_cipher_algorithm_t aead_of(const std::string& aead) {
  if (aead == "AES-128-GCM") return GNUTLS_CIPHER_AES_128_GCM;
  if (aead == "AES-256-GCM") return GNUTLS_CIPHER_AES_256_GCM;
  if (aead == "ChaCha20-Poly1305") return GNUTLS_CIPHER_CHACHA20_POLY1305;
  throw Error(fmt::format("GnuTLS's backend knows no AEAD {}", aead));
}

struct Aead {
  explicit Aead(gnutls_cipher_algorithm_t algorithm) {
    std::array<unsigned char, 32> key_bytes{};
    gnutls_datum_t key{key_bytes.data(), static_cast<unsigned>(gnutls_cipher_get_key_size(algorithm))};
    check(gnutls_aead_cipher_init(&handle, algorithm, &key), "GnuTLS cannot set up the AEAD");
  }
  ~Aead() { gnutls_aead_cipher_deinit(handle); }
  Aead(const Aead&) = delete;
  Aead& operator=(const Aead&) = delete;
  gnutls_aead_cipher_hd_t handle = nullptr;
};

// Seals `plain` into `sealed` (or opens it back) as record `sequence`: its
// number in the nonce, as the record layer makes each record's.
void apply(Aead& aead, bool seal, std::uint64_t sequence, const std::vector<std::uint8_t>& aad,
           std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& sealed) {
  constexpr std::size_t kTag = 16;
  std::array<std::uint8_t, 12> nonce{};
  for (std::size_t b = 0; b < 8; ++b)
    nonce[11 - b] = static_cast<std::uint8_t>(sequence >> (8 * b));
  std::size_t out = seal ? sealed.size() : plain.size();
  const int ret =
      seal ? gnutls_aead_cipher_encrypt(aead.handle, nonce.data(), nonce.size(), aad.data(), aad.size(), kTag,
                                        plain.data(), plain.size(), sealed.data(), &out)
           : gnutls_aead_cipher_decrypt(aead.handle, nonce.data(), nonce.size(), aad.data(), aad.size(), kTag,
                                        sealed.data(), sealed.size(), plain.data(), &out);
  check(ret, fmt::format("GnuTLS cannot {} a record", seal ? "seal" : "open"));
}

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
      apply(aead, seal, seal ? records : 0, aad, plain, sealed);
    now = Clock::now();
  } while (now < end);
  return {records, std::chrono::duration<double>(now - start).count()};
}

}  // namespace

measure::AeadFigure GnutlsBackend::measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                                double seconds) const {
  const bool tls13 = suite.version == "1.3";
  Aead sealer(aead_of(suite.aead));
  std::vector<std::uint8_t> plain(payload_bytes, 0x42);
  std::vector<std::uint8_t> sealed(payload_bytes + 16);
  const std::vector<std::uint8_t> aad = record_aad(tls13, sealed.size(), payload_bytes);
  measure::AeadFigure figure{suite.name, suite.version, suite.aead,
                             static_cast<std::uint32_t>(payload_bytes)};
  const auto [sealed_records, seal_s] = run_aead(sealer, true, aad, plain, sealed, seconds);
  // The record to open: sealed with sequence 0, as the opening loop expects.
  apply(sealer, true, 0, aad, plain, sealed);
  Aead opener(aead_of(suite.aead));
  const auto [opened_records, open_s] = run_aead(opener, false, aad, plain, sealed, seconds);
  figure.records = sealed_records;
  figure.seal_bytes_per_s = static_cast<double>(sealed_records * payload_bytes) / seal_s;
  figure.open_bytes_per_s = static_cast<double>(opened_records * payload_bytes) / open_s;
  return figure;
}

}  // namespace tlscmp::tls::gnutls
