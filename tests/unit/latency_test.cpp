#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "measure/latency.hpp"

using tlscmp::measure::LatencyHistogram;

namespace {

// The nearest-rank quantile of a sorted sample, as the histogram estimates it.
double exact(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

}  // namespace

TEST_CASE("percentiles from the histogram are within 1% of the sample's own, over nine decades") {
  std::mt19937_64 random(42);
  // Log-uniform from 0.5 us to 50 s, and a narrow cluster as loopback gives.
  std::uniform_real_distribution<double> exponent(std::log(0.5), std::log(5e7));
  std::normal_distribution<double> cluster(30.0, 3.0);
  for (const bool narrow : {false, true}) {
    CAPTURE(narrow);
    LatencyHistogram h;
    std::vector<double> sample;
    for (int i = 0; i < 200'000; ++i) {
      const double us = narrow ? std::max(1.0, cluster(random)) : std::exp(exponent(random));
      sample.push_back(us);
      h.add(us);
    }
    std::sort(sample.begin(), sample.end());
    for (const double q : {0.01, 0.5, 0.9, 0.99, 0.999}) {
      CAPTURE(q);
      const double truth = exact(sample, q);
      CHECK(std::abs(h.quantile(q) - truth) / truth <= tlscmp::measure::kLatencyRelativeError);
    }
    const auto s = h.summary();
    CHECK(s.count == sample.size());
    CHECK(s.min == sample.front());
    CHECK(s.max == sample.back());
    CHECK(s.p50 <= s.p90);
    CHECK(s.p99 <= s.p999);
  }
}

TEST_CASE("histograms add up, and the extremes stay exact beyond the bins") {
  LatencyHistogram a;
  LatencyHistogram b;
  a.add(0.01);  // below the first bin
  a.add(20.0);
  b.add(3e9);  // an hour: beyond the last bin
  b.add(40.0);
  a += b;
  CHECK(a.count() == 4);
  CHECK(a.summary().min == 0.01);
  CHECK(a.summary().max == 3e9);
  CHECK(a.quantile(1.0) == 3e9);
  CHECK(std::abs(a.quantile(0.5) - 20.0) / 20.0 <= 0.01);
  CHECK(std::abs(a.summary().mean - (0.01 + 20 + 3e9 + 40) / 4) < 1e-3);
  a.clear();
  CHECK(a.count() == 0);
  CHECK(a.quantile(0.99) == 0);
  LatencyHistogram empty;
  a += empty;
  CHECK(a.count() == 0);
}
