// The datagram kind's part of the report page: datagrams received per
// round, loss per sender, lost datagrams beside the kernel's drops; and its
// headline's sentence.

#include <fmt/format.h>
#include <cmath>
#include <map>

#include "kinds/datagram/datagram.hpp"
#include "render/page.hpp"

namespace tlscmp::kinds {

std::string datagram_html_section(render::Page& page) {
  using namespace render;
  if (!page.any("datagram_runs")) return {};
  std::string out = R"(<section id="datagrams"><h2>Datagrams</h2>)";
  out += page.per_round("datagram_runs", "received_per_s", "Datagrams received per second per round",
                        "received/s", "datagrams/s");
  svg::Chart loss;
  loss.title = "Loss per sender, every round";
  loss.x_title = "sender";
  loss.y_title = "lost (%)";
  svg::Chart drops;
  drops.title = "Lost datagrams and the receiver kernel's drops per round";
  drops.x_title = "round";
  drops.y_title = "datagrams";
  int senders = 0;
  int rounds = 0;
  for (const render::PageResult& r : page.results()) {
    if (!r.setting.empty()) continue;
    std::map<std::string, svg::Series> by_variant;
    std::map<std::string, svg::Series> lost;
    std::map<std::string, svg::Series> kernel;
    for (const json& run : list(*r.j, "datagram_runs")) {
      if (!run_counts(run)) continue;
      const std::string v = str(run, "variant");
      const int round = run.value("round", 0);
      rounds = std::max(rounds, round);
      for (const json& sender : list(run, "senders")) {
        const int index = sender.value("sender", 0);
        senders = std::max(senders, index + 1);
        by_variant[v].points.push_back({static_cast<double>(index), number_at(sender, {"loss_percent"}),
                                        std::nullopt, std::nullopt,
                                        fmt::format("sender {} round {}", index, round)});
      }
      lost[v].points.push_back(
          {static_cast<double>(round - 1), number_at(run, {"lost"}), std::nullopt, std::nullopt, {}});
      kernel[v].points.push_back(
          {static_cast<double>(round - 1), number_at(run, {"kernel_drops"}), std::nullopt, std::nullopt, {}});
    }
    for (auto& [v, s] : by_variant) {
      s.name = page.name(r, v);
      page.mark(s, r, v);
      loss.series.push_back(std::move(s));
    }
    for (auto& [v, s] : lost) {
      s.name = page.name(r, v + " lost");
      drops.series.push_back(std::move(s));
      kernel[v].name = page.name(r, v + " kernel drops");
      drops.series.push_back(std::move(kernel[v]));
    }
  }
  for (int i = 0; i < senders; ++i)
    loss.x_names.push_back(std::to_string(i));
  drops.x_names = render::Page::round_names(rounds);
  out += page.chart(std::move(loss));
  out += page.chart(std::move(drops));
  return out + "</section>";
}

void datagram_html_headline(const nlohmann::json& j, std::vector<std::string>& sentences) {
  using namespace render;
  const std::string datagram_base = baseline_of(j, "udp");
  const std::string datagram_other = datagram_base == "udp" ? "dtls" : "udp";
  const std::string key = datagram_other + "_over_" + datagram_base + "_received_per_s";
  if (const double ratio = number_at(j, {"datagram_summary", key.c_str()}); std::isfinite(ratio)) {
    sentences.push_back(fmt::format(
        "{} delivered {:.2f}x the datagrams per second of {} (the ratio of their medians, {} rounds).",
        upper_variant(datagram_other), ratio, upper_variant(datagram_base),
        count_of(number_at(j, {"datagram_summary", datagram_other.c_str(), "runs"}))));
  }
}

}  // namespace tlscmp::kinds
