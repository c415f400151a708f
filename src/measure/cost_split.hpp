#pragma once

// Where a TLS run's extra CPU goes, per side: the part that leads a bulk
// run's split (measure::CostSplit; kinds/stream/cost_split.hpp makes it),
// and an rr or crr run's per unit (measure::UnitSplit).

#include <map>
#include <optional>
#include <vector>

#include "measure/results.hpp"

namespace tlscmp::measure {

// The part that leads: "crypto", "record layer" or "socket".
const char* largest_part(const CostSplit& split);

// One TLS run of rr or crr on one side: its CPU per unit (transaction or
// connection), its round's baseline run's, and the side's calibration.
struct UnitCost {
  double tls_us = 0;
  double tcp_us = 0;
  const TransactionCalibration* calibration = nullptr;
};

// One side's split per unit over a variant's runs (measure::UnitSplit),
// with the last calibration among them; `handshake` adds the handshake in
// memory (crr). None where no run has a calibration.
std::optional<UnitSplit> split_unit_cost(const std::vector<UnitCost>& runs, bool client_side, bool handshake);

// The part that leads: "handshake", "crypto", "record layer" or "socket".
const char* largest_part(const UnitSplit& split);

}  // namespace tlscmp::measure
