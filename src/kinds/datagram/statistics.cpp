// The datagram kind's statistics over its runs (kinds/datagram/results.hpp).

#include <algorithm>
#include <map>

#include "kinds/datagram/results.hpp"
#include "measure/run_stats.hpp"

namespace tlscmp::kinds {
namespace {

using namespace measure;

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

}  // namespace

void fill_statistics(DatagramResults& r, const measure::Comparison& c) {
  compute_datagram_statistics(c.parameters, r);
}

}  // namespace tlscmp::kinds
