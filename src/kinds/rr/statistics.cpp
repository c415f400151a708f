// The rr kind's statistics over its runs (kinds/rr/results.hpp).

#include <algorithm>
#include <map>

#include "kinds/rr/results.hpp"
#include "measure/run_stats.hpp"

namespace tlscmp::kinds {
namespace {

using namespace measure;

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
    stats.transactions_per_s_over_tls = over_twin(runs, own_runs_by_round(results.runs, counts),
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

}  // namespace

void fill_statistics(RrResults& r, const measure::Comparison& c) {
  compute_rr_statistics(c, r);
}

std::vector<measure::HeadlineRatio> ratios_to_wait_on(const RrResults& r) {
  return measure::ratios_of(r.stats, &RrStats::transactions_per_s_over_baseline);
}

}  // namespace tlscmp::kinds
