#pragma once

// The sweep's reports: a Markdown table like the seeds' (rows: the first
// swept setting; columns: the other settings and each mode; cells: min - max
// over the rounds), and CSV and JSON with every point.

#include <string>
#include <vector>

#include "results/sweep.hpp"

namespace tlscmp::report {

std::string render_sweep_markdown(const std::vector<results::SweepPoint>& points);
// One row per point and variant: the settings, then the statistics.
std::string render_sweep_csv(const std::vector<results::SweepPoint>& points);
std::string render_sweep_json(const std::vector<results::SweepPoint>& points);

}  // namespace tlscmp::report
