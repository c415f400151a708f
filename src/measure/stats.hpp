#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace tlscmp::measure {

// Summary of a sample. An empty sample gives count 0 and zeros.
struct Summary {
  std::size_t count = 0;
  double min = 0;
  double median = 0;  // middle value; the mean of the two middle values for an even count
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for fewer than two values
  double p99 = 0;     // 99th percentile, interpolated between the closest ranks
};

Summary summarize(std::span<const double> values);

// Percentiles of a latency distribution, microseconds (measure/latency.hpp
// reads them from a histogram). p50 .. p999 are nearest-rank percentiles.
struct LatencySummary {
  std::uint64_t count = 0;
  double min = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;
  double mean = 0;  // exact: the sum over the count
};

// A two-sided confidence interval.
struct Interval95 {
  double low = 0;
  double high = 0;
};

inline constexpr int kBootstrapResamples = 10'000;

// 95% percentile-bootstrap confidence interval of the median: the median of
// `resamples` resamples (with replacement, of the same size), their 2.5th and
// 97.5th percentiles. Seeded, so the same sample always gives the same
// interval. Needs at least two values; with few values it is as wide as the
// data allows (with 5 pairs, at most the range of the middle three).
std::optional<Interval95> bootstrap_median_ci(std::span<const double> values,
                                              int resamples = kBootstrapResamples);

// 95% percentile-bootstrap interval of median(next) / median(base), two
// independent samples (runs of two comparisons, not pairs): each resampled
// on its own. Seeded as above. Needs two values in each.
std::optional<Interval95> bootstrap_median_ratio_ci(std::span<const double> base,
                                                    std::span<const double> next,
                                                    int resamples = kBootstrapResamples);

}  // namespace tlscmp::measure
