#pragma once

// Renders a comparison for people (text) and for programs (JSON). Pure
// functions of measured values: nothing here touches a socket or a clock.

#include <fmt/format.h>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "measure/results.hpp"
#include "measure/units.hpp"

namespace tlscmp::report {

std::string render_text(const measure::Comparison& comparison);
// The first lines of the text report: version, direction, server, streams,
// messages and payload, all known before the first run. -i prints them
// first, and the rest of the report (render_text_body) after the live lines.
std::string render_text_header(const measure::TestParameters& parameters, const std::string& version);
std::string render_text_body(const measure::Comparison& comparison);
std::string render_json(const measure::Comparison& comparison);
// The `test` object: the parameters, as -J and --json-stream give them.
nlohmann::ordered_json test_json(const measure::TestParameters& parameters);
// The comparison's last run, as its kind's runs list holds it; null if none.
nlohmann::ordered_json last_run_json(const measure::Comparison& comparison);
// The object render_json prints, for embedding (the sweep's JSON).
nlohmann::ordered_json comparison_json(const measure::Comparison& comparison);
// A header line and one row per run; the README lists the columns.
std::string render_csv(const measure::Comparison& comparison);

// How the ratio's confidence interval is computed, in words.
std::string ci_method();

// A paired ratio for a table: "0.58x", or "-" where there is none.
std::string ratio_text(const std::optional<measure::PairedRatio>& ratio);
// "connections/s 0.58x (95% CI 0.55x - 0.60x)", or "" where there is none.
std::string ratio_sentence(const char* what, const std::optional<measure::PairedRatio>& ratio);

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

}  // namespace tlscmp::report
