#pragma once

// `tlscmp sweep`: the same comparison over a grid of settings, as the seed
// experiments do; the grid itself is results/sweep.hpp's.

#include <vector>

#include "measure/results.hpp"
#include "results/sweep.hpp"

namespace tlscmp::app {

// Runs every point in turn (each with its rounds and alternation); stops at
// the first point that fails or an interrupt, keeping what ran.
std::vector<results::SweepPoint> run_sweep(const results::SweepConfig& sweep,
                                           measure::TransferObserver* observer);

}  // namespace tlscmp::app
