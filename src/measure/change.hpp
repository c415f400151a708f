#pragma once

// tlscmp compare: how a figure changed from one result to another, with a
// bootstrap interval on the change and a verdict.

#include <optional>
#include <span>
#include <string>

#include "measure/stats.hpp"

namespace tlscmp::measure {

// not_comparable: the base's median is 0 (a run too short for the CPU clock to tick).
enum class Verdict { faster, slower, no_change, too_few_runs, not_comparable };
// "faster", "slower", "no significant change", "too few runs", "no change to measure from a median of 0"
const char* to_string(Verdict verdict);

struct Change {
  Summary base;                  // the figure over the base result's runs
  Summary next;                  // over the new result's
  bool higher_is_better = true;  // throughput and rates; latency is better lower
  double change = 0;             // median(next) / median(base) - 1
  std::optional<Interval95> ci;  // of `change`; none with fewer than two runs on a side
  Verdict verdict = Verdict::too_few_runs;

  // How much worse, in percent (> 0 slower); for --fail-if-slower.
  double slower_percent() const { return 100 * (higher_is_better ? -change : change); }
};

// The change from `base` runs to `next` runs of one figure: faster or slower
// when the 95% interval of the median's ratio leaves 1 on that side, else no
// significant change.
Change estimate_change(std::span<const double> base, std::span<const double> next, bool higher_is_better);

}  // namespace tlscmp::measure
