// The stream kind's statistics over its runs (kinds/stream/results.hpp).

#include <algorithm>
#include <map>

#include "kinds/stream/cost_split.hpp"
#include "kinds/stream/results.hpp"
#include "measure/run_stats.hpp"

namespace tlscmp::kinds {
namespace {

using namespace measure;

// A TLS variant's runs against TCP's, one way: each side's extra CPU split.
void add_cost_splits(const TestParameters& parameters, const std::vector<const StreamRun*>& runs,
                     const std::map<int, const StreamRun*>& base, StreamStats& stats) {
  if (runs.empty() || base.empty() || parameters.test.stream.bidir ||
      !splits_against(runs.front()->mode, base.begin()->second->mode))
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
    results.stats.back().over_tls = over_twin(runs, own_runs_by_round(results.runs, counts), us_per_byte);
    add_cost_splits(comparison.parameters, runs, base, results.stats.back());
  }
  if (!comparison.parameters.test.stream.bidir && !base.empty() &&
      !is_encrypted(base.begin()->second->mode)) {
    split_runs(results.runs, base,
               comparison.parameters.test.stream.direction == Direction::client_to_server);
  }
  results.headline = headline_variant(
      comparison.parameters,
      compared_variants(results.stats, [](const StreamStats& s) { return s.over_baseline; }));
}

}  // namespace

void fill_statistics(StreamResults& r, const measure::Comparison& c) {
  compute_stream_statistics(c, r);
}

std::vector<measure::HeadlineRatio> ratios_to_wait_on(const StreamResults& r) {
  return measure::ratios_of(r.stats, &StreamStats::over_baseline);
}

}  // namespace tlscmp::kinds
