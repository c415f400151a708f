#include "report/html.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "measure/stats.hpp"
#include "report/svg.hpp"
#include "results/result_file.hpp"

namespace tlscmp::report {
namespace {

using nlohmann::json;
using svg::escape;

// The number at a path of keys, or NaN: as compare and merge read results.
constexpr auto num = results::number_at;

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

const json& object(const json& j, const char* key) {
  static const json empty = json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : empty;
}

const json& list(const json& j, const char* key) {
  static const json empty = json::array();
  return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : empty;
}

// A count for a sentence: 0 where the JSON has none.
int count_of(double v) {
  return std::isfinite(v) ? static_cast<int>(v) : 0;
}

// "95% CI 2.06–3.34, 3 rounds", or with too few rounds for an interval, "1 round, too few for a CI".
std::string ci_words(const json& ratio) {
  const int rounds = count_of(num(ratio, {"count"}));
  const double low = num(ratio, {"ci95_low"});
  const double high = num(ratio, {"ci95_high"});
  if (!std::isfinite(low) || !std::isfinite(high))
    return fmt::format("{} round{}, too few for a CI", rounds, rounds == 1 ? "" : "s");
  return fmt::format("95% CI {:.2f}–{:.2f}, {} rounds", low, high, rounds);
}

bool not_warmup(const json& run) {
  return !run.value("warmup", false);
}

// A runs list's runs that `keep` picks, per variant, in the order the variants first ran.
using VariantRuns = std::vector<std::pair<std::string, std::vector<const json*>>>;
VariantRuns runs_by_variant(const json& runs, bool (*keep)(const json&)) {
  VariantRuns out;
  for (const json& run : runs) {
    if (!keep(run)) continue;
    const std::string variant = str(run, "variant");
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& entry) { return entry.first == variant; });
    if (it == out.end()) it = out.insert(out.end(), {variant, {}});
    it->second.push_back(&run);
  }
  return out;
}

// Neither warm-up nor interrupted: as compare and merge count runs.
constexpr auto counts = results::run_counts;

std::string upper_variant(const std::string& v) {
  std::string out = v;
  const std::size_t dash = out.find('-');
  for (std::size_t i = 0; i < out.size() && i < dash; ++i)
    out[i] = static_cast<char>(std::toupper(out[i]));
  return out;
}

// The mode a result's ratios are against, as its JSON names it ("over_tcp"):
// the first of exactly two modes, else the kind's usual one (tcp; udp for
// datagrams); render::compared_modes says the same of the result it writes.
std::string baseline_of(const json& j, const char* usual) {
  const json* modes = j.contains("test") && j["test"].is_object() && j["test"].contains("modes")
                          ? &j["test"]["modes"]
                          : nullptr;
  if (modes == nullptr || !modes->is_array() || modes->size() != 2 || !(*modes)[0].is_string()) return usual;
  const std::string first = (*modes)[0].get<std::string>();
  const bool datagrams = first == "udp" || first == "dtls";
  return datagrams == (std::string(usual) == "udp") ? first : usual;
}

double median_of(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  return values.empty() ? std::nan("") : measure::summarize(values).median;
}

// The results a page draws: a client result is one, a sweep one per point.
struct Result {
  std::string label;    // series prefix: "" with a single input
  std::string setting;  // a sweep point's settings ("msg-size=1K"), else ""
  const json* j = nullptr;
};

// Builds the page: sections, charts with unique ids.
class Page {
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
          if (point.contains("comparison")) results_.push_back({label, setting, &point["comparison"]});
        }
        sweeps_.push_back(&in);
      } else {
        results_.push_back({label, "", &in.json});
      }
    }
  }

  std::string render() {
    std::string body;
    body += headline_section();
    body += bulk_section();
    body += handshake_section();
    body += rr_section();
    body += crr_section();
    body += datagram_section();
    body += sweep_section();
    body += environment_section();
    return page(body);
  }

 private:
  std::string name(const Result& r, const std::string& what) const {
    std::string out = r.label;
    if (!r.setting.empty()) out += (out.empty() ? "" : " ") + r.setting;
    return out.empty() ? what : out + " " + what;
  }

  std::string chart(svg::Chart c) {
    c.id = fmt::format("chart-{}", ++charts_);
    return svg::render(c);
  }

  // Rounds as categories "1", "2" ...: the most any result has.
  static std::vector<std::string> round_names(int rounds) {
    std::vector<std::string> names;
    for (int r = 1; r <= rounds; ++r)
      names.push_back(std::to_string(r));
    return names;
  }

  // A per-round chart of one figure of a runs list, a series per result and variant.
  std::string per_round(const char* runs_key, const char* field, const std::string& title,
                        const std::string& y_title, bool y_log = false) {
    svg::Chart c;
    c.title = title;
    c.x_title = "round";
    c.y_title = y_title;
    c.y_log = y_log;
    int rounds = 0;
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;  // sweeps have their own chart
      for (const auto& [v, runs] : runs_by_variant(list(*r.j, runs_key), not_warmup)) {
        svg::Series s;
        for (const json* run : runs) {
          const int round = run->value("round", 0);
          rounds = std::max(rounds, round);
          const double value = num(*run, {field});
          if (!std::isfinite(value)) continue;
          s.points.push_back(
              {static_cast<double>(round - 1), value, std::nullopt, std::nullopt,
               fmt::format("round {}{}", round, run->value("partial", false) ? " (partial)" : "")});
        }
        if (s.points.empty()) continue;
        // The median of the runs that count, as the JSON's summary has it: not a partial one.
        std::vector<double> ys;
        for (const svg::Point& p : s.points)
          if (p.label.find("(partial)") == std::string::npos) ys.push_back(p.y);
        const double median = median_of(ys);
        s.name = std::isfinite(median) ? fmt::format("{} (median {})", name(r, v), svg::tick_text(median))
                                       : name(r, v) + " (partial only)";
        c.series.push_back(std::move(s));
      }
    }
    c.x_names = round_names(rounds);
    return chart(std::move(c));
  }

  // The headline's sentences of a result's ratios: each variant of another
  // mode against the baseline (bulk, rr, crr), and datagrams.
  static std::vector<std::string> ratio_sentences(const json& j) {
    const auto ci = ci_words;
    std::vector<std::string> sentences;
    const std::string base = baseline_of(j, "tcp");
    const std::string over = "over_" + base;
    const std::string upper_base = upper_variant(base);
    for (const auto& [v, s] : object(j, "summary").items()) {
      const json& ratio = object(s, (over + "_transfer_time").c_str());
      if (ratio.empty()) continue;
      sentences.push_back(fmt::format("{} took {:.2f}x as long as {}: {}.", upper_variant(v),
                                      num(ratio, {"median"}), upper_base, ci(ratio)));
    }
    for (const auto& [v, s] : object(j, "rr_summary").items()) {
      if (object(s, over.c_str()).empty()) continue;
      const json& ratio = object(object(s, over.c_str()), "transactions_per_s");
      sentences.push_back(fmt::format(
          "{} ran {:.2f}x the transactions per second of {} ({}), with {:.2f}x its median latency.",
          upper_variant(v), num(ratio, {"median"}), upper_base, ci(ratio),
          num(s, {over.c_str(), "p50_us", "median"})));
    }
    for (const auto& [v, s] : object(j, "crr_summary").items()) {
      if (object(s, over.c_str()).empty()) continue;
      const json& ratio = object(object(s, over.c_str()), "connections_per_s");
      sentences.push_back(fmt::format("{} made {:.2f}x the connections per second of {}: {}.",
                                      upper_variant(v), num(ratio, {"median"}), upper_base, ci(ratio)));
    }
    const std::string datagram_base = baseline_of(j, "udp");
    const std::string datagram_other = datagram_base == "udp" ? "dtls" : "udp";
    const std::string key = datagram_other + "_over_" + datagram_base + "_received_per_s";
    if (const double ratio = num(j, {"datagram_summary", key.c_str()}); std::isfinite(ratio)) {
      sentences.push_back(fmt::format(
          "{} delivered {:.2f}x the datagrams per second of {} (the ratio of their medians, {} rounds).",
          upper_variant(datagram_other), ratio, upper_variant(datagram_base),
          count_of(num(j, {"datagram_summary", datagram_other.c_str(), "runs"}))));
    }
    return sentences;
  }

  std::string headline_section() {
    std::string items;
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      const json& j = *r.j;
      std::vector<std::string> sentences = ratio_sentences(j);
      if (j.contains("handshakes") && j["handshakes"].is_object()) {
        const json& h = j["handshakes"];
        sentences.push_back(fmt::format(
            "A full TLS handshake took {} µs (median of {}){}.",
            svg::tick_text(num(h, {"full", "handshake_us", "median"})), count_of(num(h, {"full", "count"})),
            std::isfinite(num(h, {"resumed", "handshake_us", "median"}))
                ? fmt::format("; a resumed one {} µs",
                              svg::tick_text(num(h, {"resumed", "handshake_us", "median"})))
                : ""));
      }
      const json* fastest = nullptr;
      for (const json& group : list(j, "groups")) {
        const double median = num(group, {"full", "handshake_us", "median"});
        if (std::isfinite(median) &&
            (fastest == nullptr || median < num(*fastest, {"full", "handshake_us", "median"})))
          fastest = &group;
      }
      if (fastest != nullptr) {
        sentences.push_back(
            fmt::format("Of {} key exchange groups, {} made the quickest full handshake: {} µs (median).",
                        list(j, "groups").size(), str(*fastest, "group"),
                        svg::tick_text(num(*fastest, {"full", "handshake_us", "median"}))));
      }
      if (sentences.empty()) sentences.push_back("No TLS/TCP ratio: a single mode ran, or no run finished.");
      std::string partial;
      if (j.value("interrupted", false) ||
          std::any_of(list(j, "runs").begin(), list(j, "runs").end(),
                      [](const json& run) { return run.value("partial", false); })) {
        partial =
            R"( <strong class="partial">Partial: the run was interrupted; this shows what finished.</strong>)";
      }
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

  bool any(const char* key) const {
    return std::any_of(results_.begin(), results_.end(),
                       [&](const Result& r) { return r.setting.empty() && !list(*r.j, key).empty(); });
  }

  std::string bulk_section() {
    if (!any("runs")) return {};
    std::string out = R"(<section id="bulk"><h2>Bulk transfer</h2>)";
    out += per_round("runs", "mbytes_per_s", "Throughput per round", "throughput (MB/s, 10^6 B/s)");
    out += ratio_per_round();
    out += cpu_per_gib();
    out += intervals();
    return out + "</section>";
  }

  // The paired TLS/TCP transfer time per byte, round by round.
  std::string ratio_per_round() {
    svg::Chart c;
    c.title = "TLS/TCP transfer time per round (paired)";
    c.x_title = "round";
    c.y_title = "TLS time / TCP time";
    c.reference = 1.0;
    c.reference_label = "as fast as TCP";
    int rounds = 0;
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      const std::string base = baseline_of(*r.j, "tcp");
      std::map<int, double> tcp;
      for (const json& run : list(*r.j, "runs")) {
        if (counts(run) && str(run, "variant") == base)
          tcp[run.value("round", 0)] = num(run, {"transfer_us"}) / num(run, {"bytes"});
      }
      std::map<std::string, svg::Series> by_variant;
      for (const json& run : list(*r.j, "runs")) {
        const std::string v = str(run, "variant");
        const int round = run.value("round", 0);
        if (!counts(run) || str(run, "mode") == base || !tcp.count(round)) continue;
        rounds = std::max(rounds, round);
        const double ratio = num(run, {"transfer_us"}) / num(run, {"bytes"}) / tcp[round];
        by_variant[v].points.push_back({static_cast<double>(round - 1), ratio, std::nullopt, std::nullopt,
                                        fmt::format("round {}", round)});
      }
      for (auto& [v, s] : by_variant) {
        const json& ratio =
            object(object(object(*r.j, "summary"), v.c_str()), ("over_" + base + "_transfer_time").c_str());
        s.name = !ratio.empty() ? fmt::format("{} (median {:.2f}x, {})", name(r, v + "/" + base),
                                              num(ratio, {"median"}), ci_words(ratio))
                                : name(r, v + "/" + base);
        c.series.push_back(std::move(s));
      }
    }
    c.x_names = round_names(rounds);
    return chart(std::move(c));
  }

  // CPU seconds per GiB moved, per side and variant, user and system stacked.
  std::string cpu_per_gib() {
    svg::Chart c;
    c.title = "CPU per GiB moved (median over rounds), user and system stacked";
    c.x_title = "variant and side";
    c.y_title = "CPU (s/GiB)";
    c.stacked = true;
    svg::Series user{"user", {}, false};
    svg::Series system{"system", {}, false};
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      for (const auto& [v, runs] : runs_by_variant(list(*r.j, "runs"), counts)) {
        for (const char* side : {"client", "server"}) {
          std::vector<double> u;
          std::vector<double> s;
          for (const json* run : runs) {
            const double gib = num(*run, {"bytes"}) / double(1 << 30);
            u.push_back(num(*run, {side, "cpu_user_s"}) / gib);
            s.push_back(num(*run, {side, "cpu_system_s"}) / gib);
          }
          const double x = static_cast<double>(c.x_names.size());
          c.x_names.push_back(name(r, v + " " + side));
          user.points.push_back({x, median_of(u), std::nullopt, std::nullopt, c.x_names.back()});
          system.points.push_back({x, median_of(s), std::nullopt, std::nullopt, c.x_names.back()});
        }
      }
    }
    c.series = {std::move(user), std::move(system)};
    return chart(std::move(c));
  }

  // -i: throughput per interval over each run, or each stream of it.
  std::string intervals() {
    svg::Chart c;
    c.title = "Throughput over time (-i), per run and stream";
    c.x_title = "time from the run's start (s)";
    c.y_title = "throughput (MB/s)";
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      for (const json& run : list(*r.j, "runs")) {
        if (run.value("warmup", false)) continue;
        const std::string run_name =
            name(r, fmt::format("{} round {}", str(run, "variant"), run.value("round", 0)));
        const auto add = [&](const json& intervals, const std::string& series_name) {
          svg::Series s{series_name, {}, true};
          for (const json& i : intervals)
            s.points.push_back({num(i, {"end_s"}), num(i, {"mbytes_per_s"}), std::nullopt, std::nullopt, {}});
          if (!s.points.empty()) c.series.push_back(std::move(s));
        };
        if (list(run, "streams").size() > 1) {
          for (const json& stream : list(run, "streams"))
            add(list(stream, "intervals"), fmt::format("{} stream {}", run_name, stream.value("stream", 0)));
        } else {
          add(list(run, "intervals"), run_name);
        }
      }
    }
    return chart(std::move(c));
  }

  std::string handshake_section() {
    svg::Chart c;
    c.title = "Handshake time (median, min–max over runs)";
    c.x_title = "variant";
    c.y_title = "handshake (µs)";
    c.y_log = true;
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      svg::Series s{name(r, "handshake"), {}, false};
      const auto add = [&](const std::string& what, const json& stat) {
        if (!std::isfinite(num(stat, {"median"}))) return;
        c.x_names.push_back(name(r, what));
        s.points.push_back({static_cast<double>(c.x_names.size() - 1), num(stat, {"median"}),
                            num(stat, {"min"}), num(stat, {"max"}), c.x_names.back()});
      };
      for (const auto& [v, summary] : object(*r.j, "summary").items())
        if (summary.is_object()) add(v, summary.value("handshake_us", json()));
      for (const json& group : list(*r.j, "groups")) {
        add(str(group, "group") + " full", object(group, "full").value("handshake_us", json()));
        add(str(group, "group") + " resumed", object(group, "resumed").value("handshake_us", json()));
      }
      if (r.j->contains("handshakes") && (*r.j)["handshakes"].is_object()) {
        add("full", object(object(*r.j, "handshakes"), "full").value("handshake_us", json()));
        add("resumed", object(object(*r.j, "handshakes"), "resumed").value("handshake_us", json()));
      }
      if (!s.points.empty()) c.series.push_back(std::move(s));
    }
    if (c.series.empty()) return {};
    return R"(<section id="handshakes"><h2>Handshakes</h2>)" + chart(std::move(c)) + "</section>";
  }

  std::string rr_section() {
    if (!any("rr_runs")) return {};
    std::string out = R"(<section id="rr"><h2>Request/response</h2>)";
    out += per_round("rr_runs", "transactions_per_s", "Transactions per second per round", "transactions/s");
    svg::Chart c;
    c.title = "Latency by percentile (median over rounds of each; the top point is the max)";
    c.x_title = "latency (µs, log scale)";
    c.y_title = "percentile";
    c.x_log = true;
    c.y_nines = true;
    const std::vector<std::pair<const char*, double>> percentiles{
        {"min", 0}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}, {"max", 0.9997}};
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      for (const auto& [v, runs] : runs_by_variant(list(*r.j, "rr_runs"), counts)) {
        svg::Series s{name(r, v), {}, true};
        for (const auto& [key, p] : percentiles) {
          std::vector<double> values;
          for (const json* run : runs)
            values.push_back(num(*run, {"latency_us", key}));
          s.points.push_back({median_of(values), -std::log10(1 - p), std::nullopt, std::nullopt, key});
        }
        c.series.push_back(std::move(s));
      }
    }
    out += chart(std::move(c));
    out += per_round("rr_runs", "handshake_us", "Handshake before each run's transactions", "handshake (µs)");
    return out + "</section>";
  }

  std::string crr_section() {
    if (!any("crr_runs")) return {};
    std::string out = R"(<section id="crr"><h2>Connection per transaction</h2>)";
    out += per_round("crr_runs", "connections_per_s", "Connections per second per round", "connections/s");
    svg::Chart c;
    c.title = "Each phase of a connection: p50 (median, min–max over rounds)";
    c.x_title = "phase";
    c.y_title = "p50 (µs, log scale)";
    c.y_log = true;
    c.x_names = {"connect", "handshake", "response", "total"};
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      for (const auto& [v, s] : object(*r.j, "crr_summary").items()) {
        if (!s.is_object() || !s.contains("mode")) continue;
        svg::Series series{name(r, v), {}, false};
        for (std::size_t i = 0; i < c.x_names.size(); ++i) {
          const std::string key = c.x_names[i] + "_p50_us";
          const json& stat = s.value(key, json());
          if (!std::isfinite(num(stat, {"median"}))) continue;
          series.points.push_back({static_cast<double>(i), num(stat, {"median"}), num(stat, {"min"}),
                                   num(stat, {"max"}), c.x_names[i]});
        }
        c.series.push_back(std::move(series));
      }
    }
    out += chart(std::move(c));
    return out + "</section>";
  }

  std::string datagram_section() {
    if (!any("datagram_runs")) return {};
    std::string out = R"(<section id="datagrams"><h2>Datagrams</h2>)";
    out +=
        per_round("datagram_runs", "received_per_s", "Datagrams received per second per round", "received/s");
    svg::Chart loss;
    loss.title = "Loss per sender, every round";
    loss.x_title = "sender";
    loss.y_title = "lost (%)";
    svg::Chart drops;
    drops.title = "Lost datagrams and the receiver kernel's drops per round";
    drops.x_title = "round";
    drops.y_title = "datagrams";
    int senders = 0;
    int rounds = 0;
    for (const Result& r : results_) {
      if (!r.setting.empty()) continue;
      std::map<std::string, svg::Series> by_variant;
      std::map<std::string, svg::Series> lost;
      std::map<std::string, svg::Series> kernel;
      for (const json& run : list(*r.j, "datagram_runs")) {
        if (!counts(run)) continue;
        const std::string v = str(run, "variant");
        const int round = run.value("round", 0);
        rounds = std::max(rounds, round);
        for (const json& sender : list(run, "senders")) {
          const int index = sender.value("sender", 0);
          senders = std::max(senders, index + 1);
          by_variant[v].points.push_back({static_cast<double>(index), num(sender, {"loss_percent"}),
                                          std::nullopt, std::nullopt,
                                          fmt::format("sender {} round {}", index, round)});
        }
        lost[v].points.push_back(
            {static_cast<double>(round - 1), num(run, {"lost"}), std::nullopt, std::nullopt, {}});
        kernel[v].points.push_back(
            {static_cast<double>(round - 1), num(run, {"kernel_drops"}), std::nullopt, std::nullopt, {}});
      }
      for (auto& [v, s] : by_variant) {
        s.name = name(r, v);
        loss.series.push_back(std::move(s));
      }
      for (auto& [v, s] : lost) {
        s.name = name(r, v + " lost");
        drops.series.push_back(std::move(s));
        kernel[v].name = name(r, v + " kernel drops");
        drops.series.push_back(std::move(kernel[v]));
      }
    }
    for (int i = 0; i < senders; ++i)
      loss.x_names.push_back(std::to_string(i));
    drops.x_names = round_names(rounds);
    out += chart(std::move(loss));
    out += chart(std::move(drops));
    return out + "</section>";
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
    out += figure("Throughput against the swept setting (median, min–max)", "throughput (MB/s)", "summary",
                  "mbytes_per_s", false);
    out += figure("Messages per second against the swept setting", "messages/s (log scale)", "summary",
                  "messages_per_s", true);
    out += figure("TLS/TCP transfer time against the swept setting (median, 95% CI)", "TLS time / TCP time",
                  "summary", "over_tcp_transfer_time", false, "ci95_low", "ci95_high");
    out += figure("Transactions per second against the swept setting", "transactions/s", "rr_summary",
                  "transactions_per_s", false);
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
