#pragma once

// Where a bulk TLS run's extra CPU goes, per side (measure::CostSplit), from
// the runs and each side's calibration.

#include <map>
#include <optional>
#include <vector>

#include "measure/results.hpp"

namespace tlscmp::measure {

// One side's split over a TLS variant's runs, each against its round's
// baseline run in `baseline` (plain TCP); `client_side` picks the side and
// `client_sends` says which way the payload went. None where a run lacks
// the side's calibration, or nothing pairs.
std::optional<CostSplit> split_cost(const std::vector<const StreamRun*>& runs,
                                    const std::map<int, const StreamRun*>& baseline, bool client_side,
                                    bool client_sends);

// Each run's split on each side (StreamRun::client_split, server_split),
// where the run and its round's `baseline` run counted and the side calibrated.
void split_runs(std::vector<StreamRun>& runs, const std::map<int, const StreamRun*>& baseline,
                bool client_sends);

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
