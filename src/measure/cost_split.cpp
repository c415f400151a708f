#include "measure/cost_split.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "measure/stats.hpp"

namespace tlscmp::measure {
namespace {

double split_median(std::vector<double> values) {
  return values.empty() ? 0 : summarize(values).median;
}

}  // namespace

const char* largest_part(const CostSplit& split) {
  if (split.crypto_s_per_gib >= split.record_layer_s_per_gib &&
      split.crypto_s_per_gib >= split.socket_s_per_gib)
    return "crypto";
  return split.record_layer_s_per_gib >= split.socket_s_per_gib ? "record layer" : "socket";
}

std::optional<UnitSplit> split_unit_cost(const std::vector<UnitCost>& runs, bool client_side,
                                         bool handshake) {
  std::vector<double> tls, tcp, extra;
  const TransactionCalibration* calibration = nullptr;
  for (const UnitCost& run : runs) {
    if (run.calibration == nullptr) continue;
    calibration = run.calibration;
    tls.push_back(run.tls_us);
    tcp.push_back(run.tcp_us);
    extra.push_back(run.tls_us - run.tcp_us);
  }
  if (calibration == nullptr) return std::nullopt;
  UnitSplit split;
  split.client = client_side;
  split.calibration = *calibration;
  split.tcp_us = split_median(tcp);
  split.tls_us = split_median(tls);
  split.extra_us = split_median(extra);
  if (handshake) split.handshake_us = calibration->handshake_us(client_side);
  split.crypto_us = calibration->crypto_us(client_side);
  split.record_layer_us = calibration->tls_us(client_side) - split.crypto_us;
  split.socket_us = split.extra_us - split.handshake_us.value_or(0) - split.crypto_us - split.record_layer_us;
  return split;
}

const char* largest_part(const UnitSplit& split) {
  const std::pair<const char*, double> parts[] = {{"handshake", split.handshake_us.value_or(0)},
                                                  {"crypto", split.crypto_us},
                                                  {"record layer", split.record_layer_us},
                                                  {"socket", split.socket_us}};
  const auto* lead = std::max_element(std::begin(parts), std::end(parts),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  return lead->first;
}

}  // namespace tlscmp::measure
