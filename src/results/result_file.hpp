#pragma once

// Results written by tlscmp client -J, read back (compare, merge).

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "render/result_json.hpp"

namespace tlscmp::results {

// The JSON document in `path`. Throws UsageError, one line, for a file that
// cannot be read or is not JSON (cut short).
nlohmann::json read_json_file(const std::string& path);

// The result in `path`. Throws UsageError, one line, for a file that cannot
// be read, is not JSON (cut short), or is no tlscmp result.
nlohmann::json read_result(const std::string& path);

// Numbers at a path, and the runs that count: render/result_json.hpp's.
using render::number_at;
using render::number_on;
using render::run_counts;

// A JSON value as text for a message: strings as they are ("" as "(default)"), the rest dumped.
std::string text_of(const nlohmann::json& value);

}  // namespace tlscmp::results
