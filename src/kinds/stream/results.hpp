#pragma once

// Bulk stream runs (tcp, tls): what each run measured, per connection, and the
// statistics over a variant's runs.

#include "kinds/results.hpp"

namespace tlscmp::kinds {

// One data connection of a run with -P (or --bidir).
struct StreamResult {
  std::uint32_t index = 0;
  Direction direction = Direction::client_to_server;
  std::uint64_t bytes = 0;  // the receiver's count
  double transfer_us = 0;   // the receiver's window
  double sender_us = 0;     // the sender's window
  std::uint64_t messages = 0;
  std::vector<Interval> intervals;  // the receiver's, with -i

  double mbytes_per_s() const { return transfer_us > 0 ? static_cast<double>(bytes) / transfer_us : 0; }
};

// A bulk stream run (tcp, tls): -P connections, one way or both.
struct StreamRun : RunHeader {
  std::uint64_t bytes = 0;            // payload bytes the receiver counted
  double transfer_us = 0;             // receiver: from sending "go" to holding the last byte
  double sender_us = 0;               // sender: from receiving "go" to its last write returning
  double handshake_us = 0;            // client: TCP connect plus TLS handshake of the data connection
  double setup_us = 0;                // client: the first connect to the last connection ready
  std::uint32_t setup_at_once = 1;    // how many connections were set up at a time
  std::vector<Interval> intervals;    // the receiver's, with -i; with -P those of the streams that go
                                      // the test's way, added up (measure::sum_intervals)
  std::uint64_t messages = 0;         // with --msg-size: messages the receiver got whole
  std::uint64_t payload_bytes = 0;    // with --msg-size: their bytes, length headers not counted
  std::vector<StreamResult> streams;  // with -P > 1: each connection; the fields above are the totals
  // TLS against the same round's TCP run, one way: each side's split
  // (measure/cost_split.hpp), set with the statistics.
  std::optional<RunSplit> client_split, server_split;

  double messages_per_s() const {
    return transfer_us > 0 ? static_cast<double>(messages) / (transfer_us / 1e6) : 0;
  }

  // Decimal megabytes (10^6 bytes) per second of transfer_us.
  double mbytes_per_s() const { return transfer_us > 0 ? static_cast<double>(bytes) / transfer_us : 0; }
};

struct StreamStats {
  Mode mode = Mode::tcp;
  Summary transfer_us;
  Summary sender_us;
  Summary handshake_us;
  Summary mbytes_per_s;
  Summary bytes;           // varies only in duration mode
  Summary messages_per_s;  // with --msg-size
  // CPU per side; which side sends depends on the direction.
  Summary client_cpu_s_per_gib;
  Summary server_cpu_s_per_gib;
  Summary client_core_share;
  Summary server_core_share;
  std::string variant;  // the runs' label: "tcp", "tls", or a suite with --compare-ciphers
  // Variants of another mode than the baseline: time per byte over the same
  // round's baseline run (> 1: slower), with the 95% interval of its median.
  std::optional<PairedRatio> over_baseline;
  // quic: the same over the round's tls run, where the rounds have one.
  std::optional<PairedRatio> over_tls;
  // TLS variants against a TCP baseline, one way: where each side's extra
  // CPU goes (measure/cost_split.hpp).
  std::optional<CostSplit> client_split;
  std::optional<CostSplit> server_split;
};

// Bulk stream runs (tcp, tls) and their statistics.
struct StreamResults {
  std::vector<StreamRun> runs;
  std::vector<StreamStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;            // the variant whose ratio leads the report (headline_variant), or ""
};

// Its statistics, per variant with the ratios to the baseline, and its
// headline (measure::KindResults calls it after each round).
void fill_statistics(StreamResults& results, const measure::Comparison& comparison);
// The ratios to the baseline --repeat auto waits on.
std::vector<measure::HeadlineRatio> ratios_to_wait_on(const StreamResults& results);

}  // namespace tlscmp::kinds
