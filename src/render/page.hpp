#pragma once

// What a kind's part of the report page (tlscmp report, --html) is given:
// the results the page draws and its helpers. report/html.cpp lays out the
// page and each kind's section through the table of kinds; a kind draws its
// charts (kinds/NAME/html.cpp) from its own keys of each result's JSON.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "render/result_json.hpp"
#include "render/svg.hpp"

namespace tlscmp::render {

// One result the page draws: a client's -J, or a sweep's point.
struct PageResult {
  std::string label;    // series prefix: "" with a single input
  std::string setting;  // a sweep point's settings ("msg-size=1K"), else ""
  const json* j = nullptr;
};

class Page {
 public:
  virtual ~Page() = default;
  virtual const std::vector<PageResult>& results() const = 0;
  // The chart as SVG, with an id unique on the page.
  virtual std::string chart(svg::Chart chart) = 0;

  // A series' name: the result's label and setting, then `what`.
  static std::string name(const PageResult& r, const std::string& what);
  // Rounds as categories "1", "2" ...: the most any result has.
  static std::vector<std::string> round_names(int rounds);
  // Whether a result (not a sweep's point) has runs in the list at `key`.
  bool any(const char* key) const;
  // A per-round chart of one figure of a runs list, a series per result and
  // variant (its colour the variant's, its shape the result's), named with
  // its median over the runs that count and the median's 95% interval in
  // `unit`, which a last point, "median", draws too.
  std::string per_round(const char* runs_key, const char* field, const std::string& title,
                        const std::string& y_title, const std::string& unit, bool y_log = false);
  // Latency by percentile: a series per result and variant, each point the
  // median over its runs (not warm-ups) of the percentile in the runs'
  // `field` ({"min", "p50", ... "max"}); the top point is the max.
  std::string percentile_chart(const char* runs_key, const char* field, const std::string& title,
                               const std::string& x_title);
  // The position of `r` among results(): its marker's shape.
  std::size_t index_of(const PageResult& r) const;
  // `s` is `variant`'s series of result `r`: the variant's colour, the result's shape.
  void mark(svg::Series& s, const PageResult& r, const std::string& variant) const {
    s.key = variant;
    s.shape = index_of(r);
  }
  // A chart of summaries ({median, min, max}, as -J writes them): a series
  // per result named `series`, a point with min–max bars for each summary
  // `of` names in it that has a median; "" where none has.
  using NamedSummaries = std::vector<std::pair<std::string, const json*>>;
  std::string summary_chart(svg::Chart chart, const std::string& series,
                            const std::function<NamedSummaries(const json& result)>& of);
  // Where TLS's CPU goes: a stacked bar per variant and side, from each
  // variant's "cost_split" {"client", "server"} in the result's summary at
  // `summary_key`; a series per part, (JSON key, name) in `parts`, the
  // baseline's CPU first. A part below zero (noise) is drawn as 0 and said
  // so in its label. "" where no variant has a split.
  using SplitPart = std::pair<const char*, const char*>;
  std::string split_chart(svg::Chart chart, const char* summary_key, const std::vector<SplitPart>& parts);
};

}  // namespace tlscmp::render
