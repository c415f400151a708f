// --repeat auto's stopping rule, fed deterministic stand-ins for noise.

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "measure/stopping.hpp"

using namespace tlscmp::measure;

namespace {

// The headline ratio after `rounds` pairs of `ratio_of(round)`, as the
// report computes it (median and bootstrap interval).
HeadlineRatio ratio_after(int rounds, double (*ratio_of)(int)) {
  std::vector<double> ratios;
  for (int r = 1; r <= rounds; ++r)
    ratios.push_back(ratio_of(r));
  return {"tls", summarize(ratios), bootstrap_median_ci(ratios)};
}

// Runs the rule round by round, as the client does: the round it stops at, and why.
StopDecision run_until_stop(double (*ratio_of)(int), const AutoRepeat& rule, double seconds_per_round,
                            int& rounds) {
  for (rounds = 1;; ++rounds) {
    const StopDecision d =
        should_stop({ratio_after(rounds, ratio_of)}, rounds, rounds * seconds_per_round, rule);
    if (d.reason != StopReason::none) return d;
  }
}

// A quiet machine: every pair gives 2.0x, a hair either way.
double quiet(int round) {
  return 2.0 + 0.001 * ((round % 3) - 1);
}
// A noisy one: ratios between 1.0x and 3.0x, no two rounds alike and no
// settling (a fixed, deterministic sequence: the golden ratio's multiples).
double noisy(int round) {
  const double phase = std::fmod(round * 0.6180339887, 1.0);
  return 1.0 + 2.0 * phase;
}
// Noise that dies down: wide at first, within 1% from round 12 on.
double settling(int round) {
  const double spread = round < 12 ? 0.8 : 0.01;
  return 2.0 + spread * ((round % 2) == 0 ? 1 : -1);
}

}  // namespace

TEST_CASE("a quiet machine stops at the minimum rounds, within the target") {
  int rounds = 0;
  const StopDecision d = run_until_stop(quiet, AutoRepeat{}, 1.0, rounds);
  CHECK(rounds == 5);
  CHECK(d.reason == StopReason::ci_target);
  REQUIRE(d.widest);
  CHECK(*d.widest <= 0.05);
  CHECK(d.widest_label == "tls");
}

TEST_CASE("noise that never settles runs to --max-rounds, and says how wide the interval still is") {
  int rounds = 0;
  AutoRepeat rule;
  rule.max_rounds = 12;
  const StopDecision d = run_until_stop(noisy, rule, 1.0, rounds);
  CHECK(rounds == 12);
  CHECK(d.reason == StopReason::max_rounds);
  REQUIRE(d.widest);
  CHECK(*d.widest > 0.05);
}

TEST_CASE("noise that settles stops once the interval is narrow enough, not before") {
  int rounds = 0;
  const StopDecision d = run_until_stop(settling, AutoRepeat{}, 1.0, rounds);
  CHECK(d.reason == StopReason::ci_target);
  CHECK(rounds > 5);
  CHECK(rounds < 30);
  // The round before, the rule had not been met.
  CHECK(should_stop({ratio_after(rounds - 1, settling)}, rounds - 1, 0, AutoRepeat{}).reason ==
        StopReason::none);
}

TEST_CASE("a tighter target takes more rounds than a looser one") {
  int loose = 0;
  int tight = 0;
  AutoRepeat rule;
  rule.ci_target = 0.30;
  run_until_stop(noisy, rule, 1.0, loose);
  rule.ci_target = 0.15;
  rule.max_rounds = 100;
  run_until_stop(noisy, rule, 1.0, tight);
  CHECK(loose < tight);
}

TEST_CASE("--max-time starts no round that would end past it") {
  int rounds = 0;
  AutoRepeat rule;
  rule.max_time_s = 10;
  const StopDecision d = run_until_stop(noisy, rule, 3.0, rounds);
  CHECK(d.reason == StopReason::max_time);
  CHECK(rounds == 3);  // 9 s done; a fourth round would end at 12 s
}

TEST_CASE("every ratio must be within the target, and one without an interval holds the rest back") {
  const HeadlineRatio narrow = ratio_after(8, quiet);
  const HeadlineRatio wide = ratio_after(8, noisy);
  CHECK(should_stop({narrow}, 8, 0, AutoRepeat{}).reason == StopReason::ci_target);
  const StopDecision both = should_stop({narrow, wide}, 8, 0, AutoRepeat{});
  CHECK(both.reason == StopReason::none);
  CHECK(*both.widest == doctest::Approx(*wide.relative_half_width()));
  const HeadlineRatio none{"tls-resumed", summarize(std::vector<double>{2.0}), std::nullopt};
  const StopDecision unknown = should_stop({narrow, none}, 8, 0, AutoRepeat{});
  CHECK(unknown.reason == StopReason::none);
  CHECK_FALSE(unknown.widest);
  CHECK(should_stop({}, 30, 0, AutoRepeat{}).reason == StopReason::max_rounds);
}
