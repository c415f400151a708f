#pragma once

// Latency distributions of request/response tests: every transaction's
// latency counted in logarithmic bins (Boost.Histogram), so that memory stays
// the same however many transactions a run has, and a percentile read from
// them is within kLatencyRelativeError of the sample's own.

#include <boost/histogram.hpp>
#include <cstdint>
#include <vector>

#include "measure/stats.hpp"

namespace tlscmp::measure {

// From 0.1 us to 100 s in bins 1.9% wide: a value read back is within
// kLatencyRelativeError of any latency in its bin. Latencies outside the
// range count in the first or last bin, and min and max stay exact.
inline constexpr double kLatencyMinUs = 0.1;
inline constexpr double kLatencyMaxUs = 1e8;
inline constexpr unsigned kLatencyBins = 1100;
inline constexpr double kLatencyRelativeError = 0.01;

class LatencyHistogram {
 public:
  LatencyHistogram();

  void add(double us);
  // Adds another histogram's counts (another connection's, another interval's).
  LatencyHistogram& operator+=(const LatencyHistogram& other);
  void clear();

  std::uint64_t count() const { return count_; }
  // The nearest-rank q-quantile (0 < q <= 1); 0 when empty.
  double quantile(double q) const;
  LatencySummary summary() const;

 private:
  using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
  // Counters that start a byte wide and grow as needed: small for the
  // per-interval histograms of a long run.
  using Histogram = boost::histogram::histogram<std::tuple<Axis>, boost::histogram::unlimited_storage<>>;
  Histogram bins_;
  std::uint64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace tlscmp::measure
