#pragma once

// JSON pieces every kind's part of the -J report shares; internal to src/report/.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "measure/results.hpp"
#include "measure/stats.hpp"
#include "test_kind.hpp"

namespace tlscmp::report {

// {count, min, median, max, mean, stddev, p99}.
nlohmann::ordered_json summary_json(const measure::Summary& s);
// A summary of per-round ratios with its 95% interval: ci95_low and
// ci95_high, null without an interval (one pair).
nlohmann::ordered_json ratio_json(const measure::Summary& ratios,
                                  const std::optional<measure::Interval95>& ci);
// A paired ratio (rr, crr) with its interval; null where there is none.
nlohmann::ordered_json ratio_json(const std::optional<measure::PairedRatio>& ratio);
// {min, p50, p90, p99, p999, max, mean} of a latency distribution, in microseconds.
nlohmann::ordered_json latency_json(const measure::LatencySummary& latency);
// A TLS fact of a run: null for plain TCP, so that every run has the same fields.
nlohmann::ordered_json tls_or_null(const std::string& value, Mode mode);

}  // namespace tlscmp::report
