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

}  // namespace tlscmp::report
