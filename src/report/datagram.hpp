#pragma once

// The datagram parts of the reports (udp, dtls runs); internal to src/report/.

#include <nlohmann/json.hpp>
#include <string>

#include "measure/results.hpp"

namespace tlscmp::report {

// The runs table, the DTLS handshake and the summary, for render_text.
std::string render_datagram_runs(const measure::Comparison& comparison);
// "datagram_runs": one object per run.
nlohmann::ordered_json datagram_runs_json(const measure::Comparison& comparison);
// "datagram_summary": medians per mode, and DTLS over UDP.
nlohmann::ordered_json datagram_summary_json(const measure::Comparison& comparison);
// A header line and one row per run (and sender, with -P > 1).
std::string render_datagram_csv(const measure::Comparison& comparison);

}  // namespace tlscmp::report
