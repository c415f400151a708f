#pragma once

// The pieces each kind's statistics (kinds/NAME/statistics.cpp) are made
// of: a run's figure summarized over the runs of a variant, the rounds'
// baseline runs, a variant's runs paired with them by round, and each
// side's extra CPU per unit split.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "measure/cost_split.hpp"
#include "measure/results.hpp"

namespace tlscmp::measure {

template <typename Run, typename Get>
Summary summarize_field(const std::vector<const Run*>& runs, Get get) {
  std::vector<double> values;
  values.reserve(runs.size());
  for (const Run* run : runs)
    values.push_back(get(*run));
  return summarize(values);
}

inline std::vector<std::string> variant_order(const Comparison& comparison) {
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

inline std::optional<PairedRatio> paired(const std::vector<double>& ratios) {
  if (ratios.empty()) return std::nullopt;
  return PairedRatio{summarize(ratios), bootstrap_median_ci(ratios)};
}

// (label, round) -> that round's run of each variant, of the runs that
// count: what a run is held to beside the baseline (over_twin).
template <typename Run, typename Counts>
std::map<std::pair<std::string, int>, const Run*> own_runs_by_round(const std::vector<Run>& runs,
                                                                    Counts counts) {
  std::map<std::pair<std::string, int>, const Run*> own;
  for (const Run& run : runs) {
    if (counts(run)) own[{run.label(), run.round}] = &run;
  }
  return own;
}

// The variant a run is held to beside the baseline: its stack's twin's own
// variant (ModeFacts::twin: quic's is "tls"); or, for a variant of another
// TLS library than the first (--tls-lib: "tls-resumed boringssl"), the
// first library's variant of the same label ("tls-resumed"); "" for none.
template <typename Run>
std::string twin_label(const Run& run) {
  const Mode twin = facts(run.mode).twin;
  if (twin != run.mode) return to_string(twin);
  const std::string label = run.label();
  const std::string suffix = " " + run.tls.library;
  if (run.tls.library.empty() || label.size() <= suffix.size() ||
      label.compare(label.size() - suffix.size(), suffix.size(), suffix) != 0)
    return {};
  return label.substr(0, label.size() - suffix.size());
}

// A variant's runs over the same round's run of its twin (twin_label), by
// `figure`: none where it has none, or no round ran it.
template <typename Run, typename Figure>
std::optional<PairedRatio> over_twin(const std::vector<const Run*>& runs,
                                     const std::map<std::pair<std::string, int>, const Run*>& own,
                                     Figure figure) {
  std::vector<double> ratios;
  for (const Run* run : runs) {
    const std::string twin = twin_label(*run);
    const auto t = twin.empty() ? own.end() : own.find({twin, run->round});
    if (t == own.end() || !(figure(*t->second) > 0)) continue;
    ratios.push_back(figure(*run) / figure(*t->second));
  }
  return paired(ratios);
}

// Whether a variant's runs (`mode`) take a TLS-over-TCP split of their
// extra CPU against the rounds' baseline (`base`, of mode `base_mode`):
// TLS over TCP against its own plain twin.
inline bool splits_against(Mode mode, Mode base_mode) {
  return facts(mode).tls_over_tcp && facts(mode).baseline == base_mode;
}

// A TLS variant's rr or crr runs against the same round's TCP runs: each
// side's extra CPU per unit split (measure::split_unit_cost); `per_unit`
// gives a run's CPU per unit on a side.
template <typename Run, typename PerUnit>
void add_unit_splits(const std::vector<const Run*>& runs, const std::map<int, const Run*>& base,
                     PerUnit per_unit, bool handshake, std::optional<UnitSplit>& client,
                     std::optional<UnitSplit>& server) {
  if (runs.empty() || base.empty() || !splits_against(runs.front()->mode, base.begin()->second->mode)) return;
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

// Each variant's `ratio` that is there, as --repeat auto reads them.
template <typename Stats, typename Ratio>
std::vector<HeadlineRatio> ratios_of(const std::vector<Stats>& stats, Ratio ratio) {
  std::vector<HeadlineRatio> out;
  for (const Stats& s : stats) {
    if (const auto& r = s.*ratio) out.push_back({s.variant, r->ratio, r->ci});
  }
  return out;
}

}  // namespace tlscmp::measure
