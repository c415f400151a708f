#include "measure/intervals.hpp"

#include <algorithm>
#include <map>
#include <utility>

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

namespace tlscmp::measure {

namespace {

// The period an interval starting at `start_s` belongs to. Intervals start
// just after a boundary (where the loop got there), so the floor is the period.
std::int64_t period_of(double start_s, double period_s) {
  return period_s > 0 ? static_cast<std::int64_t>(start_s / period_s) : 0;
}

void add_to(Interval& sum, bool& any, const Interval& part) {
  if (!any) {
    sum = part;
    any = true;
    return;
  }
  sum.start_s = std::min(sum.start_s, part.start_s);
  sum.end_s = std::max(sum.end_s, part.end_s);
  sum.bytes += part.bytes;
}

}  // namespace

std::vector<Interval> sum_intervals(const std::vector<std::vector<Interval>>& streams, double period_s) {
  std::map<std::int64_t, std::pair<Interval, bool>> periods;
  for (const std::vector<Interval>& stream : streams) {
    for (const Interval& i : stream) {
      auto& [sum, any] = periods[period_of(i.start_s, period_s)];
      add_to(sum, any, i);
    }
  }
  std::vector<Interval> sums;
  sums.reserve(periods.size());
  for (const auto& [period, entry] : periods)
    sums.push_back(entry.first);
  return sums;
}

JoinedObserver::JoinedObserver(TransferObserver& target, std::size_t streams)
    : target_(&target),
      period_s_(std::chrono::duration<double>(target.tick_period()).count()),
      streams_(streams) {
  ports_.reserve(streams);
  for (std::size_t i = 0; i < streams; ++i)
    ports_.emplace_back(*this, i);
}

void JoinedObserver::tick(std::size_t i, const Interval& last, std::uint64_t total_bytes) {
  const std::lock_guard lock(mutex_);
  const std::int64_t period = std::max(period_of(last.start_s, period_s_), first_pending_);
  while (first_pending_ + static_cast<std::int64_t>(pending_.size()) <= period)
    pending_.emplace_back();
  Pending& p = pending_[static_cast<std::size_t>(period - first_pending_)];
  add_to(p.sum, p.any, last);
  streams_[i].reached = std::max(streams_[i].reached, period);
  streams_[i].total_bytes = total_bytes;
  forward_complete();
}

void JoinedObserver::end(std::size_t i) {
  const std::lock_guard lock(mutex_);
  streams_[i].ended = true;
  forward_complete();
  if (ended_ || !std::all_of(streams_.begin(), streams_.end(), [](const Stream& s) { return s.ended; }))
    return;
  ended_ = true;
  target_->on_end();
}

void JoinedObserver::forward_complete() {
  while (!pending_.empty()) {
    const bool complete = std::all_of(streams_.begin(), streams_.end(), [&](const Stream& s) {
      return s.ended || s.reached >= first_pending_;
    });
    if (!complete) return;
    const Pending done = pending_.front();
    pending_.pop_front();
    ++first_pending_;
    if (!done.any) continue;
    std::uint64_t total = 0;
    for (const Stream& s : streams_)
      total += s.total_bytes;
    target_->on_tick(done.sum, total);
  }
}

}  // namespace tlscmp::measure
