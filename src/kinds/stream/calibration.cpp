#include "kinds/stream/calibration.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include "error.hpp"
#include "tls/speed.hpp"

namespace tlscmp::kinds {
namespace {

// Five 30 ms tries of each figure, the best kept (tls::calibrate_bulk):
// enough for one of them to miss a neighbour on a shared host, short
// enough that a server's first test of a suite waits about half a second
// more, and that a test suite of many short runs, each a process that
// calibrates once, is not slowed for others.
constexpr double kCalibrationSeconds = 0.15;

}  // namespace

std::optional<measure::TlsCalibration> calibration_for(const std::string& suite, std::uint32_t chunk_bytes,
                                                       std::uint32_t record_bytes, std::uint32_t read_bytes) {
  using Key = std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint32_t>;
  static std::mutex mutex;
  static std::map<Key, std::optional<measure::TlsCalibration>> made;
  const Key key{suite, chunk_bytes, record_bytes, read_bytes};
  std::lock_guard lock(mutex);
  if (const auto it = made.find(key); it != made.end()) return it->second;
  std::optional<measure::TlsCalibration> calibration;
  try {
    calibration = tls::calibrate_bulk(suite, {chunk_bytes, record_bytes, read_bytes}, kCalibrationSeconds);
  } catch (const Error&) {
    // A run is not to fail for want of its split: it has none.
  }
  made.emplace(key, calibration);
  return calibration;
}

}  // namespace tlscmp::kinds
