#pragma once

// tlscmp merge's report: text and JSON.

#include <string>

#include "results/merge.hpp"

namespace tlscmp::report {

std::string render_merge_text(const results::MergeResult& result);
std::string render_merge_json(const results::MergeResult& result);

}  // namespace tlscmp::report
