#pragma once

// The request/response parts of the reports (--rr runs); internal to src/report/.

#include <nlohmann/json.hpp>
#include <string>

#include "measure/results.hpp"

namespace tlscmp::report {

// The header line: sizes, loop, connections, amount and rounds.
std::string render_rr_header(const measure::TestParameters& parameters);
// The runs table (with connections and intervals), the medians and the TLS/TCP ratios, for render_text.
std::string render_rr_runs(const measure::Comparison& comparison);
// "rr_runs": one object per run; null for other kinds.
nlohmann::ordered_json rr_runs_json(const measure::Comparison& comparison);
// "rr_summary": medians per variant, their ratios to TCP, and the headline "tls_over_tcp".
nlohmann::ordered_json rr_summary_json(const measure::Comparison& comparison);
// A header line and one row per run.
std::string render_rr_csv(const measure::Comparison& comparison);

}  // namespace tlscmp::report
