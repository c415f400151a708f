#include "report/sweep.hpp"
#include "render/render.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <map>

#include "kinds/kind.hpp"
#include "report/report.hpp"

namespace tlscmp::report {

using render::csv_field;

namespace {

// The point's kind's entry in the table, where sweeps run it.
const kinds::KindSlice* sweep_kind(const results::SweepPoint& point) {
  const kinds::KindSlice& kind = kinds::slice_of(point.comparison.parameters.test.kind);
  return kind.sweep_figures != nullptr ? &kind : nullptr;
}

// The settings of a point but the first (the row), as a column label.
std::string column_label(const results::SweepPoint& point, const std::string& variant) {
  std::string label = variant;
  for (std::size_t i = 1; i < point.settings.size(); ++i) {
    label += fmt::format(" {}={}", point.settings[i].first, point.settings[i].second);
  }
  return label;
}

// The title of the last kind of the table among the points, over its points.
std::string sweep_title(const std::vector<results::SweepPoint>& points) {
  std::string title;
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    std::vector<const measure::Comparison*> of_kind;
    for (const results::SweepPoint& p : points) {
      if (p.comparison.parameters.test.kind == kind->kind) of_kind.push_back(&p.comparison);
    }
    if (!of_kind.empty() && kind->sweep_title != nullptr) title = kind->sweep_title(of_kind);
  }
  return title;
}

void add_column(std::vector<std::string>& columns, const std::string& column) {
  if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
}

}  // namespace

std::string render_sweep_markdown(const std::vector<results::SweepPoint>& points) {
  if (points.empty()) return "no sweep points ran\n";
  // Rows in the order of the first axis; columns in order of first appearance.
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  std::map<std::pair<std::string, std::string>, std::string> cells;
  for (const results::SweepPoint& point : points) {
    const std::string row = point.settings.empty() ? "-" : point.settings.front().second;
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    const kinds::KindSlice* kind = sweep_kind(point);
    if (kind == nullptr) continue;
    const std::optional<Mode> baseline = point.comparison.parameters.baseline();
    for (const kinds::SweepFigures& f : kind->sweep_figures(point.comparison)) {
      const std::string column = column_label(point, f.variant);
      add_column(columns, column);
      cells[{row, column}] = f.cell;
      if (f.ratio_cell.empty() || !baseline) continue;
      const std::string ratio = column_label(point, f.variant + "/" + to_string(*baseline));
      add_column(columns, ratio);
      cells[{row, ratio}] = f.ratio_cell;
    }
  }
  const std::string row_name = points.front().settings.empty() ? "" : points.front().settings.front().first;
  std::string out = sweep_title(points) + "\n\n";
  out += fmt::format("| {} |", row_name);
  for (const std::string& c : columns)
    out += fmt::format(" {} |", c);
  out += "\n|---|";
  for (std::size_t i = 0; i < columns.size(); ++i)
    out += "---|";
  out += "\n";
  for (const std::string& r : rows) {
    out += fmt::format("| {} |", r);
    for (const std::string& c : columns) {
      const auto it = cells.find({r, c});
      out += fmt::format(" {} |", it == cells.end() ? "" : it->second);
    }
    out += "\n";
  }
  return out;
}

// Every kind's columns, in the table's order, each once; then the rows of
// each kind's points in that order, a column a kind does not fill empty.
std::string render_sweep_csv(const std::vector<results::SweepPoint>& points) {
  std::vector<std::string> columns;
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    for (const char* column : kind->sweep_columns)
      add_column(columns, column);
  }
  std::string out;
  const std::vector<std::pair<std::string, std::string>> none;
  const auto& axes = points.empty() ? none : points.front().settings;
  for (const auto& [name, value] : axes)
    out += csv_field(name) + ",";
  out += "variant,mode,runs";
  for (const std::string& column : columns)
    out += "," + column;
  out += "\n";
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    for (const results::SweepPoint& point : points) {
      if (sweep_kind(point) != kind) continue;
      for (const kinds::SweepFigures& f : kind->sweep_figures(point.comparison)) {
        for (const auto& [name, value] : point.settings)
          out += csv_field(value) + ",";
        out += fmt::format("{},{},{}", csv_field(f.variant), to_string(f.mode), f.runs);
        for (const std::string& column : columns) {
          const auto it = f.csv.find(column);
          out += "," + (it != f.csv.end() ? it->second : std::string());
        }
        out += "\n";
      }
    }
  }
  return out;
}

std::string render_sweep_json(const std::vector<results::SweepPoint>& points) {
  nlohmann::ordered_json out = {{"points", nlohmann::ordered_json::array()}};
  for (const results::SweepPoint& point : points) {
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    for (const auto& [name, value] : point.settings)
      settings[name] = value;
    out["points"].push_back({{"settings", settings}, {"comparison", comparison_json(point.comparison)}});
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace tlscmp::report
