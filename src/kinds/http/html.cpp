// The http kind's part of the report page: requests per round, latency and
// time to first byte by percentile, each run's connect and handshake; and
// its headline's sentence.

#include <fmt/format.h>

#include "kinds/http/http.hpp"
#include "render/page.hpp"

namespace tlscmp::kinds {

std::string http_html_section(render::Page& page) {
  if (!page.any("http_runs")) return {};
  std::string out = R"(<section id="http"><h2>HTTP</h2>)";
  out += page.per_round("http_runs", "requests_per_s", "Requests per second per round", "requests/s",
                        "requests/s");
  out += page.percentile_chart(
      "http_runs", "latency_us",
      "Request latency by percentile: send to the response's last byte (median over rounds; the top point is "
      "the max)",
      "latency (µs, log scale)");
  out +=
      page.percentile_chart("http_runs", "first_byte_us",
                            "Time to first byte by percentile (median over rounds; the top point is the max)",
                            "time to first byte (µs, log scale)");
  out += page.per_round("http_runs", "handshake_us", "Connect and handshake, mean per connection, per round",
                        "connect + handshake (µs)", "µs");
  out += page.per_round(
      "http_runs", "wire_bytes_per_request",
      "Bytes on the wire per request, both ways: headers, framing and TLS records with the body",
      "bytes per request", "B");
  return out + "</section>";
}

void http_html_headline(const nlohmann::json& j, std::vector<std::string>& sentences) {
  using namespace render;
  const std::string base = baseline_of(j, "tcp");
  const std::string over = "over_" + base;
  const std::string upper_base = upper_variant(base);
  for (const auto& [v, s] : object(j, "http_summary").items()) {
    if (object(s, over.c_str()).empty()) continue;
    const json& ratio = object(object(s, over.c_str()), "requests_per_s");
    sentences.push_back(fmt::format(
        "{} served {:.2f}x the HTTP requests per second of {} ({}), with {:.2f}x its p99 latency.",
        upper_variant(v), number_at(ratio, {"median"}), upper_base, ci_words(ratio),
        number_at(s, {over.c_str(), "p99_us", "median"})));
  }
}

}  // namespace tlscmp::kinds
