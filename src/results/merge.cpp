#include "results/merge.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "error.hpp"
#include "kinds/kind.hpp"
#include "measure/stats.hpp"
#include "results/result_file.hpp"

namespace tlscmp::results {
namespace {

using nlohmann::json;

// A server result's growth of a reading from before its first connection
// to every one idle, per `per` (its flows); NaN without both readings.
double idle_growth_per(const json& side, const char* per, const char* before, const char* idle) {
  const double count = number_at(side, {per});
  const double grown = number_at(side, {idle}) - number_at(side, {before});
  return count > 0 ? grown / count : std::nan("");
}

// A fresh client's view: every kind's amount at 0, in the table's order.
ServerView fresh_view(const std::string& address) {
  ServerView v;
  v.client_address = address;
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    const char* amount = kind->results.server_amount;
    if (amount != nullptr &&
        std::none_of(v.amounts.begin(), v.amounts.end(), [&](const auto& a) { return a.first == amount; }))
      v.amounts.emplace_back(amount, 0);
  }
  return v;
}

// Readings by client address, kind and variant: each test's RSS and heap growth per connection.
using MemoryReadings = std::map<std::tuple<std::string, std::string, std::string>,
                                std::pair<std::vector<double>, std::vector<double>>>;

// One --results line's server results, added to its client's view.
void add_server_results(const json& j, const std::string& address, ServerView& view, MemoryReadings& memory) {
  const std::string kind_name = text_of(j.value("kind", json("")));
  const kinds::KindSlice* kind = nullptr;
  for (const kinds::KindSlice* k : kinds::all_kinds()) {
    if (kind_name == to_string(k->kind)) kind = k;
  }
  if (kind == nullptr || kind->results.server_figure == nullptr) return;
  for (const json& side : j.value("server_results", json::array())) {
    const double v = number_at(side, {kind->results.server_figure});
    for (auto& [name, total] : view.amounts) {
      if (name == kind->results.server_amount && !std::isnan(v)) total += v;
    }
    const char* per = kind->results.memory_per;
    if (per == nullptr) continue;
    const json request = j.value("request", json::object());
    const std::string variant =
        request.value("mode", std::string("?")) + (request.value("release_buffers", false) ? "-release" : "");
    auto& [rss, heap] = memory[{address, kind->results.label, variant}];
    if (const double g = idle_growth_per(side, per, "rss_before", "rss_idle"); !std::isnan(g))
      rss.push_back(g);
    if (const double g = idle_growth_per(side, per, "heap_before", "heap_idle"); !std::isnan(g))
      heap.push_back(g);
  }
}

std::optional<double> median_or_none(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return measure::summarize(values).median;
}

std::vector<ServerView> read_server_view(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--results {}: cannot read it", path));
  std::vector<ServerView> view;
  MemoryReadings memory;
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
    if (it == view.end()) it = view.insert(view.end(), fresh_view(address));
    ++it->tests;
    const std::string outcome = text_of(j["outcome"]);
    if (outcome == "ok") ++it->ok;
    if (outcome == "refused") ++it->refused;
    if (outcome == "failed") ++it->failed;
    add_server_results(j, address, *it, memory);
  }
  for (const auto& [where, readings] : memory) {
    const auto& [address, kind, variant] = where;
    const auto v = std::find_if(view.begin(), view.end(),
                                [&](const ServerView& s) { return s.client_address == address; });
    v->memory[kind][variant] = {median_or_none(readings.first), median_or_none(readings.second)};
  }
  return view;
}

// A kind's rates, the first its runs may carry (its figures' first, with
// its amount), then any other figure that names an amount (a flows run
// carries one of transactions, connections or bytes, by its work).
struct Rate {
  const kinds::RunFigure* figure;
  const char* amount;
  const char* unit;
};
std::vector<Rate> rates_of(const kinds::ResultRuns& k) {
  std::vector<Rate> rates{{&k.figures.front(), k.amount, k.amount_unit}};
  for (const kinds::RunFigure& f : k.figures) {
    if (f.amount != nullptr && &f != &k.figures.front()) rates.push_back({&f, f.amount, f.amount_unit});
  }
  return rates;
}

// One file's runs of a kind: each variant's amount and median rate, under
// the first of the kind's rates its runs carry.
void merge_runs(const std::string& host, const kinds::ResultRuns& k, const json& list, MergeResult& result) {
  for (const Rate& rate : rates_of(k)) {
    std::vector<std::string> variants;
    for (const json& run : list) {
      const std::string v = text_of(run.value("variant", json("?")));
      if (run_counts(run) && !std::isnan(number_on(run, rate.figure->path)) &&
          std::find(variants.begin(), variants.end(), v) == variants.end())
        variants.push_back(v);
    }
    for (const std::string& variant : variants) {
      MergedHost h{host, k.label, variant};
      std::vector<double> rates;
      for (const json& run : list) {
        if (!run_counts(run) || text_of(run.value("variant", json("?"))) != variant) continue;
        const double value = number_on(run, rate.figure->path);
        if (std::isnan(value)) continue;
        ++h.runs;
        rates.push_back(value);
        const double amount = number_at(run, {rate.amount});
        if (!std::isnan(amount)) h.amount += amount;
      }
      h.median_rate = measure::summarize(rates).median;
      auto total = std::find_if(result.totals.begin(), result.totals.end(), [&](const MergedTotal& t) {
        return t.kind == h.kind && t.variant == h.variant && t.rate_unit == rate.figure->name;
      });
      if (total == result.totals.end())
        total = result.totals.insert(result.totals.end(),
                                     MergedTotal{k.label, variant, 0, 0, 0, 0, rate.unit, rate.figure->name});
      ++total->hosts;
      total->runs += h.runs;
      total->amount += h.amount;
      total->rate_sum += h.median_rate;
      result.hosts.push_back(std::move(h));
    }
  }
}

}  // namespace

MergeResult merge_results(const MergeConfig& config) {
  MergeResult result;
  for (const std::string& path : config.paths) {
    const json j = read_result(path);
    const std::string host = std::filesystem::path(path).stem().string();
    for (const kinds::KindSlice* kind : kinds::all_kinds()) {
      const kinds::ResultRuns& k = kind->results;
      if (k.list != nullptr) merge_runs(host, k, j.value(k.list, json::array()), result);
    }
  }
  if (!config.results_path.empty()) {
    result.server = read_server_view(config.results_path);
    result.has_server_view = true;
  }
  return result;
}

}  // namespace tlscmp::results
