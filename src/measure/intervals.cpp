#include "measure/intervals.hpp"

namespace tlscmp::measure {

IntervalRecorder::IntervalRecorder(std::int64_t start_ns, std::int64_t period_ns, std::size_t max_intervals)
    : start_ns_(start_ns),
      period_ns_(period_ns > 0 ? period_ns : 1),
      next_boundary_ns_(start_ns + period_ns_),
      max_intervals_(max_intervals) {}

void IntervalRecorder::close(std::int64_t now_ns, std::uint64_t total_bytes) {
  last_ = Interval{last_.end_s, static_cast<double>(now_ns - start_ns_) / 1e9, total_bytes - closed_bytes_};
  closed_bytes_ = total_bytes;
  if (max_intervals_ == 0) return;
  if (intervals_.size() < max_intervals_) {
    intervals_.push_back(last_);
  } else {
    intervals_.back().end_s = last_.end_s;
    intervals_.back().bytes += last_.bytes;
    truncated_ = true;
  }
}

const Interval& IntervalRecorder::advance(std::int64_t now_ns, std::uint64_t total_bytes) {
  close(now_ns, total_bytes);
  while (next_boundary_ns_ <= now_ns)
    next_boundary_ns_ += period_ns_;
  return last_;
}

void IntervalRecorder::finish(std::int64_t end_ns, std::uint64_t total_bytes) {
  // Nothing left to report if an interval closed at this very moment.
  if (total_bytes == closed_bytes_ && static_cast<double>(end_ns - start_ns_) / 1e9 <= last_.end_s) return;
  close(end_ns, total_bytes);
}

}  // namespace tlscmp::measure
