// The handshake kind's part of the report page: each handshake's time,
// full and resumed, per key exchange group with --compare-groups; and its
// headline's sentences.

#include <fmt/format.h>
#include <cmath>

#include "kinds/handshake/handshake.hpp"
#include "render/page.hpp"

namespace tlscmp::kinds {

std::string handshake_html_section(render::Page& page) {
  using namespace render;
  svg::Chart c;
  c.title = "Handshake time (median, min–max over runs)";
  c.x_title = "variant";
  c.y_title = "handshake (µs)";
  c.y_log = true;
  const std::string chart = page.summary_chart(std::move(c), "handshake", [](const json& result) {
    Page::NamedSummaries out;
    // Another --tls-lib library's rows carry its name, as its variants' do ("full boringssl").
    const json& libraries = object(object(result, "test"), "tls_libraries");
    const std::string first =
        libraries.is_array() && !libraries.empty() ? libraries.front().get<std::string>() : "";
    const auto suffix = [&](const json& row) {
      const std::string library = str(row, "tls_library");
      return library.empty() || library == first ? std::string() : " " + library;
    };
    for (const json& group : list(result, "groups")) {
      const std::string name = str(group, "group");
      out.emplace_back(name + " full" + suffix(group), &object(object(group, "full"), "handshake_us"));
      out.emplace_back(name + " resumed" + suffix(group), &object(object(group, "resumed"), "handshake_us"));
    }
    std::vector<const json*> rows;  // each library's, or the one library's
    for (const json& handshakes : list(result, "handshakes_libraries"))
      rows.push_back(&handshakes);
    if (rows.empty()) rows.push_back(&object(result, "handshakes"));
    for (const json* handshakes : rows) {
      out.emplace_back("full" + suffix(*handshakes), &object(object(*handshakes, "full"), "handshake_us"));
      out.emplace_back("resumed" + suffix(*handshakes),
                       &object(object(*handshakes, "resumed"), "handshake_us"));
    }
    return out;
  });
  return chart.empty() ? chart : R"(<section id="handshakes"><h2>Handshakes</h2>)" + chart + "</section>";
}

void handshake_html_headline(const nlohmann::json& j, std::vector<std::string>& sentences) {
  using namespace render;
  if (const json& h = object(j, "handshakes"); !h.empty()) {
    sentences.push_back(
        fmt::format("A full TLS handshake took {} µs (median of {}){}.",
                    svg::tick_text(number_at(h, {"full", "handshake_us", "median"})),
                    count_of(number_at(h, {"full", "count"})),
                    std::isfinite(number_at(h, {"resumed", "handshake_us", "median"}))
                        ? fmt::format("; a resumed one {} µs",
                                      svg::tick_text(number_at(h, {"resumed", "handshake_us", "median"})))
                        : ""));
  }
  const json* fastest = nullptr;
  for (const json& group : list(j, "groups")) {
    const double median = number_at(group, {"full", "handshake_us", "median"});
    if (std::isfinite(median) &&
        (fastest == nullptr || median < number_at(*fastest, {"full", "handshake_us", "median"})))
      fastest = &group;
  }
  if (fastest != nullptr) {
    sentences.push_back(
        fmt::format("Of {} key exchange groups, {} made the quickest full handshake: {} µs (median).",
                    list(j, "groups").size(), str(*fastest, "group"),
                    svg::tick_text(number_at(*fastest, {"full", "handshake_us", "median"}))));
  }
}

}  // namespace tlscmp::kinds
