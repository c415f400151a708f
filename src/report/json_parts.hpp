#pragma once

// JSON pieces every kind's part of the -J report shares; internal to src/report/.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "measure/stats.hpp"
#include "test_kind.hpp"

namespace tlscmp::report {

// {count, min, median, max, mean, stddev, p99}.
nlohmann::ordered_json summary_json(const measure::Summary& s);
// A summary of per-round ratios with its 95% interval: ci95_low and
// ci95_high, null without an interval (one pair).
nlohmann::ordered_json ratio_json(const measure::Summary& ratios,
                                  const std::optional<measure::Interval95>& ci);
// A TLS fact of a run: null for plain TCP, so that every run has the same fields.
nlohmann::ordered_json tls_or_null(const std::string& value, Mode mode);

}  // namespace tlscmp::report
