#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tlscmp::measure {

// Bytes moved in one stretch of a transfer, as seen by one side.
struct Interval {
  double start_s = 0;  // from go
  double end_s = 0;    // from go; the moment the interval was closed
  std::uint64_t bytes = 0;
  // Decimal megabytes (10^6 bytes) per second.
  double mbytes_per_s() const {
    return end_s > start_s ? static_cast<double>(bytes) / (end_s - start_s) / 1e6 : 0;
  }
};

// Cuts a transfer into intervals of about `period_ns`. The data loop calls
// due() with the clock it read anyway, and advance() only when due: an
// interval ends when the loop gets there, so its real end is recorded, while
// the boundaries stay on the nominal grid (no drift).
class IntervalRecorder {
 public:
  // Keeps up to `max_intervals` intervals (0: only the latest, for a live view).
  IntervalRecorder(std::int64_t start_ns, std::int64_t period_ns, std::size_t max_intervals);

  bool due(std::int64_t now_ns) const { return now_ns >= next_boundary_ns_; }
  // Closes the interval that ends now, with `total_bytes` moved since go.
  // Returns it.
  const Interval& advance(std::int64_t now_ns, std::uint64_t total_bytes);
  // Closes the last, usually shorter interval at the end of the transfer.
  void finish(std::int64_t end_ns, std::uint64_t total_bytes);

  // Every interval kept, in order.
  const std::vector<Interval>& intervals() const { return intervals_; }
  // The interval closed last.
  const Interval& last() const { return last_; }
  // True if more intervals came than max_intervals: the rest were merged into the last kept.
  bool truncated() const { return truncated_; }

 private:
  void close(std::int64_t now_ns, std::uint64_t total_bytes);

  std::int64_t start_ns_;
  std::int64_t period_ns_;
  std::int64_t next_boundary_ns_;
  std::size_t max_intervals_;
  std::uint64_t closed_bytes_ = 0;
  bool truncated_ = false;
  Interval last_;
  std::vector<Interval> intervals_;
};

// A live view of one side's transfers (the client's interval lines or
// progress bar). The data loop calls it once per tick, never per chunk.
class TransferObserver {
 public:
  virtual ~TransferObserver() = default;
  // Before each run: a short label such as "tls 3/5" or "tcp warm-up 1".
  virtual void begin_run(const std::string& label) = 0;
  virtual std::chrono::milliseconds tick_period() const = 0;
  // `last` is the interval that just closed; `total_bytes` this side's count since go.
  virtual void on_tick(const Interval& last, std::uint64_t total_bytes) = 0;
  // The transfer is over (done or failed).
  virtual void on_end() = 0;
};

}  // namespace tlscmp::measure
