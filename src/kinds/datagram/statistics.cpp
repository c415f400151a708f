// The datagram kind's statistics over its runs (kinds/datagram/results.hpp).

#include <algorithm>
#include <map>

#include "kinds/datagram/results.hpp"
#include "measure/run_stats.hpp"

namespace tlscmp::kinds {
namespace {

using namespace measure;

void compute_datagram_statistics(const Comparison& comparison, DatagramResults& results) {
  results.stats.clear();
  const auto counts = [](const DatagramRun& run) { return !run.warmup && !run.partial; };
  for (const std::string& variant : variant_order(comparison)) {
    std::vector<const DatagramRun*> runs;
    for (const DatagramRun& run : results.runs) {
      if (run.label() == variant && counts(run)) runs.push_back(&run);
    }
    if (runs.empty()) continue;
    const auto received_per_s = [](const DatagramRun& r) { return r.received_per_s(); };
    results.stats.push_back(
        {runs.front()->mode, variant, summarize_field(runs, received_per_s),
         summarize_field(runs, [](const DatagramRun& r) { return r.sent_per_s(); }),
         summarize_field(runs, [](const DatagramRun& r) { return r.total.loss_percent(); }),
         over_twin(runs, own_runs_by_round(results.runs, counts), received_per_s)});
  }
}

}  // namespace

void fill_statistics(DatagramResults& r, const measure::Comparison& c) {
  compute_datagram_statistics(c, r);
}

}  // namespace tlscmp::kinds
