#pragma once

// tlscmp compare's report: text and JSON.

#include <string>

#include "results/compare.hpp"

namespace tlscmp::report {

std::string render_compare_text(const results::CompareResult& result);
std::string render_compare_json(const results::CompareResult& result);

}  // namespace tlscmp::report
