#pragma once

// tlscmp compare's report: text and JSON.

#include <string>

#include "app/compare.hpp"

namespace tlscmp::report {

std::string render_compare_text(const app::CompareResult& result);
std::string render_compare_json(const app::CompareResult& result);

}  // namespace tlscmp::report
