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

// The CSV columns of each side's calibration on a run's row, and their
// values (empty where a side has none): its crypto, its TLS in memory and
// its handshake per transaction, each side's own, in µs.
inline constexpr const char* kCalibrationCsvColumns =
    "client_crypto_us,client_tls_memory_us,client_handshake_us,server_crypto_us,server_tls_memory_us,"
    "server_handshake_us";
inline constexpr int kCalibrationCsvCommas = 5;
std::string calibration_csv(const measure::SideCost& client, const measure::SideCost& server);

// A side's calibration, or null.
nlohmann::ordered_json transaction_calibration_json(const std::optional<measure::TransactionCalibration>& c);

}  // namespace tlscmp::kinds
