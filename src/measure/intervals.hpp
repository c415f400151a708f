#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
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

// The intervals of parallel streams (-P) added up, period by period. Each
// stream's interval i goes to the period its start falls in (floor(start /
// period)): its intervals start on its own grid, and one that spans several
// periods (a stalled loop) is counted once. A sum starts at the earliest and
// ends at the latest of its parts, each on its stream's clock from its go.
std::vector<Interval> sum_intervals(const std::vector<std::vector<Interval>>& streams, double period_s);

// A live view of one side's transfers (the client's interval lines or
// progress bar). The data loop calls it once per tick, never per chunk.
struct TestParameters;
struct Comparison;

// One interval of a request/response run as it goes (kinds/rr): the
// transactions whose responses came in it, over every connection.
struct TransactionTick {
  double start_s = 0;  // from the run's start
  double end_s = 0;
  std::uint64_t transactions = 0;
  double p99_us = 0;        // 0 when none came
  std::uint64_t total = 0;  // transactions since the run's start

  double per_second() const {
    return end_s > start_s ? static_cast<double>(transactions) / (end_s - start_s) : 0;
  }
};

class TransferObserver {
 public:
  virtual ~TransferObserver() = default;
  // Once, before the first run: what the comparison will run (and where).
  virtual void begin_comparison(const TestParameters& /*parameters*/) {}
  // Before each run: a short label such as "tls 3/5" or "tcp warm-up 1".
  virtual void begin_run(const std::string& label) = 0;
  virtual std::chrono::milliseconds tick_period() const = 0;
  // `last` is the interval that just closed; `total_bytes` this side's count since go.
  virtual void on_tick(const Interval& last, std::uint64_t total_bytes) = 0;
  // A request/response run's interval that just closed (instead of on_tick).
  virtual void on_transactions(const TransactionTick& /*tick*/) {}
  // The transfer is over (done or failed).
  virtual void on_end() = 0;
  // A run is in the comparison's results, the last of its kind's runs.
  virtual void end_run(const Comparison& /*comparison*/) {}
};

// Joins the live ticks of parallel streams into one view: period k reaches the
// target once every stream has reported it, passed it or ended, with the
// streams' bytes added up. The streams report from their own threads.
class JoinedObserver {
 public:
  JoinedObserver(TransferObserver& target, std::size_t streams);
  JoinedObserver(const JoinedObserver&) = delete;
  JoinedObserver& operator=(const JoinedObserver&) = delete;

  // What stream `i` reports to.
  TransferObserver* stream(std::size_t i) { return &ports_[i]; }

 private:
  class Port final : public TransferObserver {
   public:
    Port(JoinedObserver& owner, std::size_t index) : owner_(&owner), index_(index) {}
    void begin_run(const std::string&) override {}
    std::chrono::milliseconds tick_period() const override { return owner_->target_->tick_period(); }
    void on_tick(const Interval& last, std::uint64_t total_bytes) override {
      owner_->tick(index_, last, total_bytes);
    }
    void on_end() override { owner_->end(index_); }

   private:
    JoinedObserver* owner_;
    std::size_t index_;
  };
  struct Stream {
    std::int64_t reached = -1;  // the highest period this stream reported
    bool ended = false;
    std::uint64_t total_bytes = 0;
  };

  void tick(std::size_t i, const Interval& last, std::uint64_t total_bytes);
  void end(std::size_t i);
  void forward_complete();  // with mutex_ held

  TransferObserver* target_;
  double period_s_;
  std::mutex mutex_;
  std::vector<Port> ports_;
  std::vector<Stream> streams_;
  struct Pending {
    Interval sum;
    bool any = false;  // a stream reported this period
  };
  std::int64_t first_pending_ = 0;  // the period of pending_.front()
  std::deque<Pending> pending_;     // periods not yet forwarded, in order
  bool ended_ = false;
};

}  // namespace tlscmp::measure
