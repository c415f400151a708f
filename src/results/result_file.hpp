#pragma once

// Results written by tlscmp client -J, read back (compare, merge).

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace tlscmp::results {

// The JSON document in `path`. Throws UsageError, one line, for a file that
// cannot be read or is not JSON (cut short).
nlohmann::json read_json_file(const std::string& path);

// The result in `path`. Throws UsageError, one line, for a file that cannot
// be read, is not JSON (cut short), or is no tlscmp result.
nlohmann::json read_result(const std::string& path);

// The number at `path` in `object` ({"latency_us", "p50"}; a null key ends
// the path), or NaN where there is none.
double number_on(const nlohmann::json& object, std::span<const char* const> path);
inline double number_at(const nlohmann::json& object, std::initializer_list<const char*> path) {
  return number_on(object, std::span(path.begin(), path.size()));
}

// A JSON value as text for a message: strings as they are ("" as "(default)"), the rest dumped.
std::string text_of(const nlohmann::json& value);

// Whether a run of a result counts: neither warm-up nor interrupted.
bool run_counts(const nlohmann::json& run);

}  // namespace tlscmp::results
