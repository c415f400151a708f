// The crr kind's part of the report page: connections per round and each
// phase of a connection; and its headline's sentence.

#include <fmt/format.h>
#include <cmath>
#include <map>

#include "kinds/crr/crr.hpp"
#include "render/page.hpp"

namespace tlscmp::kinds {

std::string crr_html_section(render::Page& page) {
  using namespace render;
  if (!page.any("crr_runs")) return {};
  std::string out = R"(<section id="crr"><h2>Connection per transaction</h2>)";
  out += page.per_round("crr_runs", "connections_per_s", "Connections per second per round", "connections/s",
                        "connections/s");
  svg::Chart c;
  c.title = "Each phase of a connection: p50 (median, min–max over rounds)";
  c.x_title = "phase";
  c.y_title = "p50 (µs, log scale)";
  c.y_log = true;
  c.x_names = {"connect", "handshake", "response", "total"};
  for (const render::PageResult& r : page.results()) {
    if (!r.setting.empty()) continue;
    for (const auto& [v, s] : object(*r.j, "crr_summary").items()) {
      if (!s.is_object() || !s.contains("mode")) continue;
      svg::Series series{page.name(r, v), {}, false};
      page.mark(series, r, v);
      for (std::size_t i = 0; i < c.x_names.size(); ++i) {
        const std::string key = c.x_names[i] + "_p50_us";
        const json& stat = s.value(key, json());
        if (!std::isfinite(number_at(stat, {"median"}))) continue;
        series.points.push_back({static_cast<double>(i), number_at(stat, {"median"}),
                                 number_at(stat, {"min"}), number_at(stat, {"max"}), c.x_names[i]});
      }
      c.series.push_back(std::move(series));
    }
  }
  out += page.chart(std::move(c));
  svg::Chart split;
  split.title =
      "Where TLS's CPU goes, per side (µs per connection): TCP's, then handshake, crypto, record layer, the "
      "rest";
  split.x_title = "variant and side";
  split.y_title = "CPU (µs per connection)";
  out += page.split_chart(std::move(split), "crr_summary",
                          {{"tcp_cpu_us", "TCP"},
                           {"handshake_us", "handshake"},
                           {"crypto_us", "crypto"},
                           {"record_layer_us", "record layer"},
                           {"socket_us", "socket and the rest"}});
  return out + "</section>";
}

void crr_html_headline(const nlohmann::json& j, std::vector<std::string>& sentences) {
  using namespace render;
  const std::string base = baseline_of(j, "tcp");
  const std::string over = "over_" + base;
  const std::string upper_base = upper_variant(base);
  for (const auto& [v, s] : object(j, "crr_summary").items()) {
    if (object(s, over.c_str()).empty()) continue;
    const json& ratio = object(object(s, over.c_str()), "connections_per_s");
    sentences.push_back(fmt::format("{} made {:.2f}x the connections per second of {}: {}.", upper_variant(v),
                                    number_at(ratio, {"median"}), upper_base, ci_words(ratio)));
  }
}

}  // namespace tlscmp::kinds
