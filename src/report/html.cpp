#include "report/html.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "kinds/kind.hpp"
#include "render/page.hpp"
#include "render/svg.hpp"
#include "results/result_file.hpp"
#include "spec/tls_policy.hpp"

namespace tlscmp::report {
namespace {

using nlohmann::json;
namespace svg = render::svg;
using svg::escape;

// Results read as render/result_json.hpp reads them, as compare and merge do.
constexpr auto num = render::number_at;
using render::list;
using render::object;

// The results a page draws: a client result is one, a sweep one per point.
using Result = render::PageResult;

// Builds the page: sections, each kind's through the table of kinds, charts
// with unique ids.
class Page : public render::Page {
 public:
  explicit Page(const std::vector<ReportInput>& inputs) : inputs_(inputs) {
    for (const ReportInput& in : inputs) {
      const std::string label = inputs.size() > 1 ? in.label : "";
      if (in.json.contains("points")) {
        for (const json& point : list(in.json, "points")) {
          std::string setting;
          for (const auto& [k, v] : object(point, "settings").items())
            setting +=
                (setting.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
          if (point.contains("comparison")) {
            results_.push_back({label, setting, &point["comparison"]});
            add_libraries(point["comparison"]);
          }
        }
        sweeps_.push_back(&in);
      } else {
        results_.push_back({label, "", &in.json});
        add_libraries(in.json);
      }
    }
  }

  std::string render() {
    std::string body;
    body += headline_section();
    for (const kinds::KindSlice* kind : kinds::all_kinds()) {
      if (kind->html_section != nullptr) body += kind->html_section(*this);
    }
    body += sweep_section();
    body += environment_section();
    return page(body);
  }

  const std::vector<Result>& results() const override { return results_; }

  std::string chart(svg::Chart c) override {
    c.id = fmt::format("chart-{}", ++charts_);
    for (svg::Series& s : c.series) {
      if (!s.key.empty() && !s.colour) style(s);
    }
    return svg::render(c);
  }

 private:
  std::string headline_section() {
    std::string items;
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      const json& j = *r.j;
      std::vector<std::string> sentences;
      bool cut = j.value("interrupted", false);
      for (const kinds::KindSlice* kind : kinds::all_kinds()) {
        if (kind->html_headline != nullptr) kind->html_headline(j, sentences);
        if (kind->results.list == nullptr) continue;
        const json& runs = list(j, kind->results.list);
        cut = cut || std::any_of(runs.begin(), runs.end(),
                                 [](const json& run) { return run.value("partial", false); });
      }
      if (sentences.empty()) sentences.push_back("No TLS/TCP ratio: a single mode ran, or no run finished.");
      const std::string partial =
          cut ? R"( <strong class="partial">Partial: the run was interrupted; this shows what finished.</strong>)"
              : "";
      std::string text;
      for (const std::string& s : sentences) {
        if (!text.empty()) text += ' ';
        text += escape(s);
      }
      items += fmt::format(R"(<p class="headline">{}{}{}</p>)",
                           r.label.empty() ? "" : fmt::format("<b>{}:</b> ", escape(r.label)), text, partial);
    }
    for (const ReportInput* sweep : sweeps_) {
      items += fmt::format(R"(<p class="headline">{}A sweep of {} settings: the charts below.</p>)",
                           inputs_.size() > 1 ? fmt::format("<b>{}:</b> ", escape(sweep->label)) : "",
                           list(sweep->json, "points").size());
    }
    return fmt::format(R"(<section id="headline">{}</section>)", items);
  }

  // Sweeps: a figure against the swept settings, a series per variant, as
  // scripts/plot.py drew them.
  std::string sweep_section() {
    if (sweeps_.empty()) return {};
    std::string out = R"(<section id="sweep"><h2>Sweep</h2>)";
    // low/high: the bars, "min"/"max" or the ratio's "ci95_low"/"ci95_high".
    const auto figure = [&](const char* title, const char* y_title, const char* summary_key,
                            const char* field, bool y_log, const char* low = "min",
                            const char* high = "max") {
      svg::Chart c;
      c.title = title;
      c.x_title = "setting";
      c.y_title = y_title;
      c.y_log = y_log;
      std::map<std::string, svg::Series> by_variant;
      std::vector<std::string> order;
      for (const Result& r : results_) {
        if (r.setting.empty()) continue;
        const std::string x_name = r.label.empty() ? r.setting : r.label + " " + r.setting;
        auto it = std::find(c.x_names.begin(), c.x_names.end(), x_name);
        if (it == c.x_names.end()) it = c.x_names.insert(c.x_names.end(), x_name);
        const double x = static_cast<double>(it - c.x_names.begin());
        for (const auto& [v, s] : object(*r.j, summary_key).items()) {
          if (!s.is_object() || !s.contains(field) || !s[field].is_object()) continue;
          if (!by_variant.count(v)) order.push_back(v);
          const json& stat = s[field];
          by_variant[v].points.push_back(
              {x, num(stat, {"median"}), num(stat, {low}), num(stat, {high}), x_name});
        }
      }
      for (const std::string& v : order) {
        by_variant[v].name = v;
        by_variant[v].line = true;
        c.series.push_back(std::move(by_variant[v]));
      }
      return chart(std::move(c));
    };
    for (const kinds::KindSlice* kind : kinds::all_kinds()) {
      for (const kinds::SweepChart& f : kind->sweep_charts)
        out += figure(f.title, f.axis, f.summary, f.field, f.log_scale, f.low, f.high);
    }
    return out + "</section>";
  }

  // A result file's own result: a sweep's first point stands for its environment and command.
  static const json& first_result(const ReportInput& in) {
    static const json none = json::object();
    if (!in.json.contains("points")) return in.json;
    const json& points = list(in.json, "points");
    return points.empty() ? none : points[0]["comparison"];
  }

  std::string environment_section() {
    std::set<std::string> keys;
    std::string head = "<tr><th>setting</th>";
    for (const ReportInput& in : inputs_) {
      for (const char* side : {"client", "server"}) {
        for (const auto& [k, v] : object(object(first_result(in), "environment"), side).items())
          keys.insert(k);
        head += "<th>" + escape(inputs_.size() > 1 ? in.label + " " + side : side) + "</th>";
      }
    }
    head += "</tr>";
    std::string rows;
    for (const std::string& k : keys) {
      rows += "<tr><th>" + escape(k) + "</th>";
      for (const ReportInput& in : inputs_) {
        for (const char* side : {"client", "server"}) {
          const json v = first_result(in)
                             .value("environment", json::object())
                             .value(side, json::object())
                             .value(k, json());
          rows += "<td>" +
                  escape(v.is_string() ? v.get<std::string>()
                         : v.is_null() ? ""
                                       : v.dump()) +
                  "</td>";
        }
      }
      rows += "</tr>";
    }
    std::string commands;
    for (const ReportInput& in : inputs_) {
      const std::string line =
          first_result(in).value("test", json::object()).value("command_line", std::string());
      commands +=
          fmt::format("<pre>{}{}</pre>", inputs_.size() > 1 ? "# " + escape(in.label) + "\n" : "",
                      line.empty() ? "(not recorded: this result comes from an older tlscmp)" : escape(line));
    }
    return fmt::format(
        R"(<section id="environment"><h2>Environment</h2><table class="environment"><thead>{}</thead>)"
        R"(<tbody>{}</tbody></table><h2>To run it again</h2>{}</section>)",
        head, rows, commands);
  }

  std::string page(const std::string& body) const {
    std::string names;
    for (const ReportInput& in : inputs_)
      names += (names.empty() ? "" : ", ") + in.label;
    return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>tlscmp report: {}</title>
<style>
body {{ font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; }}
h1 {{ font-size: 1.5rem; margin-bottom: .2rem; }}
h2 {{ font-size: 1.2rem; border-bottom: 1px solid #ccc; margin-top: 2rem; }}
.headline {{ font-size: 1.1rem; }}
.partial {{ color: #a33; }}
figure {{ margin: 1.2rem 0; break-inside: avoid; }}
figcaption {{ font-weight: 600; }}
svg.chart {{ width: 100%; max-width: 640px; height: auto; display: block; }}
svg.chart .grid {{ stroke: #e4e4e4; }}
svg.chart .axis {{ stroke: #333; }}
svg.chart .reference {{ stroke: #777; stroke-dasharray: 5 4; }}
svg.chart text {{ font-size: 11px; fill: #333; }}
svg.chart .axis-title {{ font-size: 12px; }}
ul.legend {{ list-style: none; padding: 0; margin: .3rem 0; display: flex; flex-wrap: wrap; gap: .2rem 1.2rem; font-size: .9rem; }}
table {{ border-collapse: collapse; font-size: .85rem; }}
th, td {{ border: 1px solid #ddd; padding: .15rem .5rem; text-align: left; vertical-align: top; }}
details {{ margin-top: .3rem; }}
pre {{ background: #f4f4f4; padding: .5rem; white-space: pre-wrap; word-break: break-all; }}
@media print {{ body {{ max-width: none; margin: 0; }} details {{ display: none; }} }}
</style>
</head>
<body>
<header><h1>tlscmp report</h1><p>{} · made by tlscmp from {} result file{}</p></header>
{}
</body>
</html>
)",
                       escape(names), escape(names), inputs_.size(), inputs_.size() == 1 ? "" : "s", body);
  }

  const std::vector<ReportInput>& inputs_;
  std::vector<Result> results_;
  // Each variant's colour on every chart of the page: the usual ones fixed,
  // others in the order they come.
  std::map<std::string, std::size_t> colours_{{"tcp", 0},         {"tls", 1}, {"tls-resumed", 2},
                                              {"tls-release", 3}, {"udp", 4}, {"dtls", 5}};
  std::size_t colour_for(const std::string& key) {
    return colours_.emplace(key, colours_.size()).first->second;
  }
  // --tls-lib's libraries of the page's results, the first result's first.
  std::vector<std::string> libraries_;
  void add_libraries(const json& result) {
    for (const json& entry : list(object(result, "test"), "tls_libraries")) {
      if (!entry.is_string()) continue;
      const std::string name = entry.get<std::string>();
      if (std::find(libraries_.begin(), libraries_.end(), name) == libraries_.end())
        libraries_.push_back(name);
    }
  }
  // A series' colour and marker. With several TLS libraries on the page, a
  // TLS variant's colour is its library's ("tls-resumed boringssl":
  // boringssl's; "tls-resumed": the first library's) and its marker the
  // variant's kind (tls, tls-resumed, tls-release), the same on every
  // chart; tcp and the other transports keep their own colours.
  void style(svg::Series& s) {
    const std::size_t space = s.key.rfind(' ');
    std::string library = space != std::string::npos && spec::is_library_name(s.key.substr(space + 1))
                              ? s.key.substr(space + 1)
                              : std::string();
    const std::string kind = library.empty() ? s.key : s.key.substr(0, space);
    if (library.empty() && (kind.starts_with("tls") || kind.starts_with("TLS")) && !libraries_.empty())
      library = libraries_.front();
    const auto at = std::find(libraries_.begin(), libraries_.end(), library);
    if (libraries_.size() < 2 || at == libraries_.end()) {
      s.colour = colour_for(s.key);
      return;
    }
    s.colour = 1 + static_cast<std::size_t>(at - libraries_.begin());  // tcp keeps 0
    if (!s.shape) s.shape = shapes_.emplace(kind, shapes_.size()).first->second;
  }
  std::map<std::string, std::size_t> shapes_{{"tls", 0}, {"tls-resumed", 1}, {"tls-release", 2}};
  std::vector<const ReportInput*> sweeps_;
  int charts_ = 0;
};

}  // namespace

std::string report_problem(const json& j) {
  if (!j.is_object()) return "not a JSON object";
  if (j.contains("points")) {
    if (!j["points"].is_array()) return "its 'points' is not a list";
    for (const json& point : j["points"]) {
      if (!point.is_object() || !point.contains("comparison"))
        return "a sweep point without its 'comparison'";
      if (const std::string why = report_problem(point["comparison"]); !why.empty())
        return "a sweep point: " + why;
    }
    return {};
  }
  if (!j.contains("tlscmp_version") || !j.contains("test"))
    return "no 'tlscmp_version' and 'test': not a tlscmp result";
  for (const char* key : {"runs", "summary", "environment"}) {
    if (!j.contains(key)) return fmt::format("no '{}' (made by an older tlscmp?)", key);
  }
  return {};
}

std::string render_html(const std::vector<ReportInput>& inputs) {
  return Page(inputs).render();
}

}  // namespace tlscmp::report
