#pragma once

// What every kind's results (kinds/NAME/results.hpp) are made of, named once
// for them: measure's run header, each side's cost, summaries, latencies,
// intervals, paired ratios and CPU splits. A comparison holds a kind's
// results as its measure::KindResults.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measure/results.hpp"

namespace tlscmp::kinds {

using measure::CostSplit;
using measure::Interval;
using measure::LatencySummary;
using measure::PairedRatio;
using measure::RrInterval;
using measure::RunHeader;
using measure::RunSplit;
using measure::SideCost;
using measure::Summary;
using measure::TlsParameters;
using measure::UnitSplit;

}  // namespace tlscmp::kinds
