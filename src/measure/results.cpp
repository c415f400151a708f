#include "measure/results.hpp"

#include "measure/cost_split.hpp"

#include <algorithm>
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

// Round -> that round's baseline run, of the runs that count: what the
// variants of the other modes are paired with. Each round runs every variant
// back to back, so that noise hits them alike. Empty with one mode.
template <typename Run, typename Counts>
std::map<int, const Run*> baseline_by_round(const TestParameters& parameters, const std::vector<Run>& runs,
                                            Counts counts) {
  std::map<int, const Run*> base;
  const std::optional<Mode> baseline = parameters.baseline();
  for (const Run& run : runs) {
    if (counts(run) && run.mode == baseline) base[run.round] = &run;
  }
  return base;
}

// The variants that have a ratio to the baseline.
template <typename Stats, typename Ratio>
std::vector<std::string> compared_variants(const std::vector<Stats>& stats, Ratio ratio) {
  std::vector<std::string> labels;
  for (const Stats& s : stats) {
    if (ratio(s)) labels.push_back(s.variant);
  }
  return labels;
}

std::optional<PairedRatio> paired(const std::vector<double>& ratios) {
  if (ratios.empty()) return std::nullopt;
  return PairedRatio{summarize(ratios), bootstrap_median_ci(ratios)};
}

// Round -> that round's plain tls run, of the runs that count: what quic
// runs are paired with beside the baseline.
template <typename Run, typename Counts>
std::map<int, const Run*> tls_by_round(const std::vector<Run>& runs, Counts counts) {
  std::map<int, const Run*> tls;
  for (const Run& run : runs) {
    if (counts(run) && run.mode == Mode::tls && run.label() == "tls") tls[run.round] = &run;
  }
  return tls;
}

// A quic variant's runs over the same round's tls run, by `figure`: none
// for other variants, or where no round ran tls.
template <typename Run, typename Figure>
std::optional<PairedRatio> quic_over_tls(const std::vector<const Run*>& runs,
                                         const std::map<int, const Run*>& tls, Figure figure) {
  std::vector<double> ratios;
  for (const Run* run : runs) {
    const auto t = tls.find(run->round);
    if (run->mode != Mode::quic || t == tls.end() || !(figure(*t->second) > 0)) continue;
    ratios.push_back(figure(*run) / figure(*t->second));
  }
  return paired(ratios);
}

// A TLS variant's rr or crr runs against the same round's TCP runs: each
// side's extra CPU per unit split (measure::split_unit_cost); `per_unit`
// gives a run's CPU per unit on a side.
template <typename Run, typename PerUnit>
void add_unit_splits(const std::vector<const Run*>& runs, const std::map<int, const Run*>& base,
                     PerUnit per_unit, bool handshake, std::optional<UnitSplit>& client,
                     std::optional<UnitSplit>& server) {
  if (runs.empty() || runs.front()->mode != Mode::tls || base.empty() ||
      base.begin()->second->mode != Mode::tcp)
    return;
  for (const bool client_side : {true, false}) {
    std::vector<UnitCost> costs;
    for (const Run* run : runs) {
      const auto b = base.find(run->round);
      if (b == base.end()) continue;
      const SideCost& side = client_side ? run->client : run->server;
      const SideCost& base_side = client_side ? b->second->client : b->second->server;
      costs.push_back({per_unit(*run, side), per_unit(*b->second, base_side),
                       side.transaction_calibration ? &*side.transaction_calibration : nullptr});
    }
    (client_side ? client : server) = split_unit_cost(costs, client_side, handshake);
  }
}

// A run of another mode is compared with the same round's baseline run, and
// the ratios summarized with their CI.
void compute_rr_statistics(const Comparison& comparison, RrResults& results) {
  results.stats.clear();
  const auto counts = [](const RrRun& run) { return !run.warmup && !run.partial && run.transactions > 0; };
  const std::map<int, const RrRun*> baseline_runs =
      baseline_by_round(comparison.parameters, results.runs, counts);
  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const RrRun*> runs;
    std::vector<double> tps, p50, p99;
    for (const RrRun& run : results.runs) {
      if (run.label() != variant || !counts(run)) continue;
      runs.push_back(&run);
      const auto base = baseline_runs.find(run.round);
      if (base == baseline_runs.end() || run.mode == base->second->mode) continue;
      const RrRun& b = *base->second;
      if (b.transactions_per_s() > 0) tps.push_back(run.transactions_per_s() / b.transactions_per_s());
      if (b.latency.p50 > 0) p50.push_back(run.latency.p50 / b.latency.p50);
      if (b.latency.p99 > 0) p99.push_back(run.latency.p99 / b.latency.p99);
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
    stats.transactions_per_s_over_baseline = paired(tps);
    stats.p50_over_baseline = paired(p50);
    stats.p99_over_baseline = paired(p99);
    stats.transactions_per_s_over_tls = quic_over_tls(runs, tls_by_round(results.runs, counts),
                                                      [](const RrRun& r) { return r.transactions_per_s(); });
    add_unit_splits(
        runs, baseline_runs,
        [](const RrRun& r, const SideCost& side) { return r.cpu_us_per_transaction(side); },
        /*handshake=*/false, stats.client_split, stats.server_split);
    results.stats.push_back(std::move(stats));
  }
  results.headline = headline_variant(
      comparison.parameters,
      compared_variants(results.stats, [](const RrStats& s) { return s.transactions_per_s_over_baseline; }));
}

// As rr: every variant of another mode against the same round's baseline run.
void compute_crr_statistics(const Comparison& comparison, CrrResults& results) {
  results.stats.clear();
  const auto counts = [](const CrrRun& run) { return !run.warmup && !run.partial && run.connections > 0; };
  const std::map<int, const CrrRun*> baseline_runs =
      baseline_by_round(comparison.parameters, results.runs, counts);
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
      const auto base = baseline_runs.find(run.round);
      if (base == baseline_runs.end() || run.mode == base->second->mode) continue;
      const CrrRun& b = *base->second;
      if (b.connections_per_s() > 0) rate.push_back(run.connections_per_s() / b.connections_per_s());
      if (b.total.p50 > 0) p50.push_back(run.total.p50 / b.total.p50);
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
    stats.connections_per_s_over_baseline = paired(rate);
    stats.total_p50_over_baseline = paired(p50);
    add_unit_splits(
        runs, baseline_runs,
        [](const CrrRun& r, const SideCost& side) { return r.cpu_us_per_connection(side); },
        /*handshake=*/true, stats.client_split, stats.server_split);
    results.stats.push_back(std::move(stats));
  }
  results.headline = headline_variant(
      comparison.parameters,
      compared_variants(results.stats, [](const CrrStats& s) { return s.connections_per_s_over_baseline; }));
}

}  // namespace

namespace {

// A TLS variant's runs against TCP's, one way: each side's extra CPU split.
void add_cost_splits(const TestParameters& parameters, const std::vector<const StreamRun*>& runs,
                     const std::map<int, const StreamRun*>& base, StreamStats& stats) {
  if (runs.empty() || runs.front()->mode != Mode::tls || base.empty() ||
      base.begin()->second->mode != Mode::tcp || parameters.test.stream.bidir)
    return;
  const bool client_sends = parameters.test.stream.direction == Direction::client_to_server;
  stats.client_split = split_cost(runs, base, /*client_side=*/true, client_sends);
  stats.server_split = split_cost(runs, base, /*client_side=*/false, client_sends);
}

// The stream runs' statistics, a StreamStats per variant, and the headline.
// Time per byte, so that duration runs (whose byte counts differ) compare
// too; with equal byte counts it is the transfer time ratio.
void compute_stream_statistics(const Comparison& comparison, StreamResults& results) {
  results.stats.clear();
  auto counts = [](const StreamRun& run) { return !run.warmup && !run.partial && run.bytes > 0; };
  const std::map<int, const StreamRun*> base = baseline_by_round(comparison.parameters, results.runs, counts);
  const auto us_per_byte = [](const StreamRun& r) { return r.transfer_us / static_cast<double>(r.bytes); };
  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const StreamRun*> runs;
    std::vector<double> ratios;
    for (const StreamRun& run : results.runs) {
      if (run.label() != variant || run.warmup || run.partial) continue;
      runs.push_back(&run);
      const auto b = base.find(run.round);
      if (b == base.end() || run.mode == b->second->mode || run.bytes == 0 || !(us_per_byte(*b->second) > 0))
        continue;
      ratios.push_back(us_per_byte(run) / us_per_byte(*b->second));
    }
    if (runs.empty()) continue;
    results.stats.push_back(StreamStats{
        runs.front()->mode,
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
        paired(ratios),
        std::nullopt,
        std::nullopt,
        std::nullopt,
    });
    results.stats.back().over_tls = quic_over_tls(runs, tls_by_round(results.runs, counts), us_per_byte);
    add_cost_splits(comparison.parameters, runs, base, results.stats.back());
  }
  if (!comparison.parameters.test.stream.bidir && !base.empty() && base.begin()->second->mode == Mode::tcp) {
    split_runs(results.runs, base,
               comparison.parameters.test.stream.direction == Direction::client_to_server);
  }
  results.headline = headline_variant(
      comparison.parameters,
      compared_variants(results.stats, [](const StreamStats& s) { return s.over_baseline; }));
}

// A summary of a figure some runs may lack; none where every run lacks it.
template <typename Get>
std::optional<Summary> summarize_known(const std::vector<const FlowsRun*>& runs, Get get) {
  std::vector<double> values;
  for (const FlowsRun* run : runs) {
    if (const std::optional<double> value = get(*run)) values.push_back(*value);
  }
  if (values.empty()) return std::nullopt;
  return summarize(values);
}

// As rr: every variant of another mode against the same round's baseline run.
void compute_flows_statistics(const Comparison& comparison, FlowsResults& results) {
  results.stats.clear();
  const auto counts = [](const FlowsRun& run) { return !run.warmup && !run.partial && run.transactions > 0; };
  const std::map<int, const FlowsRun*> baseline_runs =
      baseline_by_round(comparison.parameters, results.runs, counts);
  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const FlowsRun*> runs;
    std::vector<double> tps, p50;
    for (const FlowsRun& run : results.runs) {
      if (run.label() != variant || !counts(run)) continue;
      runs.push_back(&run);
      const auto base = baseline_runs.find(run.round);
      if (base == baseline_runs.end() || run.mode == base->second->mode) continue;
      const FlowsRun& b = *base->second;
      if (b.transactions_per_s() > 0) tps.push_back(run.transactions_per_s() / b.transactions_per_s());
      if (b.latency.p50 > 0) p50.push_back(run.latency.p50 / b.latency.p50);
    }
    if (runs.empty()) continue;
    FlowsStats stats;
    stats.variant = variant;
    stats.mode = runs.front()->mode;
    stats.transactions_per_s =
        summarize_field(runs, [](const FlowsRun& r) { return r.transactions_per_s(); });
    stats.p50_us = summarize_field(runs, [](const FlowsRun& r) { return r.latency.p50; });
    stats.p99_us = summarize_field(runs, [](const FlowsRun& r) { return r.latency.p99; });
    stats.flows_per_s = summarize_field(runs, [](const FlowsRun& r) { return r.flows_per_s(); });
    stats.client_cpu_us_per_transaction =
        summarize_field(runs, [](const FlowsRun& r) { return r.cpu_us_per_transaction(r.client); });
    stats.server_cpu_us_per_transaction =
        summarize_field(runs, [](const FlowsRun& r) { return r.cpu_us_per_transaction(r.server); });
    stats.client_idle_rss = summarize_known(runs, [](const FlowsRun& r) { return r.client_memory.idle_rss; });
    stats.server_idle_rss = summarize_known(runs, [](const FlowsRun& r) { return r.server_memory.idle_rss; });
    stats.server_idle_tcp = summarize_known(runs, [](const FlowsRun& r) { return r.server_memory.idle_tcp; });
    stats.client_idle_heap =
        summarize_known(runs, [](const FlowsRun& r) { return r.client_memory.idle_heap; });
    stats.server_idle_heap =
        summarize_known(runs, [](const FlowsRun& r) { return r.server_memory.idle_heap; });
    stats.transactions_per_s_over_baseline = paired(tps);
    stats.p50_over_baseline = paired(p50);
    results.stats.push_back(std::move(stats));
  }
  results.headline =
      headline_variant(comparison.parameters, compared_variants(results.stats, [](const FlowsStats& s) {
                         return s.transactions_per_s_over_baseline;
                       }));
}

}  // namespace

std::string headline_variant(const TestParameters& parameters, const std::vector<std::string>& compared) {
  if (parameters.modes.size() != 2) return {};
  if (compared.size() == 1) return compared.front();
  const std::string plain = to_string(parameters.modes.back());
  return std::find(compared.begin(), compared.end(), plain) != compared.end() ? plain : std::string();
}

void fill_statistics(StreamResults& r, const Comparison& c) {
  compute_stream_statistics(c, r);
}
void fill_statistics(DatagramResults& r, const Comparison& c) {
  compute_datagram_statistics(c.parameters, r);
}
void fill_statistics(RrResults& r, const Comparison& c) {
  compute_rr_statistics(c, r);
}
void fill_statistics(CrrResults& r, const Comparison& c) {
  compute_crr_statistics(c, r);
}
void fill_statistics(FlowsResults& r, const Comparison& c) {
  compute_flows_statistics(c, r);
}

void compute_statistics(Comparison& comparison) {
  comparison.results.compute_statistics(comparison);
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
