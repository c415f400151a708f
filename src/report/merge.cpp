#include "report/merge.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "kinds/kind.hpp"

namespace tlscmp::report {

using nlohmann::ordered_json;

namespace {

// The server's account per client address: its tests, what they moved by
// each kind's amount, and where a kind reads memory, its memory per idle
// connection by variant.
std::string server_account_text(const std::vector<results::ServerView>& server) {
  const std::vector<std::pair<std::string, double>> none;
  const auto& amounts = server.empty() ? none : server.front().amounts;
  const auto width = [](const std::string& name) { return std::max<std::size_t>(name.size(), 11); };
  std::string out =
      fmt::format("\nthe server's account (--results), per client address:\n{:<40} {:>5} {:>4} {:>7} {:>6}",
                  "client", "tests", "ok", "refused", "failed");
  for (const auto& [name, value] : amounts)
    out += fmt::format(" {:>{}}", name, width(name));
  out += "  KiB/conn idle (heap)\n";
  const auto kib = [](const std::optional<double>& bytes) {
    return bytes ? fmt::format("{:.1f}", *bytes / 1024) : std::string("-");
  };
  bool any_memory = false;
  for (const results::ServerView& v : server) {
    std::string memory;
    for (const auto& [kind, variants] : v.memory) {
      for (const auto& [variant, m] : variants) {
        memory += fmt::format("{}{} {} ({})", memory.empty() ? "" : ", ", variant,
                              kib(m.idle_bytes_per_connection), kib(m.idle_heap_bytes_per_connection));
      }
    }
    any_memory = any_memory || !memory.empty();
    out +=
        fmt::format("{:<40} {:>5} {:>4} {:>7} {:>6}", v.client_address, v.tests, v.ok, v.refused, v.failed);
    for (const auto& [name, value] : v.amounts)
      out += fmt::format(" {:>{}.0f}", value, width(name));
    out += fmt::format("  {}\n", memory.empty() ? "-" : memory);
  }
  if (any_memory)
    out +=
        "(KiB/conn: the server's memory per connection with a test's connections idle, over its own before "
        "them, by variant, the median over the tests; tests that ran at once count each other's)\n";
  return out;
}

}  // namespace

std::string render_merge_text(const results::MergeResult& r) {
  std::size_t width = 7;
  for (const results::MergedHost& h : r.hosts)
    width = std::max({width, h.variant.size(), h.host.size()});
  std::string out = fmt::format(
      "the hosts together ({} results):\n", r.hosts.empty() ? 0 : [&] {
        std::vector<std::string> names;
        for (const results::MergedHost& h : r.hosts) {
          if (std::find(names.begin(), names.end(), h.host) == names.end()) names.push_back(h.host);
        }
        return names.size();
      }());
  out += fmt::format("{:<8} {:<{}} {:>5} {:>5} {:>18} {:>14} {}\n", "kind", "variant", width, "hosts", "runs",
                     "total", "rate", "(rate: the hosts' medians added up)");
  for (const results::MergedTotal& t : r.totals) {
    out += fmt::format(
        "{:<8} {:<{}} {:>5} {:>5} {:>18} {:>14}\n", t.kind, t.variant, width, t.hosts, t.runs,
        fmt::format("{:.0f} {}", t.amount, t.amount_unit == "transactions" ? "trans." : t.amount_unit),
        fmt::format("{:.1f} {}", t.rate_sum, t.rate_unit));
  }
  out += fmt::format("\neach host:\n{:<{}} {:<8} {:<{}} {:>5} {:>18} {:>14}\n", "host", width, "kind",
                     "variant", width, "runs", "total", "median rate");
  for (const results::MergedHost& h : r.hosts) {
    out += fmt::format("{:<{}} {:<8} {:<{}} {:>5} {:>18.0f} {:>14.1f}\n", h.host, width, h.kind, h.variant,
                       width, h.runs, h.amount, h.median_rate);
  }
  if (r.has_server_view) out += server_account_text(r.server);
  return out;
}

namespace {

ordered_json or_null(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

// By variant: the server's memory per idle connection, RSS and heap.
ordered_json memory_json(const std::map<std::string, results::ServerView::Memory>& variants) {
  ordered_json out = ordered_json::object();
  for (const auto& [variant, m] : variants) {
    out[variant] = {{"idle_bytes_per_connection", or_null(m.idle_bytes_per_connection)},
                    {"idle_heap_bytes_per_connection", or_null(m.idle_heap_bytes_per_connection)}};
  }
  return out;
}

// One client's account: its tests, each kind's amount, and "KIND_memory"
// for each kind that reads memory (an empty object where it ran none).
ordered_json server_view_json(const results::ServerView& v) {
  ordered_json out = {{"client_address", v.client_address},
                      {"tests", v.tests},
                      {"ok", v.ok},
                      {"refused", v.refused},
                      {"failed", v.failed}};
  for (const auto& [name, value] : v.amounts)
    out[name] = value;
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->results.memory_per == nullptr) continue;
    const auto it = v.memory.find(kind->results.label);
    out[std::string(kind->results.label) + "_memory"] =
        it != v.memory.end() ? memory_json(it->second) : ordered_json::object();
  }
  return out;
}
}  // namespace

std::string render_merge_json(const results::MergeResult& r) {
  ordered_json totals = ordered_json::array();
  for (const results::MergedTotal& t : r.totals) {
    totals.push_back({{"kind", t.kind},
                      {"variant", t.variant},
                      {"hosts", t.hosts},
                      {"runs", t.runs},
                      {"amount", t.amount},
                      {"amount_unit", t.amount_unit},
                      {"rate_sum", t.rate_sum},
                      {"rate_unit", t.rate_unit}});
  }
  ordered_json hosts = ordered_json::array();
  for (const results::MergedHost& h : r.hosts) {
    hosts.push_back({{"host", h.host},
                     {"kind", h.kind},
                     {"variant", h.variant},
                     {"runs", h.runs},
                     {"amount", h.amount},
                     {"median_rate", h.median_rate}});
  }
  ordered_json server = nullptr;
  if (r.has_server_view) {
    server = ordered_json::array();
    for (const results::ServerView& v : r.server) {
      server.push_back(server_view_json(v));
    }
  }
  const ordered_json out = {{"totals", totals}, {"hosts", hosts}, {"server", server}};
  return out.dump(2) + "\n";
}

}  // namespace tlscmp::report
