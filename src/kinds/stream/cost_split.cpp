#include "kinds/stream/cost_split.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "measure/stats.hpp"

namespace tlscmp::kinds {
namespace {

using namespace measure;

const SideCost& split_side_of(const StreamRun& run, bool client_side) {
  return client_side ? run.client : run.server;
}

double stream_split_median(std::vector<double> values) {
  return values.empty() ? 0 : summarize(values).median;
}

// This side's system calls per chunk moved: writes when it sends, reads when it receives.
std::optional<double> calls_per_chunk(const std::vector<const StreamRun*>& runs, bool client_side,
                                      bool sender, std::uint32_t chunk_bytes) {
  std::vector<double> per_chunk;
  for (const StreamRun* run : runs) {
    const SideCost& side = split_side_of(*run, client_side);
    const std::optional<std::uint64_t>& calls = sender ? side.write_calls : side.read_calls;
    if (!calls || run->bytes == 0) continue;
    per_chunk.push_back(static_cast<double>(*calls) * chunk_bytes / static_cast<double>(run->bytes));
  }
  if (per_chunk.empty()) return std::nullopt;
  return stream_split_median(per_chunk);
}

}  // namespace

std::optional<CostSplit> split_cost(const std::vector<const StreamRun*>& runs,
                                    const std::map<int, const StreamRun*>& baseline, bool client_side,
                                    bool client_sends) {
  std::vector<double> tls, tcp, extra, rates;
  std::vector<const StreamRun*> baseline_runs;
  const TlsCalibration* calibration = nullptr;
  for (const StreamRun* run : runs) {
    const SideCost& side = split_side_of(*run, client_side);
    const auto base = baseline.find(run->round);
    if (!side.calibration || base == baseline.end() || run->bytes == 0 || base->second->bytes == 0) continue;
    calibration = &*side.calibration;
    const double mine = side.cpu_s_per_gib(run->bytes);
    const double theirs = split_side_of(*base->second, client_side).cpu_s_per_gib(base->second->bytes);
    tls.push_back(mine);
    tcp.push_back(theirs);
    extra.push_back(mine - theirs);
    rates.push_back(run->mbytes_per_s() * 1e6);
    baseline_runs.push_back(base->second);
  }
  if (calibration == nullptr) return std::nullopt;
  CostSplit split;
  split.sender = client_side == client_sends;
  split.suite = calibration->suite;
  split.aead = calibration->aead;
  split.aead_bytes_per_s = split.sender ? calibration->seal_bytes_per_s : calibration->open_bytes_per_s;
  split.tcp_s_per_gib = stream_split_median(tcp);
  split.tls_s_per_gib = stream_split_median(tls);
  split.extra_s_per_gib = stream_split_median(extra);
  split.crypto_s_per_gib = seconds_per_gib(split.aead_bytes_per_s);
  const double in_memory = split.sender ? calibration->writer_s_per_gib : calibration->reader_s_per_gib;
  split.record_layer_s_per_gib = in_memory - split.crypto_s_per_gib;
  split.socket_s_per_gib = split.extra_s_per_gib - split.crypto_s_per_gib - split.record_layer_s_per_gib;
  split.rate_share_of_aead =
      split.aead_bytes_per_s > 0 ? stream_split_median(rates) / split.aead_bytes_per_s : 0;
  split.chunk_bytes = calibration->chunk_bytes;
  split.record_bytes = calibration->record_bytes;
  split.records_per_chunk =
      std::ceil(static_cast<double>(split.chunk_bytes) / static_cast<double>(split.record_bytes));
  split.tls_calls_per_chunk = calls_per_chunk(runs, client_side, split.sender, split.chunk_bytes);
  split.tcp_calls_per_chunk = calls_per_chunk(baseline_runs, client_side, split.sender, split.chunk_bytes);
  return split;
}

namespace {

std::optional<RunSplit> split_run(const StreamRun& run, const StreamRun& base, bool client_side,
                                  bool sender) {
  const SideCost& side = split_side_of(run, client_side);
  if (!side.calibration || run.bytes == 0 || base.bytes == 0) return std::nullopt;
  const TlsCalibration& c = *side.calibration;
  RunSplit split;
  split.crypto_s_per_gib = seconds_per_gib(sender ? c.seal_bytes_per_s : c.open_bytes_per_s);
  split.record_layer_s_per_gib = (sender ? c.writer_s_per_gib : c.reader_s_per_gib) - split.crypto_s_per_gib;
  const double extra =
      side.cpu_s_per_gib(run.bytes) - split_side_of(base, client_side).cpu_s_per_gib(base.bytes);
  split.socket_s_per_gib = extra - split.crypto_s_per_gib - split.record_layer_s_per_gib;
  return split;
}

}  // namespace

void split_runs(std::vector<StreamRun>& runs, const std::map<int, const StreamRun*>& baseline,
                bool client_sends) {
  for (StreamRun& run : runs) {
    const auto base = baseline.find(run.round);
    if (!facts(run.mode).tls_over_tcp || run.warmup || run.partial || base == baseline.end()) continue;
    run.client_split = split_run(run, *base->second, /*client_side=*/true, client_sends);
    run.server_split = split_run(run, *base->second, /*client_side=*/false, !client_sends);
  }
}

}  // namespace tlscmp::kinds
