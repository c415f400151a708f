#pragma once

// Request/response runs (--rr): each run and connection, and the statistics
// over a variant's runs.

#include "kinds/results.hpp"

namespace tlscmp::kinds {

// One connection of a request/response run with -P > 1.
struct RrConnection {
  std::uint32_t index = 0;
  std::uint64_t transactions = 0;
  double elapsed_us = 0;  // the client's window on this connection: first request to last response
  LatencySummary latency;

  double transactions_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(transactions) / (elapsed_us / 1e6) : 0;
  }
};

// One run of a request/response test (rr): tcp or tls, -P connections.
struct RrRun : RunHeader {
  std::uint64_t transactions = 0;  // responses the client took in whole, over every connection
  double elapsed_us = 0;           // the client's window: the first request to the last response
  double handshake_us = 0;         // client: TCP connect plus TLS handshake, mean per connection
  // Closed loop: each request's send to its response's last byte. Open loop
  // (--rate): from the time the schedule said to send it.
  LatencySummary latency;
  std::vector<RrConnection> connections;  // with -P > 1
  std::vector<RrInterval> intervals;      // with -i, over every connection

  double transactions_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(transactions) / (elapsed_us / 1e6) : 0;
  }
  // CPU microseconds one side spent per transaction.
  double cpu_us_per_transaction(const SideCost& side) const {
    return transactions > 0 ? side.cpu_s() * 1e6 / static_cast<double>(transactions) : 0;
  }
};

// Medians over a request/response variant's runs.
struct RrStats {
  std::string variant;
  Mode mode = Mode::tcp;
  Summary transactions_per_s;
  Summary p50_us;
  Summary p99_us;
  Summary client_cpu_us_per_transaction;
  Summary server_cpu_us_per_transaction;
  // Variants of another mode than the baseline, paired by round with its run:
  // > 1 is more transactions/s, or a longer latency.
  std::optional<PairedRatio> transactions_per_s_over_baseline;
  std::optional<PairedRatio> p50_over_baseline;
  std::optional<PairedRatio> p99_over_baseline;
  // quic: transactions/s over the round's tls run, where the rounds have one.
  std::optional<PairedRatio> transactions_per_s_over_tls;
  // A TLS variant against TCP: where each side's extra CPU per transaction
  // goes (measure/cost_split.hpp); none where a side did not calibrate.
  std::optional<UnitSplit> client_split;
  std::optional<UnitSplit> server_split;
};

// Request/response runs (--rr) and their statistics.
struct RrResults {
  std::vector<RrRun> runs;
  std::vector<RrStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;        // the variant whose ratios lead the report (headline_variant), or ""
};

// Its statistics, per variant with the ratios to the baseline, and its
// headline (measure::KindResults calls it after each round).
void fill_statistics(RrResults& results, const measure::Comparison& comparison);
// The ratios to the baseline --repeat auto waits on.
std::vector<measure::HeadlineRatio> ratios_to_wait_on(const RrResults& results);

}  // namespace tlscmp::kinds
