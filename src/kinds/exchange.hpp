#pragma once

// The data path of a request/response test, which every kind that makes
// transactions shares: what each side does on one connection once the
// server's ready byte has gone.
//
//   client -> server   a request: rr_request_bytes
//   server -> client   its response: rr_response_bytes, once the whole request is in
//   ... until the client has made its transactions (-n) or its time is up
//   (-t), and has every response it asked for; then the client ends its
//   sending direction (TLS close_notify, TCP FIN), the server answers with
//   its own end, and the client checks that nothing came after the last
//   response.
//
// Closed loop, the client sends the next request when the response is in.
// Open loop (rate), it sends on a schedule, whether the responses keep up
// or not, and counts each transaction's latency from when the schedule said
// to send it: a stall costs every request that should have gone during it
// (no coordinated omission). With --verify, requests and responses come from
// the seeded pattern (measure/payload.hpp), each direction its own stream of
// offsets, and the receiving side checks every byte.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinds/side_result.hpp"
#include "measure/latency.hpp"
#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

// Per-interval counts and latencies of a run (-i, or a live view), filled
// by every connection's thread. Each connection keeps its current interval
// in a slot of its own, under a lock of its own (uncontended but when a
// reader comes), and hands it to the board when its next interval begins;
// a reader pulls in the slots of connections that have not moved on, so
// that a stalled connection cannot hold a finished interval back.
class RrIntervalBoard {
 public:
  RrIntervalBoard(std::int64_t go_ns, std::chrono::milliseconds period, std::uint32_t connections);

  std::int64_t go_ns() const { return go_ns_; }
  std::int64_t period_ns() const { return period_ns_; }
  // The interval a response completed at `now_ns` counts in; the last one
  // (kMaxIntervals) takes whatever comes later.
  std::size_t index(std::int64_t now_ns) const;
  // A transaction of `connection` whose response came at `now_ns`, after `us`.
  void record(std::uint32_t connection, std::int64_t now_ns, double us);
  // Interval `index` once it is over, for a live view; `total` counts every
  // transaction up to its end.
  measure::TransactionTick tick(std::size_t index);
  // Every interval up to the one that holds `end_ns`, the run's end (every
  // connection done).
  std::vector<measure::RrInterval> intervals(std::int64_t end_ns);

 private:
  struct Slot {
    std::mutex mutex;
    std::size_t current = 0;
    measure::LatencyHistogram latencies;
  };
  // Moves a slot's interval to the board if it is `up_to` or earlier. Needs slot.mutex.
  void settle(Slot& slot, std::size_t up_to);

  std::int64_t go_ns_;
  std::int64_t period_ns_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::mutex mutex_;  // guards latencies_ and total_
  std::vector<measure::LatencyHistogram> latencies_;
  std::uint64_t total_ = 0;
};

// What one connection's client side does.
struct RrClientSpec {
  std::uint32_t connection = 0;  // its index, for the --verify patterns
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  std::uint64_t transactions = 0;  // on this connection; 0: until stop_ns
  std::int64_t start_ns = 0;       // the first request's time (open loop: its scheduled time)
  std::int64_t stop_ns = 0;        // timed: no request starts (or is scheduled) at or after this
  double rate_tps = 0;             // this connection's rate; 0: closed loop
  bool stream_per_tx = false;      // a stream per transaction (Stream::stream_per_transaction)
  std::optional<std::uint64_t> verify_seed;
  std::chrono::milliseconds idle_timeout{30'000};
  RrIntervalBoard* intervals = nullptr;  // with -i
  RrIntervalBoard* live = nullptr;       // a live view's (may be `intervals`)
};

// What one connection's side measured.
struct RrSideResult {
  std::uint64_t transactions = 0;    // client: responses taken in whole; server: requests answered
  std::uint64_t bytes_received = 0;  // client: response bytes; server: request bytes
  std::int64_t start_ns = 0;         // this side's window, on its clock
  std::int64_t end_ns = 0;
  double cpu_user_s = 0;  // this connection's thread, over the window
  double cpu_system_s = 0;
  measure::LatencyHistogram latency;                 // client only
  std::optional<std::uint64_t> transaction_streams;  // --stream-per-tx over QUIC: the streams opened or taken
  RunFacts facts;     // TCP_INFO, host CPU, the thread's CPUs (kinds::run_data_threads)
  std::string error;  // empty, or what went wrong, naming the transaction
};

// What one connection's side measured, as it goes to the other side in
// a side_result: `messages` the transactions, `bytes` the bytes received,
// `offset_us` from `earliest_ns`, the earliest start on this side.
SideResult to_side_result(const RrSideResult& result, Role role, std::uint32_t connection,
                          std::int64_t earliest_ns);

// Each connection's facts, as its data thread saw them (run_data_threads),
// with its transaction streams.
void take_facts(std::vector<RrSideResult>& results, std::vector<RunFacts> facts);

// The client's side of one connection. Never throws for network outcomes:
// a failure is in `error`, with what was counted until then.
RrSideResult run_rr_client(Stream& stream, const RrClientSpec& spec);

// What one connection's server side does.
struct RrServerSpec {
  std::uint32_t connection = 0;
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  bool closed_loop = true;     // a request may not come before the last one's response has gone
  bool stream_per_tx = false;  // a stream per transaction (Stream::stream_per_transaction)
  std::optional<std::uint64_t> verify_seed;
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds max_duration{0};        // the server's --max-duration
  std::chrono::milliseconds max_duration_grace{0};  // and the time past it allowed
  std::uint64_t min_rate = 0;  // the server's --min-rate: bytes a second while a request comes
};

RrSideResult run_rr_server(Stream& stream, const RrServerSpec& spec);

// The most one read or write call of a message moves: large requests and
// responses go in pieces, so that a 1 GiB response needs no 1 GiB buffer.
inline constexpr std::size_t kMaxMessagePiece = 256 * 1024;

// One message of a transaction written whole (`bytes` of zeros) or read
// whole into `scratch` (at least a byte), each piece of at most
// kMaxMessagePiece bytes within `idle`: a connection's single transaction
// (crr), where no transfer phase's idle timeout holds the stream. rr's
// loops keep that timeout and check every byte instead.
void write_message(Stream& stream, std::uint64_t bytes, std::chrono::milliseconds idle, std::error_code& ec);
void read_message(Stream& stream, std::uint64_t bytes, std::span<std::byte> scratch,
                  std::chrono::milliseconds idle, std::error_code& ec);

// The --verify patterns' seeds, one per connection and direction.
std::uint64_t rr_request_seed(std::uint64_t seed, std::uint32_t connection);
std::uint64_t rr_response_seed(std::uint64_t seed, std::uint32_t connection);

}  // namespace tlscmp::kinds
