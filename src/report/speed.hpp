#pragma once

// `tlscmp speed`'s figures as people read them (tables, sorted as `openssl
// speed` prints: a row per algorithm, a column per size) and as JSON.

#include <string>

#include "measure/speed.hpp"

namespace tlscmp::report {

std::string render_speed_text(const measure::SpeedResults& results);
std::string render_speed_json(const measure::SpeedResults& results);

}  // namespace tlscmp::report
