#pragma once

// Where an rr or crr TLS run's extra CPU goes, per transaction or per
// connection (measure::UnitSplit), as the text report and the JSON give it:
// both kinds' reports use these.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "measure/results.hpp"

namespace tlscmp::kinds {

// One line per side that calibrated, a note where a part is below zero, and
// one hint from the largest part; "" where neither side has a split. `unit`
// is "transaction" or "connection"; `variant` labels the lines.
std::string render_unit_split(const measure::Environment& environment, const std::string& variant,
                              const std::optional<measure::UnitSplit>& client,
                              const std::optional<measure::UnitSplit>& server, const char* unit);

// {"client": ..., "server": ...}, each side's split or null; null where neither has one.
nlohmann::ordered_json unit_split_json(const std::optional<measure::UnitSplit>& client,
                                       const std::optional<measure::UnitSplit>& server);

// A side's calibration, or null.
nlohmann::ordered_json transaction_calibration_json(const std::optional<measure::TransactionCalibration>& c);

}  // namespace tlscmp::kinds
