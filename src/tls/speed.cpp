#include "tls/speed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "tls/ossl_ptr.hpp"
#include "tls/ssl_backend.hpp"
#include "tls/ssl_compat.hpp"

namespace tlscmp::tls {
namespace {

using Clock = std::chrono::steady_clock;

// Records of `payload` sealed one after another, numbered from 0 (or one
// record, number 0, opened again and again) until `seconds` pass: the
// records done, and the seconds.
std::pair<std::uint64_t, double> run_aead(compat::RecordAead& aead, bool tls13, bool seal,
                                          std::size_t payload, double seconds,
                                          std::vector<std::uint8_t>& plain,
                                          std::vector<std::uint8_t>& sealed) {
  const std::vector<std::uint8_t> aad = record_aad(tls13, payload + compat::RecordAead::kTagBytes, payload);
  std::uint64_t records = 0;
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point now = start;
  // The clock is read every few records: at 1 KiB a record takes well under a microsecond.
  const std::uint64_t batch = payload >= 16384 ? 4 : 32;
  do {
    for (std::uint64_t i = 0; i < batch; ++i, ++records) {
      if (!aead.apply(seal ? records : 0, aad.data(), aad.size(), plain.data(), sealed.data(), payload))
        throw_tls_error(fmt::format("cannot {} a record", seal ? "seal" : "open"));
    }
    now = Clock::now();
  } while (now < end);
  return {records, std::chrono::duration<double>(now - start).count()};
}

}  // namespace
measure::AeadFigure ssl::SslBackend::measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                                  double seconds) const {
  const bool tls13 = suite.version == "1.3";
  compat::RecordAead sealer(suite.aead, tls13, /*seal=*/true);
  compat::RecordAead opener(suite.aead, tls13, /*seal=*/false);
  if (!sealer.ok() || !opener.ok()) throw_tls_error(fmt::format("this TLS library has no {}", suite.aead));
  std::vector<std::uint8_t> plain(payload_bytes, 0x42);
  std::vector<std::uint8_t> sealed(payload_bytes + compat::RecordAead::kTagBytes);
  measure::AeadFigure figure{suite.name, suite.version, suite.aead,
                             static_cast<std::uint32_t>(payload_bytes)};
  const auto [sealed_records, seal_s] = run_aead(sealer, tls13, true, payload_bytes, seconds, plain, sealed);
  // The record to open: sealed with sequence 0, as the opening loop expects.
  const std::vector<std::uint8_t> aad =
      record_aad(tls13, payload_bytes + compat::RecordAead::kTagBytes, payload_bytes);
  compat::RecordAead first(suite.aead, tls13, /*seal=*/true);
  if (!first.apply(0, aad.data(), aad.size(), plain.data(), sealed.data(), payload_bytes))
    throw_tls_error("cannot seal a record");
  const auto [opened_records, open_s] = run_aead(opener, tls13, false, payload_bytes, seconds, plain, sealed);
  figure.records = sealed_records;
  figure.seal_bytes_per_s = static_cast<double>(sealed_records * payload_bytes) / seal_s;
  figure.open_bytes_per_s = static_cast<double>(opened_records * payload_bytes) / open_s;
  return figure;
}

}  // namespace tlscmp::tls
