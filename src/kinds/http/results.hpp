#pragma once

// HTTP runs (--http): each run, and the statistics over a variant's runs.

#include "kinds/results.hpp"

namespace tlscmp::kinds {

// One run of an HTTP test: tcp or tls, -P connections.
struct HttpRun : RunHeader {
  std::uint64_t requests = 0;   // responses the client took in whole, over every connection
  double elapsed_us = 0;        // the client's window: the first request to the last response
  double handshake_us = 0;      // client: TCP connect plus TLS handshake, mean per connection
  std::string alpn;             // tls: the application protocol the handshake agreed (ALPN), or ""
  bool server_measured = true;  // false against a server of another make (--url): no server figures
  // --requests-per-connection: the connections opened over the run, how
  // many resumed a session, and their connect plus handshake, apart.
  std::uint64_t connections_opened = 0;
  std::uint64_t resumed_connections = 0;
  LatencySummary handshake_full_us;
  LatencySummary handshake_resumed_us;
  LatencySummary latency;           // each request's send to its response's last byte
  LatencySummary first_byte;        // each request's send to its response's first byte
  std::uint64_t wire_sent = 0;      // client: the bytes TCP carried out over the exchange
  std::uint64_t wire_received = 0;  // and in: headers, framing and TLS records with the bodies
  // Per connection, its requests a second: how evenly the connections were served.
  std::vector<double> connection_rates;

  double requests_per_s() const {
    return elapsed_us > 0 ? static_cast<double>(requests) / (elapsed_us / 1e6) : 0;
  }
  double cpu_us_per_request(const SideCost& side) const {
    return requests > 0 ? side.cpu_s() * 1e6 / static_cast<double>(requests) : 0;
  }
  double wire_bytes_per_request() const {
    return requests > 0 ? static_cast<double>(wire_sent + wire_received) / static_cast<double>(requests) : 0;
  }
  // Jain's fairness index over the connections' rates: 1 when every one was
  // served alike, 1/N when one had everything; 1 for one connection.
  double fairness() const;
};

// Medians over an HTTP variant's runs.
struct HttpStats {
  std::string variant;
  Mode mode = Mode::tcp;
  Summary requests_per_s;
  Summary p50_us;
  Summary p99_us;
  Summary first_byte_p50_us;
  Summary client_cpu_us_per_request;
  Summary server_cpu_us_per_request;
  Summary wire_bytes_per_request;
  Summary handshake_us;
  bool server_measured = true;  // its runs' server figures came (not --url)
  // Variants of another mode than the baseline, paired by round with its run.
  std::optional<PairedRatio> requests_per_s_over_baseline;
  std::optional<PairedRatio> p99_over_baseline;
  // Another library's TLS against the first's, paired by round.
  std::optional<PairedRatio> requests_per_s_over_twin;
};

struct HttpResults {
  std::vector<HttpRun> runs;
  std::vector<HttpStats> stats;  // one per variant that has runs, in parameters.variants order
  std::string headline;          // the variant whose ratios lead the report, or ""
};

void fill_statistics(HttpResults& results, const measure::Comparison& comparison);
std::vector<measure::HeadlineRatio> ratios_to_wait_on(const HttpResults& results);

}  // namespace tlscmp::kinds
