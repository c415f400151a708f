#pragma once

// A result's JSON (tlscmp client -J) read back: numbers at a path, lists and
// objects that may be missing, the runs that count, each variant's runs.
// What the report page's parts (each kind's, kinds/NAME/html.cpp), compare
// and merge read results with; a value that is missing or of another type
// reads as none (NaN, an empty list), never as an error.

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tlscmp::render {

using nlohmann::json;

// The number at `path` in `object` ({"latency_us", "p50"}; a null key ends
// the path), or NaN where there is none.
double number_on(const json& object, std::span<const char* const> path);
inline double number_at(const json& object, std::initializer_list<const char*> path) {
  return number_on(object, std::span(path.begin(), path.size()));
}

// The string, object or list at `key`, or "" / {} / [] where there is none.
std::string str(const json& j, const char* key);
const json& object(const json& j, const char* key);
const json& list(const json& j, const char* key);

// Whether a run of a result counts: neither warm-up nor interrupted.
bool run_counts(const json& run);
bool not_warmup(const json& run);

// A runs list's runs that `keep` picks, per variant, in the order the variants first ran.
using VariantRuns = std::vector<std::pair<std::string, std::vector<const json*>>>;
VariantRuns runs_by_variant(const json& runs, bool (*keep)(const json&));

// The median of the finite values; NaN where there is none.
double median_of(std::vector<double> values);
// A count for a sentence: 0 where the JSON has none.
int count_of(double v);
// "95% CI 2.06–3.34, 3 rounds", or with too few rounds for an interval, "1 round, too few for a CI".
std::string ci_words(const json& ratio);
// "TLS-resumed": a variant's mode in capitals, for a sentence.
std::string upper_variant(const std::string& v);
// The mode a result's ratios are against, as its JSON names it ("over_tcp"):
// the first of exactly two modes, else the kind's usual one (tcp; udp for
// datagrams); compared_modes (render.hpp) says the same of the result it writes.
std::string baseline_of(const json& j, const char* usual);

}  // namespace tlscmp::render
