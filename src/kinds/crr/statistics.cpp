// The crr kind's statistics over its runs (kinds/crr/results.hpp).

#include <algorithm>
#include <map>

#include "kinds/crr/results.hpp"
#include "measure/run_stats.hpp"

namespace tlscmp::kinds {
namespace {

using namespace measure;

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
    stats.connections_per_s_over_tls = over_twin(runs, own_runs_by_round(results.runs, counts),
                                                 [](const CrrRun& r) { return r.connections_per_s(); });
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

void fill_statistics(CrrResults& r, const measure::Comparison& c) {
  compute_crr_statistics(c, r);
}

std::vector<measure::HeadlineRatio> ratios_to_wait_on(const CrrResults& r) {
  return measure::ratios_of(r.stats, &CrrStats::connections_per_s_over_baseline);
}

}  // namespace tlscmp::kinds
