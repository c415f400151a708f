#pragma once

// `tlscmp sweep`: the same comparison over a grid of settings, as the seed
// experiments do (message sizes 10 B to 1 GiB, socket buffers 1460 B to 512 KiB).

#include <string>
#include <vector>

#include "app/config.hpp"
#include "measure/intervals.hpp"
#include "measure/results.hpp"

namespace tlscmp::app {

// One swept setting and the values it takes, as given ("msg-size", {"10", "1K"}).
struct SweepAxis {
  std::string name;
  std::vector<std::string> values;
};

struct SweepConfig {
  ClientConfig base;            // everything not swept
  std::vector<SweepAxis> axes;  // in the order given; the first is the table's rows
};

// One point of the grid: its settings, and the comparison run there.
struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> settings;  // axis name -> value
  measure::Comparison comparison;
};

// The client settings of one grid point. Throws UsageError for a value that
// cannot be used (checked for every point before anything runs).
ClientConfig point_config(const SweepConfig& sweep,
                          const std::vector<std::pair<std::string, std::string>>& settings);

// Every combination of the axes, first axis slowest.
std::vector<std::vector<std::pair<std::string, std::string>>> sweep_grid(const SweepConfig& sweep);

// Runs every point in turn (each with its rounds and alternation); stops at
// the first point that fails or an interrupt, keeping what ran.
std::vector<SweepPoint> run_sweep(const SweepConfig& sweep, measure::TransferObserver* observer);

}  // namespace tlscmp::app
