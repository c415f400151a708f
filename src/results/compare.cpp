#include "results/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "error.hpp"
#include "kinds/kind.hpp"
#include "results/result_file.hpp"
#include "spec/spec.hpp"

namespace tlscmp::results {
namespace {

using nlohmann::json;

// What was measured, and how: these must agree for a comparison to mean
// anything. Where, how often and how the output looks (host, port, rounds,
// intervals) may differ. The test's own fields say which of them count.
std::vector<std::string> settings_that_agree() {
  std::vector<std::string> keys = {"modes", "tls_version",        "cipher", "groups",
                                   "ktls",  "client_certificate", "kind"};
  const spec::Test test;
  spec::for_each_field(test, [&](const spec::Field& f, const auto&) {
    if (f.agree) keys.push_back(spec::result_key(f));
  });
  return keys;
}
const std::vector<std::string> kSettings = settings_that_agree();

ResultOrigin origin_of(const std::string& path, const json& j) {
  ResultOrigin o;
  o.path = path;
  o.tlscmp_version = text_of(j.value("tlscmp_version", json("?")));
  const json env = j.value("environment", json::object());
  const json client = env.value("client", json::object());
  const json server = env.value("server", json::object());
  o.client_tls_library = text_of(client.value("tls_library", json("?")));
  o.server_tls_library = text_of(server.value("tls_library", json("?")));
  o.kernel = text_of(client.value("kernel", json("?")));
  return o;
}

// variant -> values, in the order the variants first come.
std::vector<std::pair<std::string, std::vector<double>>> values_of(const json& result,
                                                                   const kinds::ResultRuns& runs,
                                                                   const kinds::RunFigure& f) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  const json list = result.value(runs.list, json::array());
  if (!list.is_array()) return out;
  for (const json& run : list) {
    if (!run_counts(run)) continue;
    const double v = number_on(run, f.path);
    if (std::isnan(v)) continue;
    const std::string variant = text_of(run.value("variant", json("?")));
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == variant; });
    if (it == out.end()) it = out.insert(out.end(), {variant, {}});
    it->second.push_back(v);
  }
  return out;
}

// One figure of a kind's runs, each variant in both files against each
// other; a variant in one of them alone is noted once, by its rate.
void compare_figure(const json& base, const json& next, const kinds::ResultRuns& runs,
                    const kinds::RunFigure& f, const CompareConfig& config, CompareResult& result) {
  const auto base_values = values_of(base, runs, f);
  const auto next_values = values_of(next, runs, f);
  for (const auto& [variant, values] : base_values) {
    const auto other = std::find_if(next_values.begin(), next_values.end(),
                                    [&](const auto& p) { return p.first == variant; });
    if (other == next_values.end()) {
      if (f.higher_is_better)  // each kind's one throughput figure: a note per variant
        result.notes.push_back(fmt::format("{} {}: only in '{}'", runs.label, variant, config.base_path));
      continue;
    }
    ComparedFigure c{runs.label, variant, f.name,
                     measure::estimate_change(values, other->second, f.higher_is_better)};
    if (config.fail_if_slower && c.change.verdict == measure::Verdict::slower &&
        c.change.slower_percent() >= *config.fail_if_slower) {
      result.failed = true;
    }
    result.figures.push_back(std::move(c));
  }
  for (const auto& [variant, values] : next_values) {
    const bool in_base = std::any_of(base_values.begin(), base_values.end(),
                                     [&](const auto& p) { return p.first == variant; });
    if (!in_base && f.higher_is_better)
      result.notes.push_back(fmt::format("{} {}: only in '{}'", runs.label, variant, config.next_path));
  }
}

}  // namespace

std::vector<std::string> compared_settings() {
  return kSettings;
}

CompareResult compare_results(const CompareConfig& config) {
  const json base = read_result(config.base_path);
  const json next = read_result(config.next_path);
  for (const std::string& name : config.ignore) {
    if (std::find(kSettings.begin(), kSettings.end(), name) == kSettings.end())
      throw UsageError(fmt::format("--ignore {}: not a setting compare checks; those are: {}", name,
                                   fmt::join(kSettings, ", ")));
  }
  CompareResult result;
  result.base = origin_of(config.base_path, base);
  result.next = origin_of(config.next_path, next);
  result.fail_if_slower = config.fail_if_slower;

  std::vector<std::string> differ;
  for (const std::string& name : kSettings) {
    const json a = base["test"].value(name, json(nullptr));
    const json b = next["test"].value(name, json(nullptr));
    if (a == b) continue;
    const std::string what = fmt::format("{} {} vs {}", name, text_of(a), text_of(b));
    if (std::find(config.ignore.begin(), config.ignore.end(), name) != config.ignore.end()) {
      result.ignored.push_back(what);
    } else {
      differ.push_back(what);
    }
  }
  if (!differ.empty()) {
    throw UsageError(
        fmt::format("'{}' and '{}' measured different things: {}; compare them anyway with "
                    "--ignore {}",
                    config.base_path, config.next_path, fmt::join(differ, "; "),
                    differ.front().substr(0, differ.front().find(' '))));
  }

  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    for (const kinds::RunFigure& f : kind->results.figures)
      compare_figure(base, next, kind->results, f, config, result);
  }
  if (result.figures.empty()) {
    throw UsageError(
        fmt::format("'{}' and '{}' have no runs of the same variant to compare (handshake tests "
                    "are not compared)",
                    config.base_path, config.next_path));
  }
  return result;
}

}  // namespace tlscmp::results
