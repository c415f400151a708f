#include "render/svg.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace tlscmp::render::svg {
namespace {

constexpr double kWidth = 640;
constexpr double kHeight = 300;
constexpr double kLeft = 70;
constexpr double kRight = 16;
constexpr double kTop = 14;
constexpr double kBottom = 46;

// Okabe-Ito: blue, vermillion, bluish green, reddish purple, orange, sky
// blue, black, yellow (last: it is faint on white).
const std::array<std::string, 8> kColours{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                          "#E69F00", "#56B4E9", "#000000", "#F0E442"};

std::string number(double v) {
  return fmt::format("{:.1f}", v);
}

// A marker of the series' shape at (x, y): circle, square, triangle, diamond, cross.
std::string marker(std::size_t series, double x, double y, const std::string& colour) {
  const double r = 4;
  switch (series % 5) {
    case 0:
      return fmt::format(R"(<circle cx="{}" cy="{}" r="{}" fill="{}"/>)", number(x), number(y), r, colour);
    case 1:
      return fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>)", number(x - r),
                         number(y - r), 2 * r, 2 * r, colour);
    case 2:
      return fmt::format(R"(<path d="M{} {}L{} {}L{} {}Z" fill="{}"/>)", number(x), number(y - r - 1),
                         number(x + r + 1), number(y + r), number(x - r - 1), number(y + r), colour);
    case 3:
      return fmt::format(R"(<path d="M{} {}L{} {}L{} {}L{} {}Z" fill="{}"/>)", number(x), number(y - r - 1),
                         number(x + r + 1), number(y), number(x), number(y + r + 1), number(x - r - 1),
                         number(y), colour);
    default:
      return fmt::format(R"(<path d="M{} {}L{} {}M{} {}L{} {}" stroke="{}" stroke-width="2.5"/>)",
                         number(x - r), number(y - r), number(x + r), number(y + r), number(x - r),
                         number(y + r), number(x + r), number(y - r), colour);
  }
}

std::string nines_text(double y) {
  const double p = (1 - std::pow(10.0, -y)) * 100;
  return fmt::format("{}%", tick_text(std::round(p * 1000) / 1000));
}

// A table cell: four significant digits, never an exponent.
std::string table_number(double v) {
  if (!std::isfinite(v)) return "-";
  if (std::abs(v) >= 1e4) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double Scale::operator()(double value) const {
  if (log) {
    const double v = std::log10(std::max(value, 1e-300));
    const double a = std::log10(d0);
    const double b = std::log10(d1);
    return b == a ? (r0 + r1) / 2 : r0 + (v - a) / (b - a) * (r1 - r0);
  }
  return d1 == d0 ? (r0 + r1) / 2 : r0 + (value - d0) / (d1 - d0) * (r1 - r0);
}

std::vector<double> Scale::ticks(int target) const {
  if (!log) return nice_ticks(d0, d1, target);
  std::vector<double> out;
  const int first = static_cast<int>(std::floor(std::log10(d0) + 1e-9));
  const int last = static_cast<int>(std::ceil(std::log10(d1) - 1e-9));
  const bool fill = last - first <= 2;  // few decades: 2 and 5 between
  for (int e = first; e <= last; ++e) {
    for (const double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fill) continue;
      const double v = m * std::pow(10.0, e);
      if (v >= d0 * (1 - 1e-9) && v <= d1 * (1 + 1e-9)) out.push_back(v);
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || target < 1) return {lo};
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

Scale linear_scale(double lo, double hi, double r0, double r1, bool from_zero) {
  if (from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (!(hi > lo)) {  // one value: a band around it
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
    if (from_zero && lo < 0 && hi > 0 && lo > -pad * 2) lo = 0;
  }
  const std::vector<double> t = nice_ticks(lo, hi, 5);  // as many as render() draws, so the top is a tick
  const double step = t.size() > 1 ? t[1] - t[0] : (hi - lo);
  return Scale{std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step, r0, r1, false};
}

Scale log_scale(double lo, double hi, double r0, double r1) {
  lo = std::max(lo, 1e-12);
  hi = std::max(hi, lo);
  double a = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
  double b = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
  if (b <= a) b = a * 10;
  return Scale{a, b, r0, r1, true};
}

std::string tick_text(double value) {
  if (!std::isfinite(value)) return "-";
  const double a = std::abs(value);
  const auto trim = [](std::string s) {
    if (s.find('.') != std::string::npos) {
      while (!s.empty() && s.back() == '0')
        s.pop_back();
      if (!s.empty() && s.back() == '.') s.pop_back();
    }
    return s;
  };
  if (a >= 1e9) return trim(fmt::format("{:.2f}", value / 1e9)) + "G";
  if (a >= 1e6) return trim(fmt::format("{:.2f}", value / 1e6)) + "M";
  if (a >= 1e4) return trim(fmt::format("{:.2f}", value / 1e3)) + "k";
  if (a == 0) return "0";
  if (a >= 1) return trim(fmt::format("{:.2f}", value));
  return trim(fmt::format("{:.{}f}", value, std::min(9, 2 - static_cast<int>(std::floor(std::log10(a))))));
}

const std::string& series_colour(std::size_t index) {
  return kColours[index % kColours.size()];
}

namespace {

// A series' colour: its own where set, else its position's.
const std::string& colour_of(const Series& series, std::size_t position) {
  return series_colour(series.colour.value_or(position));
}

}  // namespace

namespace {

constexpr double kPlotX0 = kLeft;
constexpr double kPlotX1 = kWidth - kRight;
constexpr double kPlotY0 = kHeight - kBottom;  // the bottom
constexpr double kPlotY1 = kTop;

// The data's extent: finite points only, positive ones on a log axis; a
// stacked chart's from zero to its tallest stack; the reference line in it.
struct Extent {
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -std::numeric_limits<double>::infinity();
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = -std::numeric_limits<double>::infinity();
};

std::optional<Extent> extent_of(const Chart& chart) {
  Extent e;
  for (const Series& s : chart.series) {
    for (const Point& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      if (chart.x_log && p.x <= 0) continue;
      e.x_lo = std::min(e.x_lo, p.x);
      e.x_hi = std::max(e.x_hi, p.x);
      for (const double y : {p.y, p.low.value_or(p.y), p.high.value_or(p.y)}) {
        if (!std::isfinite(y) || (chart.y_log && y <= 0)) continue;
        e.y_lo = std::min(e.y_lo, y);
        e.y_hi = std::max(e.y_hi, y);
      }
    }
  }
  if (!std::isfinite(e.x_lo) || !std::isfinite(e.y_lo)) return std::nullopt;
  if (chart.stacked) {
    std::vector<double> tops(chart.x_names.size(), 0.0);
    for (const Series& s : chart.series)
      for (const Point& p : s.points)
        if (std::isfinite(p.y) && p.x >= 0 && p.x < static_cast<double>(tops.size()))
          tops[static_cast<std::size_t>(p.x)] += p.y;
    e.y_lo = 0;
    e.y_hi = *std::max_element(tops.begin(), tops.end());
  }
  if (chart.reference) {
    e.y_lo = std::min(e.y_lo, *chart.reference);
    e.y_hi = std::max(e.y_hi, *chart.reference);
  }
  return e;
}

// The scales from data to the plot area.
struct Frame {
  Scale x;
  Scale y;
  bool categories = false;  // named x values (chart.x_names), one slot each
};

Frame frame_of(const Chart& chart, const Extent& e) {
  const bool categories = !chart.x_names.empty();
  Scale x = categories ? Scale{-0.5, static_cast<double>(chart.x_names.size()) - 0.5, kPlotX0, kPlotX1, false}
            : chart.x_log ? log_scale(e.x_lo, e.x_hi, kPlotX0, kPlotX1)
                          : linear_scale(e.x_lo, e.x_hi, kPlotX0, kPlotX1, false);
  Scale y = chart.y_log     ? log_scale(e.y_lo, e.y_hi, kPlotY0, kPlotY1)
            : chart.y_nines ? Scale{0, std::max(3.5, std::ceil(e.y_hi * 2) / 2), kPlotY0, kPlotY1, false}
                            : linear_scale(e.y_lo, e.y_hi, kPlotY0, kPlotY1, chart.y_from_zero);
  return {x, y, categories};
}

// Grid, ticks, axes, their titles and the reference line.
std::string axes_svg(const Chart& chart, const Frame& f) {
  std::string svg;
  std::vector<double> y_ticks =
      chart.y_nines ? std::vector<double>{0, std::log10(2.0), 1, 2, 3} : f.y.ticks(5);
  for (const double t : y_ticks) {
    if (t < std::min(f.y.d0, f.y.d1) - 1e-12 || t > std::max(f.y.d0, f.y.d1) + 1e-12) continue;
    const double py = f.y(t);
    svg += fmt::format(R"(<line class="grid" x1="{}" x2="{}" y1="{}" y2="{}"/>)", number(kPlotX0),
                       number(kPlotX1), number(py), number(py));
    svg += fmt::format(
        R"(<text class="tick" x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>)",
        number(kPlotX0 - 6), number(py), escape(chart.y_nines ? nines_text(t) : tick_text(t)));
  }
  if (f.categories) {
    const std::size_t every = std::max<std::size_t>(1, chart.x_names.size() / 12 + 1);
    for (std::size_t i = 0; i < chart.x_names.size(); i += every) {
      svg += fmt::format(R"(<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>)",
                         number(f.x(static_cast<double>(i))), number(kPlotY0 + 16), escape(chart.x_names[i]));
    }
  } else {
    for (const double t : f.x.ticks(5)) {
      const double px = f.x(t);
      svg += fmt::format(R"(<line class="grid" x1="{}" x2="{}" y1="{}" y2="{}"/>)", number(px), number(px),
                         number(kPlotY0), number(kPlotY1));
      svg += fmt::format(R"(<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>)", number(px),
                         number(kPlotY0 + 16), escape(tick_text(t)));
    }
  }
  svg += fmt::format(R"(<line class="axis" x1="{0}" x2="{1}" y1="{2}" y2="{2}"/>)", number(kPlotX0),
                     number(kPlotX1), number(kPlotY0));
  svg += fmt::format(R"(<line class="axis" x1="{0}" x2="{0}" y1="{1}" y2="{2}"/>)", number(kPlotX0),
                     number(kPlotY0), number(kPlotY1));
  svg += fmt::format(R"(<text class="axis-title" x="{}" y="{}" text-anchor="middle">{}</text>)",
                     number((kPlotX0 + kPlotX1) / 2), number(kHeight - 8), escape(chart.x_title));
  svg += fmt::format(
      R"svg(<text class="axis-title" transform="translate(14 {}) rotate(-90)" text-anchor="middle">{}</text>)svg",
      number((kPlotY0 + kPlotY1) / 2), escape(chart.y_title));
  if (chart.reference) {
    const double py = f.y(*chart.reference);
    svg += fmt::format(R"(<line class="reference" x1="{}" x2="{}" y1="{}" y2="{}"/>)", number(kPlotX0),
                       number(kPlotX1), number(py), number(py));
    if (!chart.reference_label.empty()) {
      svg += fmt::format(R"(<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>)",
                         number(kPlotX1 - 2), number(py - 4), escape(chart.reference_label));
    }
  }
  return svg;
}

// A stacked chart's series `s`: its bar on each x, on top of those before it
// (`tops`, the running top of each x's stack).
std::string stacked_svg(const Chart& chart, const Frame& f, std::size_t s, std::vector<double>& tops) {
  std::string svg;
  const double band =
      (kPlotX1 - kPlotX0) / static_cast<double>(std::max<std::size_t>(1, chart.x_names.size())) * 0.6;
  for (const Point& p : chart.series[s].points) {
    if (!std::isfinite(p.y) || p.x < 0 || p.x >= static_cast<double>(tops.size())) continue;
    double& base = tops[static_cast<std::size_t>(p.x)];
    const double top = f.y(base + p.y);
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#fff"/>)",
                       number(f.x(p.x) - band / 2), number(top), number(band), number(f.y(base) - top),
                       colour_of(chart.series[s], s));
    base += p.y;
  }
  return svg;
}

// Series `s` of other charts: its line under its points, each point with its error bar.
std::string points_svg(const Chart& chart, const Frame& f, std::size_t s) {
  const Series& series = chart.series[s];
  const std::string& colour = colour_of(series, s);
  const double spread = f.categories && chart.series.size() > 1 ? 8.0 : 0.0;
  const double offset = spread * (static_cast<double>(s) - static_cast<double>(chart.series.size() - 1) / 2);
  const auto px = [&](const Point& p) { return f.x(p.x) + offset; };
  const auto drawable = [&](const Point& p) {
    return std::isfinite(p.x) && std::isfinite(p.y) && !(chart.x_log && p.x <= 0) &&
           !(chart.y_log && p.y <= 0);
  };
  std::string svg;
  if (series.line) {
    std::string path;
    for (const Point& p : series.points) {
      if (!drawable(p)) continue;
      path += fmt::format("{}{} {}", path.empty() ? "M" : "L", number(px(p)), number(f.y(p.y)));
    }
    if (!path.empty())
      svg += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)", path, colour);
  }
  for (const Point& p : series.points) {
    if (!drawable(p)) continue;
    if (p.low && p.high && std::isfinite(*p.low) && std::isfinite(*p.high)) {
      const double a = f.y(*p.low);
      const double b = f.y(*p.high);
      // A bar shorter than the marker would only blot it.
      if (std::abs(a - b) >= 8) {
        svg += fmt::format(
            R"(<path d="M{0} {1}L{0} {2}M{3} {1}L{4} {1}M{3} {2}L{4} {2}" stroke="{5}" stroke-width="1.5"/>)",
            number(px(p)), number(a), number(b), number(px(p) - 4), number(px(p) + 4), colour);
      }
    }
    svg += marker(series.shape.value_or(s), px(p), f.y(p.y), colour);
  }
  return svg;
}

std::string legend_html(const Chart& chart) {
  std::string legend = R"(<ul class="legend">)";
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    legend += fmt::format(R"(<li><svg width="14" height="14" aria-hidden="true">{}</svg> {}</li>)",
                          marker(chart.series[s].shape.value_or(s), 7, 7, colour_of(chart.series[s], s)),
                          escape(chart.series[s].name));
  }
  return legend + "</ul>";
}

// Every point as a table row, for screen readers and for copying.
std::string data_table(const Chart& chart) {
  const bool categories = !chart.x_names.empty();
  std::string table = fmt::format(
      R"(<details><summary>Data: {}</summary><table><thead><tr><th>series</th><th>{}</th><th>{}</th>)"
      R"(<th>low</th><th>high</th></tr></thead><tbody>)",
      escape(chart.title), escape(chart.x_title), escape(chart.y_title));
  for (const Series& series : chart.series) {
    for (const Point& p : series.points) {
      // On a percentile chart the label names the percentile (y); elsewhere the x.
      const std::string x_text = chart.y_nines      ? table_number(p.x)
                                 : !p.label.empty() ? p.label
                                 : categories && p.x >= 0 && p.x < static_cast<double>(chart.x_names.size())
                                     ? chart.x_names[static_cast<std::size_t>(p.x)]
                                     : table_number(p.x);
      const std::string y_text = !chart.y_nines     ? table_number(p.y)
                                 : !p.label.empty() ? p.label
                                                    : nines_text(p.y);
      table += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                           escape(series.name), escape(x_text), escape(y_text),
                           p.low ? table_number(*p.low) : "", p.high ? table_number(*p.high) : "");
    }
  }
  return table + "</tbody></table></details>";
}

}  // namespace

std::string render(const Chart& chart) {
  const std::optional<Extent> extent = extent_of(chart);
  if (!extent) return {};
  const Frame frame = frame_of(chart, *extent);
  const std::string title_id = chart.id + "-title";
  std::string svg = fmt::format(
      R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-labelledby="{}" xmlns="http://www.w3.org/2000/svg">)"
      R"(<title id="{}">{}</title>)",
      kWidth, kHeight, escape(title_id), escape(title_id), escape(chart.title));
  svg += axes_svg(chart, frame);
  std::vector<double> stack_tops(chart.stacked ? chart.x_names.size() : 0, 0.0);
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    svg += fmt::format(R"(<g class="series" data-series="{}">)", escape(chart.series[s].name));
    svg += chart.stacked ? stacked_svg(chart, frame, s, stack_tops) : points_svg(chart, frame, s);
    svg += "</g>";
  }
  svg += "</svg>";
  return fmt::format(R"(<figure id="{}" class="figure"><figcaption>{}</figcaption>{}{}{}</figure>)",
                     escape(chart.id), escape(chart.title), svg, legend_html(chart), data_table(chart));
}

}  // namespace tlscmp::render::svg
