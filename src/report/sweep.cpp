#include "report/sweep.hpp"
#include "render/render.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <map>

#include "report/report.hpp"

namespace tlscmp::report {

using render::csv_field;

namespace {

// 26800000 -> "26,800,000", as the seed tables write numbers; small values
// (a few 1 GiB messages a second) keep a decimal.
std::string thousands(double value) {
  if (value < 100) return fmt::format("{:.1f}", value);
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

bool has_transactions(const std::vector<results::SweepPoint>& points) {
  for (const auto& p : points) {
    if (p.comparison.get<measure::RrResults>() != nullptr ||
        p.comparison.get<measure::FlowsResults>() != nullptr)
      return true;
  }
  return false;
}

bool has_messages(const std::vector<results::SweepPoint>& points) {
  for (const auto& p : points) {
    if (p.comparison.parameters.test.stream.msg_size > 0) return true;
  }
  return false;
}

// The settings of a point but the first (the row), as a column label.
std::string column_label(const results::SweepPoint& point, const std::string& variant) {
  std::string label = variant;
  for (std::size_t i = 1; i < point.settings.size(); ++i) {
    label += fmt::format(" {}={}", point.settings[i].first, point.settings[i].second);
  }
  return label;
}

// Many-connection points: transactions per second (p50 / p99) and the
// server's memory per idle connection; TLS against TCP.
void add_flows_cells(const std::vector<results::SweepPoint>& points, std::vector<std::string>& columns,
                     std::map<std::pair<std::string, std::string>, std::string>& cells) {
  for (const results::SweepPoint& point : points) {
    const std::string row = point.settings.empty() ? "-" : point.settings.front().second;
    for (const measure::FlowsStats& s : point.comparison.or_empty<measure::FlowsResults>().stats) {
      const std::string column = column_label(point, s.variant);
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
      cells[{row, column}] = fmt::format(
          "{} ({:.0f} / {:.0f} us), server {}", thousands(s.transactions_per_s.median), s.p50_us.median,
          s.p99_us.median,
          s.server_idle_rss ? fmt::format("{:.1f} KiB/conn", s.server_idle_rss->median / 1024) : "?");
      if (s.transactions_per_s_over_baseline) {
        const std::string ratio = column_label(point, s.variant + "/tcp");
        if (std::find(columns.begin(), columns.end(), ratio) == columns.end()) columns.push_back(ratio);
        cells[{row, ratio}] = fmt::format("{:.2f}x", s.transactions_per_s_over_baseline->ratio.median);
      }
    }
  }
}

}  // namespace

std::string render_sweep_markdown(const std::vector<results::SweepPoint>& points) {
  if (points.empty()) return "no sweep points ran\n";
  const bool messages = has_messages(points);
  const bool transactions = has_transactions(points);
  // Rows in the order of the first axis; columns in order of first appearance.
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  std::map<std::pair<std::string, std::string>, std::string> cells;
  for (const results::SweepPoint& point : points) {
    const std::string row = point.settings.empty() ? "-" : point.settings.front().second;
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    for (const measure::StreamStats& s : point.comparison.or_empty<measure::StreamResults>().stats) {
      const std::string column = column_label(point, s.variant);
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
      const measure::Summary& m = messages ? s.messages_per_s : s.mbytes_per_s;
      cells[{row, column}] = messages ? fmt::format("{} - {}", thousands(m.min), thousands(m.max))
                                      : fmt::format("{:.1f} - {:.1f}", m.min, m.max);
    }
    for (const measure::RrStats& s : point.comparison.or_empty<measure::RrResults>().stats) {
      const std::string column = column_label(point, s.variant);
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
      cells[{row, column}] = fmt::format("{} ({:.0f} / {:.0f} us)", thousands(s.transactions_per_s.median),
                                         s.p50_us.median, s.p99_us.median);
      // TLS against the same rounds' TCP (a sweep's --mode is tcp, tls or both): what the question is about.
      if (s.transactions_per_s_over_baseline && s.p50_over_baseline) {
        const std::string ratio = column_label(point, s.variant + "/tcp");
        if (std::find(columns.begin(), columns.end(), ratio) == columns.end()) columns.push_back(ratio);
        cells[{row, ratio}] =
            fmt::format("{:.2f}x (p50 {:.2f}x)", s.transactions_per_s_over_baseline->ratio.median,
                        s.p50_over_baseline->ratio.median);
      }
    }
  }
  add_flows_cells(points, columns, cells);
  const std::string row_name = points.front().settings.empty() ? "" : points.front().settings.front().first;
  std::string out =
      transactions
          ? std::string(
                "transactions per second (p50 / p99 latency), medians over the rounds; tls/tcp: "
                "transactions per second over TCP's (and p50 latency), paired by round\n\n")
          : fmt::format("{} per second, min - max over the rounds\n\n", messages ? "messages" : "MB");
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

namespace {

// The rows of request/response and many-connection points: the bulk columns
// empty, the transaction figures after them.
template <typename Results>
void add_transaction_rows(const std::vector<results::SweepPoint>& points, const Results&, std::string& out) {
  for (const results::SweepPoint& point : points) {
    for (const auto& s : point.comparison.or_empty<Results>().stats) {
      for (const auto& [name, value] : point.settings)
        out += csv_field(value) + ",";
      // The bulk columns stay empty; the rr figures follow them.
      out += fmt::format("{},{},{},,,,,,,,,{},{},{},{:.1f},{:.3f},{:.3f},{}\n", csv_field(s.variant),
                         to_string(s.mode), s.transactions_per_s.count,
                         s.transactions_per_s_over_baseline
                             ? fmt::format("{:.4f}", s.transactions_per_s_over_baseline->ratio.median)
                             : "",
                         s.transactions_per_s_over_baseline && s.transactions_per_s_over_baseline->ci
                             ? fmt::format("{:.4f}", s.transactions_per_s_over_baseline->ci->low)
                             : "",
                         s.transactions_per_s_over_baseline && s.transactions_per_s_over_baseline->ci
                             ? fmt::format("{:.4f}", s.transactions_per_s_over_baseline->ci->high)
                             : "",
                         s.transactions_per_s.median, s.p50_us.median, s.p99_us.median,
                         s.p50_over_baseline ? fmt::format("{:.4f}", s.p50_over_baseline->ratio.median) : "");
    }
  }
}

}  // namespace

std::string render_sweep_csv(const std::vector<results::SweepPoint>& points) {
  std::string out;
  const std::vector<std::pair<std::string, std::string>> none;
  const auto& axes = points.empty() ? none : points.front().settings;
  for (const auto& [name, value] : axes)
    out += csv_field(name) + ",";
  out +=
      "variant,mode,runs,bytes_median,mbytes_per_s_min,mbytes_per_s_median,mbytes_per_s_max,"
      "messages_per_s_min,messages_per_s_median,messages_per_s_max,transfer_us_median,"
      "over_tcp_median,over_tcp_ci95_low,over_tcp_ci95_high,"
      "transactions_per_s_median,p50_us_median,p99_us_median,p50_over_tcp_median\n";
  for (const results::SweepPoint& point : points) {
    for (const measure::StreamStats& s : point.comparison.or_empty<measure::StreamResults>().stats) {
      for (const auto& [name, value] : point.settings)
        out += csv_field(value) + ",";
      out += fmt::format(
          "{},{},{},{:.0f},{:.3f},{:.3f},{:.3f},{:.1f},{:.1f},{:.1f},{:.3f},{},{},{},,,,\n",
          csv_field(s.variant), to_string(s.mode), s.transfer_us.count, s.bytes.median, s.mbytes_per_s.min,
          s.mbytes_per_s.median, s.mbytes_per_s.max, s.messages_per_s.min, s.messages_per_s.median,
          s.messages_per_s.max, s.transfer_us.median,
          s.over_baseline ? fmt::format("{:.4f}", s.over_baseline->ratio.median) : "",
          s.over_baseline && s.over_baseline->ci ? fmt::format("{:.4f}", s.over_baseline->ci->low) : "",
          s.over_baseline && s.over_baseline->ci ? fmt::format("{:.4f}", s.over_baseline->ci->high) : "");
    }
  }
  add_transaction_rows(points, measure::RrResults{}, out);
  add_transaction_rows(points, measure::FlowsResults{}, out);
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
