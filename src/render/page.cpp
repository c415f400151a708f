#include "render/page.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

namespace tlscmp::render {

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

std::string Page::per_round(const char* runs_key, const char* field, const std::string& title,
                            const std::string& y_title, bool y_log) {
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
      for (const json* run : runs) {
        const int round = run->value("round", 0);
        rounds = std::max(rounds, round);
        const double value = number_at(*run, {field});
        if (!std::isfinite(value)) continue;
        s.points.push_back(
            {static_cast<double>(round - 1), value, std::nullopt, std::nullopt,
             fmt::format("round {}{}", round, run->value("partial", false) ? " (partial)" : "")});
      }
      if (s.points.empty()) continue;
      // The median of the runs that count, as the JSON's summary has it: not a partial one.
      std::vector<double> ys;
      for (const svg::Point& p : s.points)
        if (p.label.find("(partial)") == std::string::npos) ys.push_back(p.y);
      const double median = median_of(ys);
      s.name = std::isfinite(median) ? fmt::format("{} (median {})", name(r, v), svg::tick_text(median))
                                     : name(r, v) + " (partial only)";
      c.series.push_back(std::move(s));
    }
  }
  c.x_names = round_names(rounds);
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

}  // namespace tlscmp::render
