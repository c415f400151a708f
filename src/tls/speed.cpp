#include "tls/speed.hpp"

#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "tls/ossl_ptr.hpp"
#include "tls/ssl_backend.hpp"
#include "tls/ssl_compat.hpp"

namespace tlscmp::tls {
namespace {

// OpenSSL's and BoringSSL's record AEAD as a RecordSealer.
class SslSealer final : public RecordSealer {
 public:
  SslSealer(const SpeedSuite& suite, bool seal) : aead_(suite.aead, suite.version == "1.3", seal) {
    if (!aead_.ok()) throw_tls_error(fmt::format("this TLS library has no {}", suite.aead));
  }
  void apply(bool seal, std::uint64_t sequence, const std::vector<std::uint8_t>& aad,
             std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& sealed) override {
    if (!aead_.apply(sequence, aad.data(), aad.size(), plain.data(), sealed.data(), plain.size()))
      throw_tls_error(fmt::format("cannot {} a record", seal ? "seal" : "open"));
  }

 private:
  compat::RecordAead aead_;
};

}  // namespace

measure::AeadFigure ssl::SslBackend::measure_aead(const SpeedSuite& suite, std::size_t payload_bytes,
                                                  double seconds) const {
  return aead_figure(suite, payload_bytes, seconds,
                     [&suite](bool seal) { return std::make_unique<SslSealer>(suite, seal); });
}

}  // namespace tlscmp::tls
