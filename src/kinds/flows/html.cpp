// The flows kind's part of the report page: the rate per round
// (transactions, connections or MB a second, by the work), memory per
// connection by variant and side, and the spread of the work over flows;
// and its headline's sentences.

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "kinds/flows/flows.hpp"
#include "render/page.hpp"

namespace tlscmp::kinds {
namespace {

using render::json;

constexpr spec::FlowWork kWorks[] = {spec::FlowWork::rr, spec::FlowWork::crr, spec::FlowWork::stream};

// Each run's least, median and most units of one flow, by round.
std::string spread_chart(render::Page& page) {
  using namespace render;
  svg::Chart c;
  c.title = "The work of each flow in each run: the median, and the least and the most of any flow";
  c.x_title = "round";
  c.y_title = "transactions, connections or bytes of one flow";
  int rounds = 0;
  for (const PageResult& r : page.results()) {
    if (!r.setting.empty()) continue;
    for (const auto& [v, runs] : runs_by_variant(list(*r.j, "flows_runs"), run_counts)) {
      svg::Series s{page.name(r, v), {}, false};
      page.mark(s, r, v);
      for (const json* run : runs) {
        const json& spread = object(*run, "per_flow");
        const double round = number_at(*run, {"round"});
        s.points.push_back({round - 1, number_at(spread, {"p50"}), number_at(spread, {"min"}),
                            number_at(spread, {"max"}), fmt::format("round {:g}", round)});
        rounds = std::max(rounds, static_cast<int>(round));
      }
      c.series.push_back(std::move(s));
    }
  }
  c.x_names = Page::round_names(rounds);
  return c.series.empty() ? std::string() : page.chart(std::move(c));
}

// KiB per connection, idle, by variant: a series per side (and the
// server's kernel share), each a median with its min–max over runs.
std::string memory_chart(render::Page& page) {
  using namespace render;
  svg::Chart c;
  c.title = "Memory per connection, every flow established and idle (median, min–max over runs)";
  c.x_title = "variant";
  c.y_title = "KiB per connection";
  constexpr std::pair<const char*, const char*> kSides[] = {
      {"client", "client_idle_bytes_per_connection"},
      {"server", "server_idle_bytes_per_connection"},
      {"server's kernel", "server_idle_tcp_bytes_per_connection"}};
  for (const auto& [side, key] : kSides) {
    for (const PageResult& r : page.results()) {
      if (!r.setting.empty()) continue;
      svg::Series s{page.name(r, side), {}, false};
      for (const auto& [variant, stats] : object(*r.j, "flows_summary").items()) {
        if (!stats.is_object() || !stats.contains("mode")) continue;  // the headline ratio is no variant
        const std::string x = page.name(r, variant);
        auto at = std::find(c.x_names.begin(), c.x_names.end(), x);
        if (at == c.x_names.end()) at = c.x_names.insert(c.x_names.end(), x);
        const json& summary = object(stats, key);
        const double median = number_at(summary, {"median"});
        if (!std::isfinite(median)) continue;
        s.points.push_back({static_cast<double>(at - c.x_names.begin()), median / 1024,
                            number_at(summary, {"min"}) / 1024, number_at(summary, {"max"}) / 1024, x});
      }
      if (!s.points.empty()) c.series.push_back(std::move(s));
    }
  }
  return c.series.empty() ? std::string() : page.chart(std::move(c));
}

// Whether any result's flows runs carry this rate (their work's).
bool any_rate(render::Page& page, const char* rate_key) {
  for (const render::PageResult& r : page.results()) {
    for (const json& run : render::list(*r.j, "flows_runs")) {
      if (std::isfinite(render::number_at(run, {rate_key}))) return true;
    }
  }
  return false;
}

}  // namespace

std::string flows_html_section(render::Page& page) {
  using namespace render;
  if (!page.any("flows_runs")) return {};
  std::string out = R"(<section id="flows"><h2>Many connections</h2>)";
  for (const spec::FlowWork work : kWorks) {
    const FlowUnits& u = flow_units(work);
    if (!any_rate(page, u.rate_key)) continue;
    out += page.per_round("flows_runs", u.rate_key, fmt::format("{} per round, every flow held", u.rate_name),
                          u.rate_name, u.rate_name);
  }
  out += memory_chart(page);
  out += spread_chart(page);
  return out + "</section>";
}

void flows_html_headline(const nlohmann::json& j, std::vector<std::string>& sentences) {
  using namespace render;
  const std::string base = baseline_of(j, "tcp");
  const std::string over = "over_" + base;
  for (const auto& [v, s] : object(j, "flows_summary").items()) {
    if (!s.is_object() || !s.contains("mode")) continue;  // the headline ratio is no variant
    spec::FlowWork work = spec::FlowWork::rr;
    spec::parse(s.value("work", std::string("rr")), work);
    const FlowUnits& u = flow_units(work);
    const double bytes = number_at(s, {"server_idle_bytes_per_connection", "median"});
    std::string sentence =
        work == spec::FlowWork::crr
            ? fmt::format("{} held no connection between transactions", upper_variant(v))
            : fmt::format("{} held {} per connection {}", upper_variant(v),
                          std::isfinite(bytes) ? fmt::format("{:.1f} KiB", bytes / 1024) : "unknown",
                          s.value("memory_of", std::string()) == "both_ends"
                              ? "at both ends together (the embedded server's process)"
                              : "on the server");
    if (!object(s, over.c_str()).empty()) {
      const json& ratio = object(object(s, over.c_str()), u.rate_key);
      sentence += fmt::format(", and ran {:.2f}x the {} of {} ({})", number_at(ratio, {"median"}),
                              u.rate_name, upper_variant(base), ci_words(ratio));
    }
    sentences.push_back(sentence + ".");
  }
}

}  // namespace tlscmp::kinds
