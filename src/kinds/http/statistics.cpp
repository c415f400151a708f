// The http kind's statistics over its runs (kinds/http/results.hpp).

#include <map>

#include "kinds/http/results.hpp"
#include "measure/run_stats.hpp"

namespace tlscmp::kinds {

double HttpRun::fairness() const {
  double sum = 0;
  double squares = 0;
  for (double r : connection_rates) {
    sum += r;
    squares += r * r;
  }
  if (connection_rates.size() < 2 || squares <= 0) return 1;
  return sum * sum / (static_cast<double>(connection_rates.size()) * squares);
}

namespace {

using namespace measure;

HttpStats variant_stats(const std::string& variant, const std::vector<const HttpRun*>& runs) {
  HttpStats s;
  s.variant = variant;
  s.mode = runs.front()->mode;
  s.requests_per_s = summarize_field(runs, [](const HttpRun& r) { return r.requests_per_s(); });
  s.p50_us = summarize_field(runs, [](const HttpRun& r) { return r.latency.p50; });
  s.p99_us = summarize_field(runs, [](const HttpRun& r) { return r.latency.p99; });
  s.first_byte_p50_us = summarize_field(runs, [](const HttpRun& r) { return r.first_byte.p50; });
  s.client_cpu_us_per_request =
      summarize_field(runs, [](const HttpRun& r) { return r.cpu_us_per_request(r.client); });
  s.server_cpu_us_per_request =
      summarize_field(runs, [](const HttpRun& r) { return r.cpu_us_per_request(r.server); });
  s.wire_bytes_per_request =
      summarize_field(runs, [](const HttpRun& r) { return r.wire_bytes_per_request(); });
  s.handshake_us = summarize_field(runs, [](const HttpRun& r) { return r.handshake_us; });
  s.server_measured = runs.front()->server_measured;
  return s;
}

}  // namespace

void fill_statistics(HttpResults& results, const Comparison& comparison) {
  results.stats.clear();
  const auto counts = [](const HttpRun& run) { return !run.warmup && !run.partial && run.requests > 0; };
  const std::map<int, const HttpRun*> baseline_runs =
      baseline_by_round(comparison.parameters, results.runs, counts);
  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const HttpRun*> runs;
    std::vector<double> rate, p99;
    for (const HttpRun& run : results.runs) {
      if (run.label() != variant || !counts(run)) continue;
      runs.push_back(&run);
      const auto base = baseline_runs.find(run.round);
      if (base == baseline_runs.end() || run.mode == base->second->mode) continue;
      const HttpRun& b = *base->second;
      if (b.requests_per_s() > 0) rate.push_back(run.requests_per_s() / b.requests_per_s());
      if (b.latency.p99 > 0) p99.push_back(run.latency.p99 / b.latency.p99);
    }
    if (runs.empty()) continue;
    HttpStats stats = variant_stats(variant, runs);
    stats.requests_per_s_over_baseline = paired(rate);
    stats.p99_over_baseline = paired(p99);
    stats.requests_per_s_over_twin = over_twin(runs, own_runs_by_round(results.runs, counts),
                                               [](const HttpRun& r) { return r.requests_per_s(); });
    results.stats.push_back(std::move(stats));
  }
  results.headline = headline_variant(
      comparison.parameters,
      compared_variants(results.stats, [](const HttpStats& s) { return s.requests_per_s_over_baseline; }));
}

std::vector<measure::HeadlineRatio> ratios_to_wait_on(const HttpResults& r) {
  return measure::ratios_of(r.stats, &HttpStats::requests_per_s_over_baseline);
}

}  // namespace tlscmp::kinds
