#include "kinds/calibration.hpp"

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

// The calibration of `key`, made by `make` once per process and kept. A
// run is not to fail for want of its split: one that cannot be made is
// none. At most kKept are kept (a server that meets many shapes forgets
// them all and begins again); the lock is held while one is made, so that
// two are never made at once, each slowing the other.
template <typename Key, typename Value, typename Make>
std::optional<Value> once_per_process(const Key& key, Make make) {
  constexpr std::size_t kKept = 64;
  static std::mutex mutex;
  static std::map<Key, std::optional<Value>> made;
  std::lock_guard lock(mutex);
  if (const auto it = made.find(key); it != made.end()) return it->second;
  std::optional<Value> calibration;
  try {
    calibration = make();
  } catch (const Error&) {
  }
  if (made.size() >= kKept) made.clear();
  made.emplace(key, calibration);
  return calibration;
}

}  // namespace

std::optional<measure::TlsCalibration> calibration_for(const tls::Backend& library, const std::string& suite,
                                                       std::uint32_t chunk_bytes, std::uint32_t record_bytes,
                                                       std::uint32_t read_bytes) {
  using Key = std::tuple<const tls::Backend*, std::string, std::uint32_t, std::uint32_t, std::uint32_t>;
  return once_per_process<
      Key, measure::TlsCalibration>(Key{&library, suite, chunk_bytes, record_bytes, read_bytes}, [&] {
    return tls::calibrate_bulk(library, suite, {chunk_bytes, record_bytes, read_bytes}, kCalibrationSeconds);
  });
}

std::string user_space_suite(const Stream& stream) {
  const tls::TlsStream* tls = stream.tls();
  if (tls == nullptr) return {};
  const tls::SessionInfo info = tls->session_info();
  return info.ktls_send || info.ktls_receive ? std::string() : info.cipher;
}

tls::TransactionShape transaction_shape(const spec::Test& test) {
  tls::TransactionShape shape;
  shape.request_bytes = test.rr.request_bytes;
  shape.response_bytes = test.rr.response_bytes;
  shape.record_bytes = test.record_size;
  return shape;
}

tls::TransactionShape connection_shape(const spec::Test& test, const std::string& certificate_key_type,
                                       const std::string& group, bool resumed) {
  tls::TransactionShape shape = transaction_shape(test);
  shape.key_type = tls::key_type_of_description(certificate_key_type);
  shape.group = group;
  shape.resumed = resumed;
  return shape;
}

std::optional<measure::TransactionCalibration> transaction_calibration_for(
    const tls::Backend& library, const std::string& suite, const tls::TransactionShape& shape) {
  using Key = std::tuple<const tls::Backend*, std::string, std::uint64_t, std::uint64_t, std::size_t,
                         std::string, std::string, bool>;
  const Key key{&library,
                suite,
                shape.request_bytes,
                shape.response_bytes,
                shape.record_bytes,
                shape.key_type ? tls::to_string(*shape.key_type) : "",
                shape.group,
                shape.resumed};
  return once_per_process<Key, measure::TransactionCalibration>(
      key, [&] { return tls::calibrate_transactions(library, suite, shape, kCalibrationSeconds); });
}

}  // namespace tlscmp::kinds
