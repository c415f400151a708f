#pragma once

// --repeat auto: when enough rounds are in. A pure rule over the headline
// ratios, so that tests can feed it any noise they like.

#include <optional>
#include <string>
#include <vector>

#include "measure/stats.hpp"

namespace tlscmp::measure {

struct Comparison;

// The rule's settings (--ci-target, --max-rounds, --max-time).
struct AutoRepeat {
  double ci_target = 0.05;  // the 95% CI's half-width, as a share of the median, at most this
  int min_rounds = 5;       // fewer pairs give no interval worth the name
  int max_rounds = 30;
  double max_time_s = 0;  // 0: no limit
};

// One headline ratio: a variant's figure over the same round's baseline
// figure (bulk: time per byte; rr: transactions/s; crr: connections/s).
struct HeadlineRatio {
  std::string label;  // the variant's
  Summary ratio;
  std::optional<Interval95> ci;

  // The interval's half-width as a share of the median; nullopt without one.
  std::optional<double> relative_half_width() const;
};

enum class StopReason { none, ci_target, max_rounds, max_time };
const char* to_string(StopReason reason);  // "ci_target", "max_rounds", "max_time"; "" for none

struct StopDecision {
  StopReason reason = StopReason::none;
  // The widest ratio's half-width (a share of its median) and its label;
  // nullopt while some ratio has no interval yet.
  std::optional<double> widest;
  std::string widest_label;
};

// After `rounds` measured rounds taking `elapsed_s` in all: stop? Once the
// minimum is in, as soon as every ratio's interval is within the target;
// else at the maximum rounds, or once another round would pass the time.
StopDecision should_stop(const std::vector<HeadlineRatio>& ratios, int rounds, double elapsed_s,
                         const AutoRepeat& rule);

// The comparison's headline ratios, from its statistics (compute_statistics first).
std::vector<HeadlineRatio> headline_ratios(const Comparison& comparison);

// How --repeat auto ended, for the report.
struct AutoRepeatOutcome {
  AutoRepeat rule;
  int rounds = 0;  // measured rounds run
  StopDecision decision;
};

}  // namespace tlscmp::measure
