#include "results/merge.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "kinds/kind.hpp"
#include "measure/stats.hpp"
#include "results/result_file.hpp"

namespace tlscmp::results {
namespace {

using nlohmann::json;

std::vector<ServerView> read_server_view(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--results {}: cannot read it", path));
  std::vector<ServerView> view;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error&) {
      throw UsageError(fmt::format("--results {}: line {} is not JSON (a line of tlscmp server --results?)",
                                   path, number));
    }
    if (!j.is_object() || !j.contains("client_address") || !j.contains("outcome")) {
      throw UsageError(
          fmt::format("--results {}: line {} is not a tlscmp server --results line", path, number));
    }
    const std::string address = text_of(j["client_address"]);
    auto it = std::find_if(view.begin(), view.end(),
                           [&](const ServerView& v) { return v.client_address == address; });
    if (it == view.end()) it = view.insert(view.end(), ServerView{address});
    ++it->tests;
    const std::string outcome = text_of(j["outcome"]);
    if (outcome == "ok") ++it->ok;
    if (outcome == "refused") ++it->refused;
    if (outcome == "failed") ++it->failed;
    const std::string kind = text_of(j.value("kind", json("")));
    for (const json& side : j.value("server_results", json::array())) {
      const auto add = [&](double& to, const char* field) {
        const double v = number_at(side, {field});
        if (!std::isnan(v)) to += v;
      };
      if (kind == "stream") add(it->bytes, "bytes");  // what it received, or with -R sent
      if (kind == "rr") add(it->transactions, "messages");
      if (kind == "crr") add(it->connections, "connections");
    }
  }
  return view;
}

}  // namespace

MergeResult merge_results(const MergeConfig& config) {
  MergeResult result;
  for (const std::string& path : config.paths) {
    const json j = read_result(path);
    const std::string host = std::filesystem::path(path).stem().string();
    for (const kinds::KindSlice* kind : kinds::all_kinds()) {
      const kinds::ResultRuns& k = kind->results;
      if (k.list == nullptr) continue;
      const json list = j.value(k.list, json::array());
      std::vector<std::string> variants;
      for (const json& run : list) {
        const std::string v = text_of(run.value("variant", json("?")));
        if (run_counts(run) && std::find(variants.begin(), variants.end(), v) == variants.end())
          variants.push_back(v);
      }
      for (const std::string& variant : variants) {
        MergedHost h{host, k.label, variant};
        std::vector<double> rates;
        for (const json& run : list) {
          if (!run_counts(run) || text_of(run.value("variant", json("?"))) != variant) continue;
          ++h.runs;
          const double amount = number_at(run, {k.amount});
          if (!std::isnan(amount)) h.amount += amount;
          const double rate = number_on(run, k.figures.front().path);
          if (!std::isnan(rate)) rates.push_back(rate);
        }
        h.median_rate = measure::summarize(rates).median;
        auto total = std::find_if(result.totals.begin(), result.totals.end(), [&](const MergedTotal& t) {
          return t.kind == h.kind && t.variant == h.variant;
        });
        if (total == result.totals.end())
          total = result.totals.insert(
              result.totals.end(),
              MergedTotal{k.label, variant, 0, 0, 0, 0, k.amount_unit, k.figures.front().name});
        ++total->hosts;
        total->runs += h.runs;
        total->amount += h.amount;
        total->rate_sum += h.median_rate;
        result.hosts.push_back(std::move(h));
      }
    }
  }
  if (!config.results_path.empty()) {
    result.server = read_server_view(config.results_path);
    result.has_server_view = true;
  }
  return result;
}

}  // namespace tlscmp::results
