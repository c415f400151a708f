#pragma once

// Many-connection runs (--flows): each run's rates, latency and memory per
// connection, and the statistics over a variant's runs.

#include "kinds/results.hpp"

namespace tlscmp::kinds {

// One side's memory per connection in a many-connection run: what its
// process's resident set and the kernel's TCP memory grew by from before the
// first flow, over the flows: with every flow established and idle, and
// after the traffic (flows still held). Bytes per connection; none where a
// reading was missing. The kernel's share is the host's (the network
// namespace's), both ends together where they share one.
struct FlowsMemory {
  std::optional<double> idle_rss;
  std::optional<double> after_rss;
  std::optional<double> idle_tcp;
  std::optional<double> after_tcp;
  // The allocator's bytes in use, the same way: what live objects hold,
  // which RSS overstates for a process's first run and understates for the
  // runs after it (they reuse what it freed).
  std::optional<double> idle_heap;
  std::optional<double> after_heap;
};

// One run of a many-connection test (--flows N): N connections on event
// loops at each end, every one established first (timed on its own, the
// handshakes in it), then the work on each: a bulk stream, closed-loop
// transactions of the rr sizes, or (crr) N connectors that each connect,
// make one transaction and close, over again (nothing established first).
// Each side's cost is its event loops' CPU in the traffic window, user and
// system together in cpu_user_s (cpu_system_s 0), as crr's.
struct FlowsRun : RunHeader {
  spec::FlowWork work = spec::FlowWork::rr;
  bool release_buffers = false;  // tls-release: SSL_MODE_RELEASE_BUFFERS at both ends
  std::uint32_t flows = 0;       // asked for
  std::uint32_t client_threads = 0;
  std::uint32_t server_threads = 0;
  double establish_us = 0;  // client: the first connect to the last flow established
  // Units of the work over every flow: responses the client took in whole
  // (rr), connections that made their transaction (crr), or the bytes the
  // receiving side took (stream).
  std::uint64_t transactions = 0;
  double elapsed_us =
      0;  // the first request to the last response; stream: the receiver's first byte to its last
  LatencySummary latency;    // rr: each request's send to its response's last byte; crr: connect to response
  LatencySummary connect;    // crr: each connect
  LatencySummary handshake;  // crr, TLS: each handshake
  // Each flow's units of work: the least, the median and the most; and Jain's
  // fairness index over flows, (sum x)^2 / (n sum x^2): 1 when all are equal.
  double flow_min = 0;
  double flow_p50 = 0;
  double flow_max = 0;
  double fairness = 0;
  FlowsMemory client_memory;
  FlowsMemory server_memory;
  // QUIC: the client's datagrams over its connections, the server's port's
  // over the test (udp_path).
  RunFacts client_facts;
  RunFacts server_facts;
  std::uint64_t failed_flows = 0;  // flows that failed during the traffic (a stall, a close)
  std::string first_failure;       // the first of them: "flow 12: ..."

  double transactions_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(transactions) / (elapsed_us / 1e6) : 0;
  }
  double flows_per_s() const { return establish_us > 0 ? flows / (establish_us / 1e6) : 0; }
  double cpu_us_per_transaction(const SideCost& side) const {
    return transactions > 0 ? side.cpu_s() * 1e6 / static_cast<double>(transactions) : 0;
  }
};

// Medians over a many-connection variant's runs.
struct FlowsStats {
  std::string variant;
  Mode mode = Mode::tcp;
  Summary transactions_per_s;
  Summary p50_us;
  Summary p99_us;
  Summary flows_per_s;
  Summary client_cpu_us_per_transaction;
  Summary server_cpu_us_per_transaction;
  // Memory per connection, idle, bytes: the process's and the kernel's TCP
  // share on each side; none where no run had the reading.
  std::optional<Summary> client_idle_rss;
  std::optional<Summary> server_idle_rss;
  std::optional<Summary> server_idle_tcp;
  std::optional<Summary> client_idle_heap;
  std::optional<Summary> server_idle_heap;
  std::optional<PairedRatio> transactions_per_s_over_baseline;
  std::optional<PairedRatio> p50_over_baseline;
  // A variant of another TLS library (--tls-lib) over the first library's
  // of the same label, paired by round: transactions/s (or MB/s).
  std::optional<PairedRatio> transactions_per_s_over_tls;
};

// Many-connection runs (--flows) and their statistics.
struct FlowsResults {
  std::vector<FlowsRun> runs;
  std::vector<FlowsStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;           // the variant whose ratios lead the report (headline_variant), or ""
};

// Its statistics, per variant with the ratios to the baseline, and its
// headline (measure::KindResults calls it after each round).
void fill_statistics(FlowsResults& results, const measure::Comparison& comparison);
// The ratios to the baseline --repeat auto waits on.
std::vector<measure::HeadlineRatio> ratios_to_wait_on(const FlowsResults& results);

}  // namespace tlscmp::kinds
