#pragma once

// tlscmp merge's report: text and JSON.

#include <string>

#include "app/merge.hpp"

namespace tlscmp::report {

std::string render_merge_text(const app::MergeResult& result);
std::string render_merge_json(const app::MergeResult& result);

}  // namespace tlscmp::report
