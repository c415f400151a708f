// tlscmp compare's arithmetic: the change in a median between two sets of runs.

#include <doctest/doctest.h>

#include <vector>

#include "measure/change.hpp"

using namespace tlscmp::measure;

TEST_CASE("a clear drop in throughput is slower, with the change and its interval") {
  const std::vector<double> base{100, 101, 99, 100, 102};
  const std::vector<double> next{80, 81, 79, 80, 82};
  const Change c = estimate_change(base, next, /*higher_is_better=*/true);
  CHECK(c.change == doctest::Approx(-0.2));
  REQUIRE(c.ci);
  CHECK(c.ci->low <= c.change);
  CHECK(c.ci->high >= c.change);
  CHECK(c.ci->high < 0);
  CHECK(c.verdict == Verdict::slower);
  CHECK(c.slower_percent() == doctest::Approx(20));
  CHECK(std::string(to_string(c.verdict)) == "slower");
}

TEST_CASE("for latency, lower is faster") {
  const std::vector<double> base{50, 52, 51, 49, 50};
  const std::vector<double> next{40, 41, 39, 40, 42};
  const Change c = estimate_change(base, next, /*higher_is_better=*/false);
  CHECK(c.verdict == Verdict::faster);
  CHECK(c.slower_percent() < 0);
}

TEST_CASE("overlapping runs are no significant change, and one run a side gives no verdict") {
  const std::vector<double> base{90, 110, 100, 95, 105};
  const std::vector<double> next{92, 108, 101, 97, 103};
  const Change c = estimate_change(base, next, true);
  CHECK(c.verdict == Verdict::no_change);
  REQUIRE(c.ci);
  CHECK(c.ci->low < 0);
  CHECK(c.ci->high > 0);
  const std::vector<double> one{100};
  const Change few = estimate_change(one, next, true);
  CHECK(few.verdict == Verdict::too_few_runs);
  CHECK_FALSE(few.ci);
  CHECK(few.change == doctest::Approx(0.01));
}
