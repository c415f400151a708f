// The stream kind's part of the report page: throughput, the paired ratio
// and CPU per GiB, round by round, -i over time and each variant's
// handshake; and its headline's sentence.

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>

#include "kinds/stream/stream.hpp"
#include "render/page.hpp"

namespace tlscmp::kinds {
namespace stream_html {

using namespace render;

// The paired TLS/TCP transfer time per byte, round by round.
std::string ratio_per_round(render::Page& page) {
  svg::Chart c;
  c.title = "TLS/TCP transfer time per round (paired)";
  c.x_title = "round";
  c.y_title = "TLS time / TCP time";
  c.reference = 1.0;
  c.reference_label = "as fast as TCP";
  int rounds = 0;
  for (const render::PageResult& r : page.results()) {
    if (!r.setting.empty()) continue;
    const std::string base = baseline_of(*r.j, "tcp");
    std::map<int, double> tcp;
    for (const json& run : list(*r.j, "runs")) {
      if (run_counts(run) && str(run, "variant") == base)
        tcp[run.value("round", 0)] = number_at(run, {"transfer_us"}) / number_at(run, {"bytes"});
    }
    std::map<std::string, svg::Series> by_variant;
    for (const json& run : list(*r.j, "runs")) {
      const std::string v = str(run, "variant");
      const int round = run.value("round", 0);
      if (!run_counts(run) || str(run, "mode") == base || !tcp.count(round)) continue;
      rounds = std::max(rounds, round);
      const double ratio = number_at(run, {"transfer_us"}) / number_at(run, {"bytes"}) / tcp[round];
      by_variant[v].points.push_back({static_cast<double>(round - 1), ratio, std::nullopt, std::nullopt,
                                      fmt::format("round {}", round)});
    }
    for (auto& [v, s] : by_variant) {
      page.mark(s, r, v);
      const json& ratio =
          object(object(object(*r.j, "summary"), v.c_str()), ("over_" + base + "_transfer_time").c_str());
      s.name = !ratio.empty() ? fmt::format("{} (median {:.2f}x, {})", page.name(r, v + "/" + base),
                                            number_at(ratio, {"median"}), ci_words(ratio))
                              : page.name(r, v + "/" + base);
      c.series.push_back(std::move(s));
    }
  }
  c.x_names = render::Page::round_names(rounds);
  return page.chart(std::move(c));
}

// CPU seconds per GiB moved, per side and variant, user and system stacked.
std::string cpu_per_gib(render::Page& page) {
  svg::Chart c;
  c.title = "CPU per GiB moved (median over rounds), user and system stacked";
  c.x_title = "variant and side";
  c.y_title = "CPU (s/GiB)";
  c.stacked = true;
  svg::Series user{"user", {}, false};
  svg::Series system{"system", {}, false};
  for (const render::PageResult& r : page.results()) {
    if (!r.setting.empty()) continue;
    for (const auto& [v, runs] : runs_by_variant(list(*r.j, "runs"), run_counts)) {
      for (const char* side : {"client", "server"}) {
        std::vector<double> u;
        std::vector<double> s;
        for (const json* run : runs) {
          const double gib = number_at(*run, {"bytes"}) / double(1 << 30);
          u.push_back(number_at(*run, {side, "cpu_user_s"}) / gib);
          s.push_back(number_at(*run, {side, "cpu_system_s"}) / gib);
        }
        const double x = static_cast<double>(c.x_names.size());
        c.x_names.push_back(page.name(r, v + " " + side));
        user.points.push_back({x, median_of(u), std::nullopt, std::nullopt, c.x_names.back()});
        system.points.push_back({x, median_of(s), std::nullopt, std::nullopt, c.x_names.back()});
      }
    }
  }
  c.series = {std::move(user), std::move(system)};
  return page.chart(std::move(c));
}

// Where each side's CPU per GiB goes in a TLS variant: TCP's, then TLS's
// extra split into crypto, record layer and the socket path, stacked.
std::string cost_split(render::Page& page) {
  svg::Chart c;
  c.title = "Where TLS's CPU goes, per side (s/GiB): TCP's, then crypto, record layer, socket stacked";
  c.x_title = "variant and side";
  c.y_title = "CPU (s/GiB)";
  return page.split_chart(std::move(c), "summary",
                          {{"tcp_cpu_s_per_gib", "TCP"},
                           {"crypto_s_per_gib", "crypto"},
                           {"record_layer_s_per_gib", "record layer"},
                           {"socket_s_per_gib", "socket"}});
}

// -i: throughput per interval over each run, or each stream of it.
std::string intervals(render::Page& page) {
  svg::Chart c;
  c.title = "Throughput over time (-i), per run and stream";
  c.x_title = "time from the run's start (s)";
  c.y_title = "throughput (MB/s)";
  for (const render::PageResult& r : page.results()) {
    if (!r.setting.empty()) continue;
    for (const json& run : list(*r.j, "runs")) {
      if (run.value("warmup", false)) continue;
      const std::string run_name =
          page.name(r, fmt::format("{} round {}", str(run, "variant"), run.value("round", 0)));
      const auto add = [&](const json& intervals, const std::string& series_name) {
        svg::Series s{series_name, {}, true};
        for (const json& i : intervals)
          s.points.push_back(
              {number_at(i, {"end_s"}), number_at(i, {"mbytes_per_s"}), std::nullopt, std::nullopt, {}});
        if (!s.points.empty()) c.series.push_back(std::move(s));
      };
      if (list(run, "streams").size() > 1) {
        for (const json& stream : list(run, "streams"))
          add(list(stream, "intervals"), fmt::format("{} stream {}", run_name, stream.value("stream", 0)));
      } else {
        add(list(run, "intervals"), run_name);
      }
    }
  }
  return page.chart(std::move(c));
}

// Each variant's handshake before its runs (median, min–max over runs).
std::string handshakes(render::Page& page) {
  svg::Chart c;
  c.title = "Handshake time (median, min–max over runs)";
  c.x_title = "variant";
  c.y_title = "handshake (µs)";
  c.y_log = true;
  return page.summary_chart(std::move(c), "handshake", [](const json& result) {
    render::Page::NamedSummaries out;
    for (const auto& [v, summary] : object(result, "summary").items())
      out.emplace_back(v, &object(summary, "handshake_us"));
    return out;
  });
}

}  // namespace stream_html

std::string stream_html_section(render::Page& page) {
  using namespace stream_html;
  if (!page.any("runs")) return {};
  std::string out = R"(<section id="bulk"><h2>Bulk transfer</h2>)";
  out +=
      page.per_round("runs", "mbytes_per_s", "Throughput per round", "throughput (MB/s, 10^6 B/s)", "MB/s");
  out += ratio_per_round(page);
  out += cpu_per_gib(page);
  out += cost_split(page);
  out += intervals(page);
  out += handshakes(page);
  return out + "</section>";
}

void stream_html_headline(const nlohmann::json& j, std::vector<std::string>& sentences) {
  using namespace render;
  const std::string base = baseline_of(j, "tcp");
  const std::string over = "over_" + base;
  const std::string upper_base = upper_variant(base);
  for (const auto& [v, s] : object(j, "summary").items()) {
    const json& ratio = object(s, (over + "_transfer_time").c_str());
    if (ratio.empty()) continue;
    sentences.push_back(fmt::format("{} took {:.2f}x as long as {}: {}.", upper_variant(v),
                                    number_at(ratio, {"median"}), upper_base, ci_words(ratio)));
  }
}

}  // namespace tlscmp::kinds
