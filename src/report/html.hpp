#pragma once

// One self-contained HTML page from one or more results (tlscmp client -J,
// or a sweep's PREFIX.json): a headline sentence with the TLS/TCP ratio and
// its CI, charts of whatever the results hold (bulk, rr, crr, datagram,
// handshake, sweep), the environment and the command that reproduces each.
// No scripts, fonts or styles from elsewhere: it opens offline and prints.
// Every string from a result is escaped.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tlscmp::report {

struct ReportInput {
  std::string label;    // the file's name without .json: names its series when there are several
  nlohmann::json json;  // a client result, or a sweep ({"points": [...]})
};

std::string render_html(const std::vector<ReportInput>& inputs);

// Why a JSON document is not something the report can draw, or "" if it is:
// "no 'runs' list (made by an older tlscmp?)".
std::string report_problem(const nlohmann::json& json);

}  // namespace tlscmp::report
