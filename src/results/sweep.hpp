#pragma once

// `tlscmp sweep`: the same comparison over a grid of settings, as the seed
// experiments do (message sizes 10 B to 1 GiB, socket buffers 1460 B to 512 KiB).

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "measure/intervals.hpp"
#include "measure/results.hpp"
#include "session/config.hpp"

namespace tlscmp::results {

// One value of a swept setting, parsed and checked by cli/: `apply` sets its
// typed value on a point's settings; `text` is how it was given, for the
// table and the files ("1K").
struct SweepValue {
  std::string text;
  std::function<void(session::ClientConfig&)> apply;
};

// One swept setting and its values ("msg-size", {10, 1K}).
struct SweepAxis {
  std::string name;
  std::vector<SweepValue> values;
};

struct SweepConfig {
  session::ClientConfig base;   // everything not swept (a list of one value is applied here)
  std::vector<SweepAxis> axes;  // in the order given; the first is the table's rows
};

// One point of the grid: one value of each axis, in axis order.
using SweepGridPoint = std::vector<std::pair<const SweepAxis*, const SweepValue*>>;

// One point of the grid: its settings, and the comparison run there.
struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> settings;  // axis name -> value as given
  measure::Comparison comparison;
};

// The client settings of one grid point. Throws UsageError for values that
// cannot run together (checked for every point before anything runs).
session::ClientConfig point_config(const session::ClientConfig& base, const SweepGridPoint& point);

// Every combination of the axes, first axis slowest.
std::vector<SweepGridPoint> sweep_grid(const SweepConfig& sweep);

}  // namespace tlscmp::results
