#include "render/result_json.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <cmath>

#include "measure/stats.hpp"

namespace tlscmp::render {

double number_on(const json& object, std::span<const char* const> path) {
  const json* at = &object;
  for (const char* key : path) {
    if (key == nullptr) break;
    if (!at->is_object() || !at->contains(key)) return std::nan("");
    at = &(*at)[key];
  }
  return at->is_number() ? at->get<double>() : std::nan("");
}

bool run_counts(const json& run) {
  return run.is_object() && !run.value("warmup", false) && !run.value("partial", false);
}

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

const json& object(const json& j, const char* key) {
  static const json empty = json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : empty;
}

const json& list(const json& j, const char* key) {
  static const json empty = json::array();
  return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : empty;
}

int count_of(double v) {
  return std::isfinite(v) ? static_cast<int>(v) : 0;
}

std::string ci_words(const json& ratio) {
  const int rounds = count_of(number_at(ratio, {"count"}));
  const double low = number_at(ratio, {"ci95_low"});
  const double high = number_at(ratio, {"ci95_high"});
  if (!std::isfinite(low) || !std::isfinite(high))
    return fmt::format("{} round{}, too few for a CI", rounds, rounds == 1 ? "" : "s");
  return fmt::format("95% CI {:.2f}–{:.2f}, {} rounds", low, high, rounds);
}

bool not_warmup(const json& run) {
  return !run.value("warmup", false);
}

VariantRuns runs_by_variant(const json& runs, bool (*keep)(const json&)) {
  VariantRuns out;
  for (const json& run : runs) {
    if (!keep(run)) continue;
    const std::string variant = str(run, "variant");
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& entry) { return entry.first == variant; });
    if (it == out.end()) it = out.insert(out.end(), {variant, {}});
    it->second.push_back(&run);
  }
  return out;
}

std::string upper_variant(const std::string& v) {
  std::string out = v;
  const std::size_t dash = out.find('-');
  for (std::size_t i = 0; i < out.size() && i < dash; ++i)
    out[i] = static_cast<char>(std::toupper(out[i]));
  return out;
}

std::string baseline_of(const json& j, const char* usual) {
  const json* modes = j.contains("test") && j["test"].is_object() && j["test"].contains("modes")
                          ? &j["test"]["modes"]
                          : nullptr;
  if (modes == nullptr || !modes->is_array() || modes->size() != 2 || !(*modes)[0].is_string()) return usual;
  const std::string first = (*modes)[0].get<std::string>();
  const bool datagrams = first == "udp" || first == "dtls";
  return datagrams == (std::string(usual) == "udp") ? first : usual;
}

double median_of(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  return values.empty() ? std::nan("") : measure::summarize(values).median;
}

}  // namespace tlscmp::render
