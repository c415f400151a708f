#pragma once

// Connection-per-transaction runs (--crr): each run's phases and counts, and
// the statistics over a variant's runs.

#include "kinds/results.hpp"

namespace tlscmp::kinds {

// One run of a connection-per-transaction test (crr): -P connectors, each
// opening a connection, making one transaction of the rr sizes, closing it.
// Its client and server costs are the connector threads' and the server's
// connection threads', added up: each thread's exact clock
// (measure::thread_cpu_s), so the total is in cpu_user_s and cpu_system_s
// is 0 (not split).
struct CrrRun : RunHeader {
  bool resumption = false;        // each connection offered the session of its connector's previous one
  std::string key_type;           // --compare-key-types: the key type asked of the server, "rsa-2048"
  std::uint32_t connectors = 1;   // -P
  std::uint64_t connections = 0;  // completed: connect, handshake, response and close
  std::uint64_t failed = 0;       // attempts that did not complete
  std::map<std::string, std::uint64_t> failures;  // failed attempts by cause, "connect: Connection refused"
  std::uint64_t resumed = 0;                      // TLS: connections the server resumed
  std::uint64_t refused = 0;                      // TLS, resumption: offered a session, had a full handshake
  std::string resumed_by;  // TLS 1.2 resumption: "ticket" or "session id"; TLS 1.3: "ticket"
  double elapsed_us = 0;   // the client's window: the first connect to the last close
  // Each completed connection's phases on the client: connect() to
  // established; the TLS handshake; the request's first byte sent to the
  // response's last byte in; and the whole, connect to response.
  LatencySummary connect;
  LatencySummary handshake;
  LatencySummary response;
  LatencySummary total;
  double bytes_sent = 0;      // TCP payload bytes per connection, client to server (TLS records and all)
  double bytes_received = 0;  // and server to client, as the client read them
  std::optional<std::uint64_t> server_connections;  // the server's count; none when interrupted
  std::optional<std::uint64_t> server_resumed;
  // TIME_WAIT sockets on the client's host (its network namespace) before the
  // run and after it; none where /proc/net/tcp cannot be read.
  std::optional<std::uint64_t> time_wait_before;
  std::optional<std::uint64_t> time_wait_after;

  double connections_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(connections) / (elapsed_us / 1e6) : 0;
  }
  double cpu_us_per_connection(const SideCost& side) const {
    return connections > 0 ? side.cpu_s() * 1e6 / static_cast<double>(connections) : 0;
  }
};

// Medians over a crr variant's runs.
struct CrrStats {
  std::string variant;
  Mode mode = Mode::tcp;
  Summary connections_per_s;
  Summary connect_p50_us;
  Summary handshake_p50_us;
  Summary response_p50_us;
  Summary total_p50_us;
  Summary total_p99_us;
  Summary client_cpu_us_per_connection;
  Summary server_cpu_us_per_connection;
  std::uint64_t connections = 0;  // over the runs
  std::uint64_t resumed = 0;
  std::uint64_t refused = 0;
  std::uint64_t failed = 0;
  // Variants of another mode than the baseline, paired by round with its run:
  // connections/s (< 1: fewer than the baseline) and the whole connection's
  // p50 (> 1: longer).
  std::optional<PairedRatio> connections_per_s_over_baseline;
  std::optional<PairedRatio> total_p50_over_baseline;
  // A variant of another TLS library (--tls-lib) over the first library's
  // of the same label, paired by round: connections/s.
  std::optional<PairedRatio> connections_per_s_over_tls;
  // A TLS variant against TCP: where each side's extra CPU per connection
  // goes (measure/cost_split.hpp); none where a side did not calibrate.
  std::optional<UnitSplit> client_split;
  std::optional<UnitSplit> server_split;
};

// Connection-per-transaction runs (--crr) and their statistics.
struct CrrResults {
  std::vector<CrrRun> runs;
  std::vector<CrrStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;         // the variant whose ratios lead the report (headline_variant), or ""
};

// Its statistics, per variant with the ratios to the baseline, and its
// headline (measure::KindResults calls it after each round).
void fill_statistics(CrrResults& results, const measure::Comparison& comparison);
// The ratios to the baseline --repeat auto waits on.
std::vector<measure::HeadlineRatio> ratios_to_wait_on(const CrrResults& results);

}  // namespace tlscmp::kinds
