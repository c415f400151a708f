// The flows kind's statistics over its runs (kinds/flows/results.hpp).

#include <algorithm>
#include <map>

#include "kinds/flows/results.hpp"
#include "measure/run_stats.hpp"

namespace tlscmp::kinds {
namespace {

using namespace measure;

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
    stats.transactions_per_s_over_tls = over_twin(runs, own_runs_by_round(results.runs, counts),
                                                  [](const FlowsRun& r) { return r.transactions_per_s(); });
    results.stats.push_back(std::move(stats));
  }
  results.headline =
      headline_variant(comparison.parameters, compared_variants(results.stats, [](const FlowsStats& s) {
                         return s.transactions_per_s_over_baseline;
                       }));
}

}  // namespace

void fill_statistics(FlowsResults& r, const measure::Comparison& c) {
  compute_flows_statistics(c, r);
}

std::vector<measure::HeadlineRatio> ratios_to_wait_on(const FlowsResults& r) {
  return measure::ratios_of(r.stats, &FlowsStats::transactions_per_s_over_baseline);
}

}  // namespace tlscmp::kinds
