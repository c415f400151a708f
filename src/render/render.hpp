#pragma once

// The pieces every report shares, for the report documents (report/) and
// each kind's part of them (kinds/NAME/report.cpp): ratios and their
// sentences, rounds, CSV fields, and the JSON of summaries, ratios and
// latencies. Pure functions of measured values: nothing here touches a
// socket or a clock.

#include <fmt/format.h>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "measure/results.hpp"
#include "measure/stats.hpp"
#include "measure/units.hpp"
#include "mode.hpp"

namespace tlscmp::render {

// The two modes a report's ratios name, the baseline first: the two asked
// for (`--mode tls,tcp`: tls, then tcp), or where there are not two, the
// kind's usual pair (tcp and tls; udp and dtls), so that every report of a
// kind has the same keys. The JSON keys say what is over what.
struct ComparedModes {
  std::string baseline;  // "tcp"
  std::string other;     // "tls"

  std::string over_key() const { return "over_" + baseline; }               // a variant's ratio: "over_tcp"
  std::string headline_key() const { return other + "_over_" + baseline; }  // "tls_over_tcp"
  std::string title() const;                                                // "TLS/TCP"
};
ComparedModes compared_modes(const measure::TestParameters& p, Mode usual_baseline, Mode usual_other);

// How the ratio's confidence interval is computed, in words.
std::string ci_method();

// A paired ratio for a table: "0.58x", or "-" where there is none.
std::string ratio_text(const std::optional<measure::PairedRatio>& ratio);
// "connections/s 0.58x (95% CI 0.55x - 0.60x)", or "" where there is none.
std::string ratio_sentence(const char* what, const std::optional<measure::PairedRatio>& ratio);
// "(2 pairs, bootstrap)": how many rounds a paired ratio has.
std::string pairs_text(std::size_t pairs);

// A figure for people: at most four significant digits, thousands grouped
// with commas ("2,221", "5.123", "0.04512", "123,500"); "-" for none (NaN).
std::string figure_text(double value);

// 26800000 -> "26,800,000", as the seeds' tables write numbers; small values
// (a few 1 GiB messages a second) keep a decimal: "12.5".
std::string thousands(double value);

// A CSV field as RFC 4180 wants it: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text);

// A run's round column, for every kind's runs table: "2", "w1" (a warm-up
// round), "3*" (interrupted).
template <typename Run>
std::string round_label(const Run& run) {
  return fmt::format("{}{}{}", run.warmup ? "w" : "", run.round, run.partial ? "*" : "");
}

// "5 rounds", or with --repeat auto the rule.
std::string rounds_text(const measure::TestParameters& p);
// How --repeat auto ended: the rounds, which condition, the CI reached.
std::string render_auto_repeat(const measure::AutoRepeatOutcome& outcome);

using measure::format_bytes;  // "1 GiB", "64 KiB": measure/units.hpp

// {count, min, median, max, mean, stddev, p99}.
nlohmann::ordered_json summary_json(const measure::Summary& s);
// A summary of per-round ratios with its 95% interval: ci95_low and
// ci95_high, null without an interval (one pair).
nlohmann::ordered_json ratio_json(const measure::Summary& ratios,
                                  const std::optional<measure::Interval95>& ci);
// A paired ratio (rr, crr) with its interval; null where there is none.
nlohmann::ordered_json ratio_json(const std::optional<measure::PairedRatio>& ratio);
// The variant a variant's runs are held to beside the baseline (its twin,
// measure/run_stats.hpp): its mode's twin's ("tls" for quic), or for
// another --tls-lib library's variant the first library's of the same
// label ("tls-resumed" for "tls-resumed gnutls").
inline std::string twin_of(Mode mode, const std::string& variant) {
  if (facts(mode).twin != mode) return to_string(facts(mode).twin);
  return variant.substr(0, variant.rfind(' '));
}
// A variant's figure over its twin's, paired by round, as JSON's
// `over_twin`: {"variant": the twin, `figure`: the ratio}; null where it
// has none. Its own key, apart from the baseline's ("over_tcp"), which is
// "over_tls" when tls is the baseline.
nlohmann::ordered_json over_twin_json(Mode mode, const std::string& variant, const char* figure,
                                      const std::optional<measure::PairedRatio>& ratio);
// Another --tls-lib library's variant among a kind's statistics ("tls
// gnutls", with `libraries` the run's list): that library's name in
// `library`, and the statistics of the first library's variant of the same
// label; null for any other variant.
template <typename Stats>
const Stats* first_library_twin(const std::vector<Stats>& stats, const Stats& s,
                                const std::vector<std::string>& libraries, std::string& library) {
  const std::size_t space = s.variant.rfind(' ');
  if (libraries.size() < 2 || space == std::string::npos) return nullptr;
  library = s.variant.substr(space + 1);
  if (std::find(libraries.begin() + 1, libraries.end(), library) == libraries.end()) return nullptr;
  for (const Stats& t : stats) {
    if (t.variant == s.variant.substr(0, space)) return &t;
  }
  return nullptr;
}
// A library's summary line: "wolfssl: 0.08x openssl's bulk rate; ...",
// each part a figure of it against the first library's ("" parts left out).
std::string library_line(const std::string& library, const std::vector<std::string>& parts);
// "{ratio}x {whose} {what}" of two medians ("0.08x openssl's bulk rate",
// "9.38x its client CPU per GiB"), or "" where either is not above zero.
std::string against_first(double mine, double first, const std::string& whose, const std::string& what);

// A figure of a kind's statistics on its library lines: the member, its words.
template <typename Stats>
struct LibraryFigure {
  measure::Summary Stats::*summary;
  std::string what;
};
// Each other --tls-lib library's line (library_line), each of `figures`'
// medians against the first library's variant of the same label, the first
// figure naming that library ("gnutls: 0.67x openssl's bulk rate (MB/s);
// 0.86x its client CPU per GiB"), and naming the variant too with
// `name_variant` ("connections/s (tls-resumed)", where a library has
// several); `more` adds a kind's own parts after them.
template <typename Stats>
std::string library_lines(const std::vector<Stats>& stats, const std::vector<std::string>& libraries,
                          const std::vector<LibraryFigure<Stats>>& figures, bool name_variant = false,
                          const std::function<void(const Stats& mine, const Stats& first,
                                                   std::vector<std::string>& parts)>& more = {}) {
  std::string out;
  for (const Stats& s : stats) {
    std::string library;
    const Stats* first = first_library_twin(stats, s, libraries, library);
    if (first == nullptr) continue;
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const LibraryFigure<Stats>& f = figures[i];
      parts.push_back(against_first((s.*f.summary).median, (first->*f.summary).median,
                                    i == 0 ? libraries.front() + "'s" : "its",
                                    i == 0 && name_variant ? f.what + " (" + first->variant + ")" : f.what));
    }
    if (more) more(s, *first, parts);
    out += library_line(library, parts);
  }
  return out;
}

// {min, p50, p90, p99, p999, max, mean} of a latency distribution, in microseconds.
nlohmann::ordered_json latency_json(const measure::LatencySummary& latency);
// A TLS fact of a run: null for plain TCP, so that every run has the same fields.
nlohmann::ordered_json tls_or_null(const std::string& value, Mode mode);
// A text a run may not have ("" where not): it, or null.
inline nlohmann::ordered_json text_or_null(const std::string& value) {
  return value.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(value);
}
// A figure a run may not have: its value, or null, so that every run has the same fields.
template <typename T>
nlohmann::ordered_json value_or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace tlscmp::render
