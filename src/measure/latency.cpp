#include "measure/latency.hpp"

#include <algorithm>
#include <cmath>

namespace tlscmp::measure {

LatencyHistogram::LatencyHistogram()
    : bins_(boost::histogram::make_histogram_with(boost::histogram::unlimited_storage<>(),
                                                  Axis(kLatencyBins, kLatencyMinUs, kLatencyMaxUs))) {}

void LatencyHistogram::add(double us) {
  // Clamped into the axis: the first and last bins hold what lies beyond.
  bins_(std::clamp(us, kLatencyMinUs, std::nextafter(kLatencyMaxUs, 0.0)));
  min_ = count_ == 0 ? us : std::min(min_, us);
  max_ = count_ == 0 ? us : std::max(max_, us);
  sum_ += us;
  ++count_;
}

LatencyHistogram& LatencyHistogram::operator+=(const LatencyHistogram& other) {
  if (other.count_ == 0) return *this;
  bins_ += other.bins_;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  sum_ += other.sum_;
  count_ += other.count_;
  return *this;
}

void LatencyHistogram::clear() {
  bins_.reset();
  count_ = 0;
  sum_ = min_ = max_ = 0;
}

double LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  // Nearest rank: the smallest value with at least q of the sample at or below it.
  const auto rank =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  if (rank >= count_) return max_;
  if (rank == 1) return min_;
  std::uint64_t seen = 0;
  for (auto&& bin : boost::histogram::indexed(bins_)) {
    seen += static_cast<std::uint64_t>(static_cast<double>(*bin));
    if (seen >= rank) {
      const double middle = std::sqrt(bin.bin().lower() * bin.bin().upper());
      return std::clamp(middle, min_, max_);
    }
  }
  return max_;
}

LatencySummary LatencyHistogram::summary() const {
  return {count_,         min_,
          quantile(0.50), quantile(0.90),
          quantile(0.99), quantile(0.999),
          max_,           count_ > 0 ? sum_ / static_cast<double>(count_) : 0};
}

}  // namespace tlscmp::measure
