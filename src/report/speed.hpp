#pragma once

// `tlscmp speed`'s figures as people read them (tables, sorted as `openssl
// speed` prints: a row per algorithm, a column per size) and as JSON.

#include <string>
#include <vector>

#include "measure/speed.hpp"

namespace tlscmp::report {

// One library's figures, or several's one after another with a line each
// that sets a library against the first (`tlscmp speed --tls-lib a,b`).
std::string render_speed_text(const std::vector<measure::SpeedResults>& results);
// One library's object; several: {"libraries": [one object each]}.
std::string render_speed_json(const std::vector<measure::SpeedResults>& results);

}  // namespace tlscmp::report
