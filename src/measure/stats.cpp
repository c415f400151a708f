#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace tlscmp::measure {

namespace {

double median_of_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

// Linear interpolation between closest ranks (the "R-7" definition).
double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(rank);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace

Summary summarize(std::span<const double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = median_of_sorted(sorted);
  s.p99 = percentile_of_sorted(sorted, 0.99);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double v : sorted)
      squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return s;
}

std::optional<Interval95> bootstrap_median_ci(std::span<const double> values, int resamples) {
  if (values.size() < 2 || resamples < 1) return std::nullopt;
  std::mt19937_64 rng(0x746c73636d70ull);  // fixed: "tlscmp"
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::vector<double> medians;
  medians.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> resample(values.size());
  for (int r = 0; r < resamples; ++r) {
    for (double& v : resample)
      v = values[pick(rng)];
    std::sort(resample.begin(), resample.end());
    medians.push_back(median_of_sorted(resample));
  }
  std::sort(medians.begin(), medians.end());
  return Interval95{percentile_of_sorted(medians, 0.025), percentile_of_sorted(medians, 0.975)};
}

std::optional<Interval95> bootstrap_median_ratio_ci(std::span<const double> base,
                                                    std::span<const double> next, int resamples) {
  if (base.size() < 2 || next.size() < 2 || resamples < 1) return std::nullopt;
  std::mt19937_64 rng(0x746c73636d70ull);
  const auto resampled_median = [&rng](std::span<const double> values, std::vector<double>& scratch) {
    std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
    for (double& v : scratch)
      v = values[pick(rng)];
    std::sort(scratch.begin(), scratch.end());
    return median_of_sorted(scratch);
  };
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> base_scratch(base.size());
  std::vector<double> next_scratch(next.size());
  for (int r = 0; r < resamples; ++r) {
    const double b = resampled_median(base, base_scratch);
    const double n = resampled_median(next, next_scratch);
    if (b > 0) ratios.push_back(n / b);
  }
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  return Interval95{percentile_of_sorted(ratios, 0.025), percentile_of_sorted(ratios, 0.975)};
}

}  // namespace tlscmp::measure
