#include "measure/stopping.hpp"

#include <algorithm>

#include "measure/results.hpp"

namespace tlscmp::measure {

std::optional<double> HeadlineRatio::relative_half_width() const {
  if (!ci || ratio.median <= 0) return std::nullopt;
  return (ci->high - ci->low) / 2 / ratio.median;
}

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::ci_target:
      return "ci_target";
    case StopReason::max_rounds:
      return "max_rounds";
    case StopReason::max_time:
      return "max_time";
    case StopReason::none:
      break;
  }
  return "";
}

StopDecision should_stop(const std::vector<HeadlineRatio>& ratios, int rounds, double elapsed_s,
                         const AutoRepeat& rule) {
  StopDecision d;
  bool all_known = !ratios.empty();
  for (const HeadlineRatio& r : ratios) {
    const std::optional<double> width = r.relative_half_width();
    if (!width) {
      all_known = false;
      continue;
    }
    if (!d.widest || *width > *d.widest) {
      d.widest = width;
      d.widest_label = r.label;
    }
  }
  if (!all_known) d.widest.reset();
  if (rounds >= rule.min_rounds && d.widest && *d.widest <= rule.ci_target) {
    d.reason = StopReason::ci_target;
  } else if (rounds >= rule.max_rounds) {
    d.reason = StopReason::max_rounds;
  } else if (rule.max_time_s > 0 && rounds > 0 &&
             elapsed_s + elapsed_s / static_cast<double>(rounds) > rule.max_time_s) {
    d.reason = StopReason::max_time;  // the next round, as long as the others, would pass it
  }
  return d;
}

// No ratio --repeat auto waits on where the kind has none: handshakes and
// groups run no rounds of runs, datagram runs compare loss and rate.
std::vector<HeadlineRatio> headline_ratios(const Comparison& comparison) {
  return comparison.results.headline_ratios();
}

}  // namespace tlscmp::measure
