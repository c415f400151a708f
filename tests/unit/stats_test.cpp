#include <doctest/doctest.h>

#include <vector>

#include "measure/results.hpp"
#include "measure/stats.hpp"

using namespace tlscmp;
using namespace tlscmp::measure;

TEST_CASE("summary of an odd-sized sample") {
  const std::vector<double> v{5, 1, 4, 2, 3};
  const Summary s = summarize(v);
  CHECK(s.count == 5);
  CHECK(s.min == 1);
  CHECK(s.median == 3);
  CHECK(s.max == 5);
  CHECK(s.mean == doctest::Approx(3));
  CHECK(s.stddev == doctest::Approx(1.5811388));  // sqrt(2.5)
}

TEST_CASE("the median of an even-sized sample is the mean of the middle two") {
  const std::vector<double> v{10, 40, 20, 30};
  const Summary s = summarize(v);
  CHECK(s.median == doctest::Approx(25));
  CHECK(s.mean == doctest::Approx(25));
}

TEST_CASE("one value and no values") {
  const std::vector<double> one{7};
  const Summary s = summarize(one);
  CHECK(s.count == 1);
  CHECK(s.median == 7);
  CHECK(s.stddev == 0);
  CHECK(summarize(std::vector<double>{}).count == 0);
}

TEST_CASE("statistics per mode, and TLS/TCP ratios paired by round") {
  Comparison c;
  c.parameters.modes = {Mode::tcp, Mode::tls};
  auto run = [](int round, Mode mode, double us) {
    RunResult r;
    r.round = round;
    r.mode = mode;
    r.bytes = 1'000'000;
    r.transfer_us = us;
    return r;
  };
  // Round 2 is slow for both modes: pairing keeps its ratio at 2, where the
  // ratio of the unpaired medians would not tell.
  c.runs = {run(1, Mode::tcp, 100),  run(1, Mode::tls, 150), run(2, Mode::tcp, 1000),
            run(2, Mode::tls, 2000), run(3, Mode::tcp, 200), run(3, Mode::tls, 500)};
  compute_statistics(c);
  REQUIRE(c.stats.size() == 2);
  CHECK(c.stats[0].mode == Mode::tcp);
  CHECK(c.stats[0].transfer_us.median == 200);
  CHECK(c.stats[1].transfer_us.median == 500);
  CHECK(c.stats[0].mbytes_per_s.max == doctest::Approx(10000));  // 1e6 bytes in 100 us
  REQUIRE(c.tls_over_tcp.has_value());
  CHECK(c.tls_over_tcp->count == 3);
  CHECK(c.tls_over_tcp->min == doctest::Approx(1.5));
  CHECK(c.tls_over_tcp->median == doctest::Approx(2));
  CHECK(c.tls_over_tcp->max == doctest::Approx(2.5));
}

TEST_CASE("no ratio without both modes") {
  Comparison c;
  c.parameters.modes = {Mode::tls};
  RunResult r;
  r.round = 1;
  r.mode = Mode::tls;
  r.transfer_us = 10;
  c.runs = {r};
  compute_statistics(c);
  CHECK(c.stats.size() == 1);
  CHECK_FALSE(c.tls_over_tcp.has_value());
}
