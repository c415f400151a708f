#pragma once

// The connection-per-transaction parts of the reports (--crr runs); internal to src/report/.

#include <nlohmann/json.hpp>
#include <string>

#include "measure/results.hpp"

namespace tlscmp::report {

// The header line: sizes, connectors, amount, rounds and how connections close.
std::string render_crr_header(const measure::TestParameters& parameters);
// The runs table, failures, the medians and the TLS/TCP ratios, for render_text.
std::string render_crr_runs(const measure::Comparison& comparison);
// "crr_runs": one object per run; null for other kinds.
nlohmann::ordered_json crr_runs_json(const measure::Comparison& comparison);
// "crr_summary": medians per variant, their ratios to TCP, and the headline "tls_over_tcp".
nlohmann::ordered_json crr_summary_json(const measure::Comparison& comparison);
// A header line and one row per run.
std::string render_crr_csv(const measure::Comparison& comparison);

}  // namespace tlscmp::report
