// The rr kind's part of the report page: transactions per round, latency by
// percentile, the handshake before each run; and its headline's sentence.

#include <fmt/format.h>
#include <cmath>
#include <map>

#include "kinds/rr/rr.hpp"
#include "render/page.hpp"

namespace tlscmp::kinds {

std::string rr_html_section(render::Page& page) {
  using namespace render;
  if (!page.any("rr_runs")) return {};
  std::string out = R"(<section id="rr"><h2>Request/response</h2>)";
  out += page.per_round("rr_runs", "transactions_per_s", "Transactions per second per round",
                        "transactions/s", "transactions/s");
  out += page.percentile_chart("rr_runs", "latency_us",
                               "Latency by percentile (median over rounds of each; the top point is the max)",
                               "latency (µs, log scale)");
  out += page.per_round("rr_runs", "handshake_us", "Handshake before each run's transactions",
                        "handshake (µs)", "µs");
  svg::Chart split;
  split.title =
      "Where TLS's CPU goes, per side (µs per transaction): TCP's, then crypto, record layer, socket";
  split.x_title = "variant and side";
  split.y_title = "CPU (µs per transaction)";
  out += page.split_chart(std::move(split), "rr_summary",
                          {{"tcp_cpu_us", "TCP"},
                           {"crypto_us", "crypto"},
                           {"record_layer_us", "record layer"},
                           {"socket_us", "socket"}});
  return out + "</section>";
}

void rr_html_headline(const nlohmann::json& j, std::vector<std::string>& sentences) {
  using namespace render;
  const std::string base = baseline_of(j, "tcp");
  const std::string over = "over_" + base;
  const std::string upper_base = upper_variant(base);
  for (const auto& [v, s] : object(j, "rr_summary").items()) {
    if (object(s, over.c_str()).empty()) continue;
    const json& ratio = object(object(s, over.c_str()), "transactions_per_s");
    sentences.push_back(
        fmt::format("{} ran {:.2f}x the transactions per second of {} ({}), with {:.2f}x its median latency.",
                    upper_variant(v), number_at(ratio, {"median"}), upper_base, ci_words(ratio),
                    number_at(s, {over.c_str(), "p50_us", "median"})));
  }
}

}  // namespace tlscmp::kinds
