#include "measure/results.hpp"

#include <map>

namespace tlscmp::measure {
namespace {

template <typename Get>
Summary summarize_field(const std::vector<const RunResult*>& runs, Get get) {
  std::vector<double> values;
  values.reserve(runs.size());
  for (const RunResult* run : runs)
    values.push_back(get(*run));
  return summarize(values);
}

}  // namespace

void compute_statistics(Comparison& comparison) {
  comparison.stats.clear();
  comparison.tls_over_tcp.reset();
  comparison.tls_over_tcp_ci.reset();
  auto counts = [](const RunResult& run) { return !run.warmup && !run.partial; };
  for (Mode mode : comparison.parameters.modes) {
    std::vector<const RunResult*> runs;
    for (const RunResult& run : comparison.runs) {
      if (run.mode == mode && counts(run)) runs.push_back(&run);
    }
    if (runs.empty()) continue;
    comparison.stats.push_back(ModeStats{
        mode,
        summarize_field(runs, [](const RunResult& r) { return r.transfer_us; }),
        summarize_field(runs, [](const RunResult& r) { return r.sender_us; }),
        summarize_field(runs, [](const RunResult& r) { return r.handshake_us; }),
        summarize_field(runs, [](const RunResult& r) { return r.mbytes_per_s(); }),
        summarize_field(runs, [](const RunResult& r) { return static_cast<double>(r.bytes); }),
        summarize_field(runs, [](const RunResult& r) { return r.client.cpu_s_per_gib(r.bytes); }),
        summarize_field(runs, [](const RunResult& r) { return r.server.cpu_s_per_gib(r.bytes); }),
        summarize_field(runs, [](const RunResult& r) { return r.client.core_share(); }),
        summarize_field(runs, [](const RunResult& r) { return r.server.core_share(); }),
    });
  }

  // Pair the modes round by round: both ran back to back, so noise hits both
  // alike. Time per byte, so that duration runs (whose byte counts differ)
  // compare too; with equal byte counts it is the transfer time ratio.
  std::map<int, std::pair<double, double>> rounds;  // round -> (tcp, tls) us per byte
  for (const RunResult& run : comparison.runs) {
    if (!counts(run) || run.bytes == 0) continue;
    auto& pair = rounds[run.round];
    (run.mode == Mode::tcp ? pair.first : pair.second) = run.transfer_us / static_cast<double>(run.bytes);
  }
  std::vector<double> ratios;
  for (const auto& [round, pair] : rounds) {
    if (pair.first > 0 && pair.second > 0) ratios.push_back(pair.second / pair.first);
  }
  if (!ratios.empty()) comparison.tls_over_tcp = summarize(ratios);
  comparison.tls_over_tcp_ci = bootstrap_median_ci(ratios);
}

}  // namespace tlscmp::measure
