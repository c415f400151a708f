#pragma once

// Charts as inline SVG, drawn from numbers: scales, ticks, axes, points,
// lines and error bars, each chart with a title, labelled axes and its data
// as a table beside it. Pure functions; all text is escaped, so a result file
// cannot put markup into a page.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tlscmp::render::svg {

// Text for HTML and SVG: & < > " ' escaped.
std::string escape(const std::string& text);

// A map from data to pixels, linear or logarithmic (base 10).
struct Scale {
  double d0 = 0;  // domain
  double d1 = 1;
  double r0 = 0;  // range, pixels
  double r1 = 1;
  bool log = false;

  double operator()(double value) const;
  // Tick values inside the domain: 1-2-5 steps (about `target` of them), or
  // on a log scale the powers of ten (with 2 and 5 between where few).
  std::vector<double> ticks(int target = 6) const;
};

// A linear scale whose domain is [lo, hi] widened to round tick values; with
// from_zero, the domain starts at 0 (or ends there, for negative data).
Scale linear_scale(double lo, double hi, double r0, double r1, bool from_zero);
// A log scale over [lo, hi] (both > 0), widened to powers of ten.
Scale log_scale(double lo, double hi, double r0, double r1);

// 1-2-5 steps between lo and hi, about target of them.
std::vector<double> nice_ticks(double lo, double hi, int target);

// A tick's text: 0.25, 12, 1.5k, 2M, 3G; the unit goes on the axis title.
std::string tick_text(double value);

// Colours that colour-blind readers tell apart (Okabe and Ito), and a marker
// shape per series, so that print in grey still separates them.
const std::string& series_colour(std::size_t index);

struct Point {
  double x = 0;
  double y = 0;
  std::optional<double> low;  // an error bar: the CI or min-max
  std::optional<double> high;
  std::string label;  // for the data table: "round 3"
};

struct Series {
  Series(std::string name_ = {}, std::vector<Point> points_ = {}, bool line_ = false)
      : name(std::move(name_)), points(std::move(points_)), line(line_) {}

  std::string name;
  std::vector<Point> points;
  bool line = false;  // join the points (intervals, CDFs, sweeps)
  // What the series is of, for its colour: a variant ("tcp", "tls", a
  // suite), which a page gives one colour on every chart; "": by position.
  std::string key;
  // Its colour and marker shape, where set (a page's, by key and by result
  // file); else by the series' position in the chart.
  std::optional<std::size_t> colour;
  std::optional<std::size_t> shape;
};

struct Chart {
  std::string id;  // unique in the page: "bulk-throughput-1"
  std::string title;
  std::string x_title;  // with the unit: "round", "time (s)", "latency (µs)"
  std::string y_title;
  bool x_log = false;
  bool y_log = false;
  bool y_from_zero = true;
  // Names for x = 0, 1, 2 ... instead of numbers (rounds, settings).
  std::vector<std::string> x_names;
  // y ticks as percentiles on a "nines" axis: y holds -log10(1 - p).
  bool y_nines = false;
  // Bars, the series stacked in order on each x (user and system CPU),
  // instead of points; needs x_names.
  bool stacked = false;
  // A horizontal reference line (the ratio 1, a median) and its label.
  std::optional<double> reference;
  std::string reference_label;
  std::vector<Series> series;
};

// The chart as a <figure>: the SVG (role img, titled), a legend, and a
// collapsed <details> table of every point. Empty if no series has a point.
std::string render(const Chart& chart);

}  // namespace tlscmp::render::svg
