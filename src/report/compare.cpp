#include "report/compare.hpp"
#include "render/render.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "render/render.hpp"

namespace tlscmp::report {

using render::summary_json;

namespace {

using nlohmann::ordered_json;

std::string percent(double share) {
  return fmt::format("{:+.1f}%", 100 * share);
}

std::string origin_text(const results::ResultOrigin& o) {
  const std::string tls = o.client_tls_library == o.server_tls_library
                              ? o.client_tls_library
                              : fmt::format("{} / {}", o.client_tls_library, o.server_tls_library);
  return fmt::format("{} (tlscmp {}, {})", o.path, o.tlscmp_version, tls);
}

ordered_json origin_json(const results::ResultOrigin& o) {
  return {{"path", o.path},
          {"tlscmp_version", o.tlscmp_version},
          {"client_tls_library", o.client_tls_library},
          {"server_tls_library", o.server_tls_library},
          {"client_kernel", o.kernel}};
}

}  // namespace

std::string render_compare_text(const results::CompareResult& r) {
  std::string out = fmt::format("base: {}\nnew:  {}\n", origin_text(r.base), origin_text(r.next));
  for (const std::string& i : r.ignored)
    out += fmt::format("setting that differs, ignored (--ignore): {}\n", i);
  std::size_t variant_width = 7;
  std::size_t figure_width = 6;
  for (const results::ComparedFigure& f : r.figures) {
    variant_width = std::max(variant_width, f.variant.size());
    figure_width = std::max(figure_width, f.figure.size());
  }
  out += fmt::format("\n{:<8} {:<{}} {:<{}} {:>12} {:>12} {:>8} {:>19} {:>7}  {}\n", "kind", "variant",
                     variant_width, "figure", figure_width, "base median", "new median", "change",
                     "95% CI of change", "runs", "verdict");
  for (const results::ComparedFigure& f : r.figures) {
    const measure::Change& c = f.change;
    out += fmt::format("{:<8} {:<{}} {:<{}} {:>12} {:>12} {:>8} {:>19} {:>7}  {}\n", f.kind, f.variant,
                       variant_width, f.figure, figure_width, render::figure_text(c.base.median),
                       render::figure_text(c.next.median), percent(c.change),
                       c.ci ? fmt::format("{} .. {}", percent(c.ci->low), percent(c.ci->high)) : "-",
                       fmt::format("{}/{}", c.base.count, c.next.count), measure::to_string(c.verdict));
  }
  out +=
      "(change: new median over base median; its interval by bootstrap over both results' runs; a verdict "
      "only where the interval leaves 0 on one side)\n";
  for (const std::string& note : r.notes)
    out += fmt::format("note: {}\n", note);
  if (r.fail_if_slower) {
    out += r.failed ? fmt::format("\nFAILED: slower by {:g}% or more (--fail-if-slower)\n", *r.fail_if_slower)
                    : fmt::format("\npassed: nothing slower by {:g}% or more (--fail-if-slower)\n",
                                  *r.fail_if_slower);
  }
  return out;
}

std::string render_compare_json(const results::CompareResult& r) {
  ordered_json figures = ordered_json::array();
  for (const results::ComparedFigure& f : r.figures) {
    const measure::Change& c = f.change;
    figures.push_back({{"kind", f.kind},
                       {"variant", f.variant},
                       {"figure", f.figure},
                       {"higher_is_better", c.higher_is_better},
                       {"base", summary_json(c.base)},
                       {"new", summary_json(c.next)},
                       {"change_percent", 100 * c.change},
                       {"ci95_low_percent", c.ci ? ordered_json(100 * c.ci->low) : ordered_json(nullptr)},
                       {"ci95_high_percent", c.ci ? ordered_json(100 * c.ci->high) : ordered_json(nullptr)},
                       {"verdict", measure::to_string(c.verdict)}});
  }
  const ordered_json out = {
      {"base", origin_json(r.base)},
      {"new", origin_json(r.next)},
      {"ignored_differences", r.ignored},
      {"figures", figures},
      {"notes", r.notes},
      {"fail_if_slower_percent", r.fail_if_slower ? ordered_json(*r.fail_if_slower) : ordered_json(nullptr)},
      {"failed", r.failed}};
  return out.dump(2) + "\n";
}

}  // namespace tlscmp::report
