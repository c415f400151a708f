#include "measure/results.hpp"

#include <map>

namespace tlscmp::measure {
namespace {

template <typename Run, typename Get>
Summary summarize_field(const std::vector<const Run*>& runs, Get get) {
  std::vector<double> values;
  values.reserve(runs.size());
  for (const Run* run : runs)
    values.push_back(get(*run));
  return summarize(values);
}

void compute_datagram_statistics(const TestParameters& parameters, DatagramResults& results) {
  results.stats.clear();
  for (Mode mode : parameters.modes) {
    std::vector<const DatagramRun*> runs;
    for (const DatagramRun& run : results.runs) {
      if (run.mode == mode && !run.warmup && !run.partial) runs.push_back(&run);
    }
    if (runs.empty()) continue;
    results.stats.push_back(
        {mode, summarize_field(runs, [](const DatagramRun& r) { return r.received_per_s(); }),
         summarize_field(runs, [](const DatagramRun& r) { return r.sent_per_s(); }),
         summarize_field(runs, [](const DatagramRun& r) { return r.total.loss_percent(); })});
  }
}

std::vector<std::string> variant_order(const Comparison& comparison) {
  if (!comparison.parameters.variants.empty()) return comparison.parameters.variants;
  std::vector<std::string> labels;
  for (Mode mode : comparison.parameters.modes)
    labels.emplace_back(to_string(mode));
  return labels;
}

// Round -> that round's TCP run, of the runs that count: what the TLS
// variants of rr and crr are paired with.
template <typename Run, typename Counts>
std::map<int, const Run*> tcp_by_round(const std::vector<Run>& runs, Counts counts) {
  std::map<int, const Run*> tcp;
  for (const Run& run : runs) {
    if (counts(run) && run.mode == Mode::tcp) tcp[run.round] = &run;
  }
  return tcp;
}

std::optional<PairedRatio> paired(const std::vector<double>& ratios) {
  if (ratios.empty()) return std::nullopt;
  return PairedRatio{summarize(ratios), bootstrap_median_ci(ratios)};
}

// Each round runs tcp and tls back to back: a TLS run's figures are compared
// with the same round's TCP run, and the ratios summarized with their CI.
void compute_rr_statistics(const Comparison& comparison, RrResults& results) {
  results.stats.clear();
  const auto counts = [](const RrRun& run) { return !run.warmup && !run.partial && run.transactions > 0; };
  const std::map<int, const RrRun*> tcp = tcp_by_round(results.runs, counts);
  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const RrRun*> runs;
    std::vector<double> tps, p50, p99;
    for (const RrRun& run : results.runs) {
      if (run.label() != variant || !counts(run)) continue;
      runs.push_back(&run);
      const auto base = tcp.find(run.round);
      if (run.mode != Mode::tls || base == tcp.end()) continue;
      const RrRun& t = *base->second;
      if (t.transactions_per_s() > 0) tps.push_back(run.transactions_per_s() / t.transactions_per_s());
      if (t.latency.p50 > 0) p50.push_back(run.latency.p50 / t.latency.p50);
      if (t.latency.p99 > 0) p99.push_back(run.latency.p99 / t.latency.p99);
    }
    if (runs.empty()) continue;
    RrStats stats;
    stats.variant = variant;
    stats.mode = runs.front()->mode;
    stats.transactions_per_s = summarize_field(runs, [](const RrRun& r) { return r.transactions_per_s(); });
    stats.p50_us = summarize_field(runs, [](const RrRun& r) { return r.latency.p50; });
    stats.p99_us = summarize_field(runs, [](const RrRun& r) { return r.latency.p99; });
    stats.client_cpu_us_per_transaction =
        summarize_field(runs, [](const RrRun& r) { return r.cpu_us_per_transaction(r.client); });
    stats.server_cpu_us_per_transaction =
        summarize_field(runs, [](const RrRun& r) { return r.cpu_us_per_transaction(r.server); });
    stats.transactions_per_s_over_tcp = paired(tps);
    stats.p50_over_tcp = paired(p50);
    stats.p99_over_tcp = paired(p99);
    results.stats.push_back(std::move(stats));
  }
}

// As rr: every TLS variant against the same round's TCP run.
void compute_crr_statistics(const Comparison& comparison, CrrResults& results) {
  results.stats.clear();
  const auto counts = [](const CrrRun& run) { return !run.warmup && !run.partial && run.connections > 0; };
  const std::map<int, const CrrRun*> tcp = tcp_by_round(results.runs, counts);
  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const CrrRun*> runs;
    std::vector<double> rate, p50;
    CrrStats stats;
    for (const CrrRun& run : results.runs) {
      if (run.label() != variant || !counts(run)) continue;
      runs.push_back(&run);
      stats.connections += run.connections;
      stats.resumed += run.resumed;
      stats.refused += run.refused;
      stats.failed += run.failed;
      const auto base = tcp.find(run.round);
      if (run.mode != Mode::tls || base == tcp.end()) continue;
      const CrrRun& t = *base->second;
      if (t.connections_per_s() > 0) rate.push_back(run.connections_per_s() / t.connections_per_s());
      if (t.total.p50 > 0) p50.push_back(run.total.p50 / t.total.p50);
    }
    if (runs.empty()) continue;
    stats.variant = variant;
    stats.mode = runs.front()->mode;
    stats.connections_per_s = summarize_field(runs, [](const CrrRun& r) { return r.connections_per_s(); });
    stats.connect_p50_us = summarize_field(runs, [](const CrrRun& r) { return r.connect.p50; });
    stats.handshake_p50_us = summarize_field(runs, [](const CrrRun& r) { return r.handshake.p50; });
    stats.response_p50_us = summarize_field(runs, [](const CrrRun& r) { return r.response.p50; });
    stats.total_p50_us = summarize_field(runs, [](const CrrRun& r) { return r.total.p50; });
    stats.total_p99_us = summarize_field(runs, [](const CrrRun& r) { return r.total.p99; });
    stats.client_cpu_us_per_connection =
        summarize_field(runs, [](const CrrRun& r) { return r.cpu_us_per_connection(r.client); });
    stats.server_cpu_us_per_connection =
        summarize_field(runs, [](const CrrRun& r) { return r.cpu_us_per_connection(r.server); });
    stats.connections_per_s_over_tcp = paired(rate);
    stats.total_p50_over_tcp = paired(p50);
    results.stats.push_back(std::move(stats));
  }
}

}  // namespace

namespace {

// The stream runs' statistics, a StreamStats per variant, and the headline.
void compute_stream_statistics(const Comparison& comparison, StreamResults& results) {
  results.stats.clear();
  results.tls_over_tcp.reset();
  results.tls_over_tcp_ci.reset();
  auto counts = [](const StreamRun& run) { return !run.warmup && !run.partial; };

  // Each round runs every variant back to back, so noise hits them alike:
  // TLS variants are compared with the round's TCP run. Time per byte, so
  // that duration runs (whose byte counts differ) compare too; with equal
  // byte counts it is the transfer time ratio.
  std::map<int, double> tcp_us_per_byte;  // round -> the TCP run's
  for (const StreamRun& run : results.runs) {
    if (counts(run) && run.mode == Mode::tcp && run.bytes > 0) {
      tcp_us_per_byte[run.round] = run.transfer_us / static_cast<double>(run.bytes);
    }
  }

  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const StreamRun*> runs;
    std::vector<double> ratios;
    Mode mode = Mode::tcp;
    for (const StreamRun& run : results.runs) {
      if (run.label() != variant || !counts(run)) continue;
      runs.push_back(&run);
      mode = run.mode;
      const auto tcp = tcp_us_per_byte.find(run.round);
      if (run.mode == Mode::tls && run.bytes > 0 && tcp != tcp_us_per_byte.end() && tcp->second > 0) {
        ratios.push_back(run.transfer_us / static_cast<double>(run.bytes) / tcp->second);
      }
    }
    if (runs.empty()) continue;
    StreamStats stats;
    stats = StreamStats{
        mode,
        summarize_field(runs, [](const StreamRun& r) { return r.transfer_us; }),
        summarize_field(runs, [](const StreamRun& r) { return r.sender_us; }),
        summarize_field(runs, [](const StreamRun& r) { return r.handshake_us; }),
        summarize_field(runs, [](const StreamRun& r) { return r.mbytes_per_s(); }),
        summarize_field(runs, [](const StreamRun& r) { return static_cast<double>(r.bytes); }),
        summarize_field(runs, [](const StreamRun& r) { return r.messages_per_s(); }),
        summarize_field(runs, [](const StreamRun& r) { return r.client.cpu_s_per_gib(r.bytes); }),
        summarize_field(runs, [](const StreamRun& r) { return r.server.cpu_s_per_gib(r.bytes); }),
        summarize_field(runs, [](const StreamRun& r) { return r.client.core_share(); }),
        summarize_field(runs, [](const StreamRun& r) { return r.server.core_share(); }),
        variant,
        std::nullopt,
        std::nullopt,
    };
    if (!ratios.empty()) {
      stats.over_tcp = summarize(ratios);
      stats.over_tcp_ci = bootstrap_median_ci(ratios);
    }
    results.stats.push_back(stats);
  }
  // The headline: the one TLS variant of a plain comparison.
  std::size_t tls_variants = 0;
  for (const StreamStats& s : results.stats) {
    if (s.mode == Mode::tls) ++tls_variants;
  }
  for (const StreamStats& s : results.stats) {
    if (s.mode == Mode::tls && tls_variants == 1) {
      results.tls_over_tcp = s.over_tcp;
      results.tls_over_tcp_ci = s.over_tcp_ci;
    }
  }
}

}  // namespace

void compute_statistics(Comparison& comparison) {
  std::visit(Overloaded{[&](StreamResults& r) { compute_stream_statistics(comparison, r); },
                        [](HandshakeResults&) {},  // summarized as its handshakes are made
                        [](GroupResults&) {},
                        [&](DatagramResults& r) { compute_datagram_statistics(comparison.parameters, r); },
                        [&](RrResults& r) { compute_rr_statistics(comparison, r); },
                        [&](CrrResults& r) { compute_crr_statistics(comparison, r); }},
             comparison.results);
}

}  // namespace tlscmp::measure

namespace tlscmp::measure {

void HandshakeSamples::add(const HandshakeSamples& more) {
  for (auto [mine, theirs] :
       {std::pair{&handshake_us, &more.handshake_us}, std::pair{&tls_us, &more.tls_us},
        std::pair{&bytes_received, &more.bytes_received}, std::pair{&bytes_sent, &more.bytes_sent},
        std::pair{&client_hello_bytes, &more.client_hello_bytes},
        std::pair{&server_hello_bytes, &more.server_hello_bytes}}) {
    mine->insert(mine->end(), theirs->begin(), theirs->end());
  }
  resumed += more.resumed;
}

HandshakeStats HandshakeSamples::summarize() const {
  return {measure::summarize(handshake_us),
          measure::summarize(tls_us),
          measure::summarize(bytes_received),
          measure::summarize(bytes_sent),
          resumed,
          measure::summarize(client_hello_bytes),
          measure::summarize(server_hello_bytes)};
}

const HandshakeResults* group_baseline(const std::vector<GroupHandshakes>& groups) {
  for (const GroupHandshakes& g : groups) {
    if (g.group == "X25519" && g.results) return &*g.results;
  }
  return nullptr;
}

GroupRatios group_ratios(const HandshakeResults& group, const HandshakeResults& x25519) {
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0; };
  return {ratio(group.full.per_second(), x25519.full.per_second()),
          ratio(group.resumed.per_second(), x25519.resumed.per_second()),
          ratio(group.full.tls_us.median, x25519.full.tls_us.median),
          ratio(group.resumed.tls_us.median, x25519.resumed.tls_us.median),
          ratio(group.full.client_hello_bytes.median, x25519.full.client_hello_bytes.median),
          ratio(group.full.server_hello_bytes.median, x25519.full.server_hello_bytes.median)};
}

}  // namespace tlscmp::measure
