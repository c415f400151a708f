#pragma once

// Where a bulk TLS run's extra CPU goes, per side (measure::CostSplit), from
// the runs and each side's calibration.

#include <map>
#include <optional>
#include <vector>

#include "kinds/stream/results.hpp"
#include "measure/cost_split.hpp"

namespace tlscmp::kinds {

using measure::CostSplit;

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

}  // namespace tlscmp::kinds
