#include "render/page.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <optional>

#include "measure/stats.hpp"
#include "render/render.hpp"

namespace tlscmp::render {

namespace {

// ": median 2,221 MB/s (95% CI 2,100 - 2,300)" of `ys`, and the median
// with its interval as a last point of `s`, "median" (placed by the
// caller); " (partial only)" where no run counts.
std::string median_words(const std::vector<double>& ys, const std::string& unit, svg::Series& s) {
  if (ys.empty()) return " (partial only)";
  const double median = measure::summarize(ys).median;
  const std::optional<measure::Interval95> ci = measure::bootstrap_median_ci(ys);
  const std::string in_unit = unit.empty() ? "" : " " + unit;
  s.points.push_back({0, median, ci ? std::optional(ci->low) : std::nullopt,
                      ci ? std::optional(ci->high) : std::nullopt, "median"});
  std::string words = fmt::format(": median {}{}", figure_text(median), in_unit);
  if (ci) words += fmt::format(" (95% CI {} - {})", figure_text(ci->low), figure_text(ci->high));
  return words;
}

}  // namespace

std::string Page::name(const PageResult& r, const std::string& what) {
  std::string out = r.label;
  if (!r.setting.empty()) out += (out.empty() ? "" : " ") + r.setting;
  return out.empty() ? what : out + " " + what;
}

std::vector<std::string> Page::round_names(int rounds) {
  std::vector<std::string> names;
  for (int r = 1; r <= rounds; ++r)
    names.push_back(std::to_string(r));
  return names;
}

bool Page::any(const char* key) const {
  return std::any_of(results().begin(), results().end(),
                     [&](const PageResult& r) { return r.setting.empty() && !list(*r.j, key).empty(); });
}

std::size_t Page::index_of(const PageResult& r) const {
  return static_cast<std::size_t>(&r - results().data());
}

std::string Page::per_round(const char* runs_key, const char* field, const std::string& title,
                            const std::string& y_title, const std::string& unit, bool y_log) {
  svg::Chart c;
  c.title = title;
  c.x_title = "round";
  c.y_title = y_title;
  c.y_log = y_log;
  int rounds = 0;
  for (const PageResult& r : results()) {
    if (!r.setting.empty()) continue;  // sweeps have their own chart
    for (const auto& [v, runs] : runs_by_variant(list(*r.j, runs_key), not_warmup)) {
      svg::Series s;
      mark(s, r, v);
      std::vector<double> ys;  // the runs that count, as the JSON's summary has them: not a partial one
      for (const json* run : runs) {
        const int round = run->value("round", 0);
        rounds = std::max(rounds, round);
        const double value = number_at(*run, {field});
        if (!std::isfinite(value)) continue;
        const bool partial = run->value("partial", false);
        s.points.push_back({static_cast<double>(round - 1), value, std::nullopt, std::nullopt,
                            fmt::format("round {}{}", round, partial ? " (partial)" : "")});
        if (!partial) ys.push_back(value);
      }
      if (s.points.empty()) continue;
      s.name = name(r, v) + median_words(ys, unit, s);
      c.series.push_back(std::move(s));
    }
  }
  c.x_names = round_names(rounds);
  if (std::any_of(c.series.begin(), c.series.end(), [](const svg::Series& s) {
        return !s.points.empty() && s.points.back().label == "median";
      })) {
    c.x_names.push_back("median");
    for (svg::Series& s : c.series) {
      if (!s.points.empty() && s.points.back().label == "median")
        s.points.back().x = static_cast<double>(rounds);
    }
  }
  return chart(std::move(c));
}

std::string Page::percentile_chart(const char* runs_key, const char* field, const std::string& title,
                                   const std::string& x_title) {
  svg::Chart c;
  c.title = title;
  c.x_title = x_title;
  c.y_title = "percentile";
  c.x_log = true;
  c.y_nines = true;
  const std::vector<std::pair<const char*, double>> percentiles{
      {"min", 0}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}, {"max", 0.9997}};
  for (const PageResult& r : results()) {
    if (!r.setting.empty()) continue;
    for (const auto& [v, runs] : runs_by_variant(list(*r.j, runs_key), run_counts)) {
      svg::Series s{name(r, v), {}, true};
      mark(s, r, v);
      for (const auto& [key, p] : percentiles) {
        std::vector<double> values;
        for (const json* run : runs)
          values.push_back(number_at(*run, {field, key}));
        s.points.push_back({median_of(values), -std::log10(1 - p), std::nullopt, std::nullopt, key});
      }
      c.series.push_back(std::move(s));
    }
  }
  return chart(std::move(c));
}

std::string Page::summary_chart(svg::Chart c, const std::string& series,
                                const std::function<NamedSummaries(const json& result)>& of) {
  for (const PageResult& r : results()) {
    if (!r.setting.empty()) continue;
    svg::Series s{name(r, series), {}, false};
    for (const auto& [what, stat] : of(*r.j)) {
      if (!std::isfinite(number_at(*stat, {"median"}))) continue;
      c.x_names.push_back(name(r, what));
      s.points.push_back({static_cast<double>(c.x_names.size() - 1), number_at(*stat, {"median"}),
                          number_at(*stat, {"min"}), number_at(*stat, {"max"}), c.x_names.back()});
    }
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  return c.series.empty() ? std::string() : chart(std::move(c));
}

std::string Page::split_chart(svg::Chart c, const char* summary_key, const std::vector<SplitPart>& parts) {
  c.stacked = true;
  std::vector<svg::Series> series;
  for (const auto& [key, part] : parts)
    series.emplace_back(part);
  for (const PageResult& r : results()) {
    if (!r.setting.empty()) continue;
    for (const auto& [v, summary] : object(*r.j, summary_key).items()) {
      for (const char* side : {"client", "server"}) {
        const json& split = object(object(summary, "cost_split"), side);
        if (split.empty()) continue;
        const double x = static_cast<double>(c.x_names.size());
        const std::string role = str(split, "role");
        c.x_names.push_back(name(r, fmt::format("{} {}{}", v, side, role.empty() ? "" : " (" + role + ")")));
        for (std::size_t i = 0; i < parts.size(); ++i) {
          const double value = number_at(split, {parts[i].first});
          const std::string below =
              value < 0 ? fmt::format(" ({:.3f}, below zero: noise, drawn as 0)", value) : "";
          series[i].points.push_back({x, std::max(0.0, std::isfinite(value) ? value : 0.0), std::nullopt,
                                      std::nullopt, c.x_names.back() + below});
        }
      }
    }
  }
  if (c.x_names.empty()) return {};
  c.series = std::move(series);
  return chart(std::move(c));
}

}  // namespace tlscmp::render
