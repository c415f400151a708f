#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "measure/stats.hpp"
#include "report/crr.hpp"
#include "report/datagram.hpp"
#include "report/facts.hpp"
#include "report/json_parts.hpp"
#include "report/report.hpp"
#include "report/rr.hpp"

namespace tlscmp::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json to_json(const measure::Summary& s) {
  return summary_json(s);
}

ordered_json to_json(const measure::SideCost& side, std::uint64_t bytes) {
  return {{"window_us", side.window_us},       {"cpu_user_s", side.cpu_user_s},
          {"cpu_system_s", side.cpu_system_s}, {"cpu_s_per_gib", side.cpu_s_per_gib(bytes)},
          {"core_share", side.core_share()},   {"sndbuf_bytes", side.sndbuf_bytes},
          {"rcvbuf_bytes", side.rcvbuf_bytes}, {"mss_bytes", side.mss_bytes},
          {"congestion", side.congestion},     {"ktls_send", side.ktls_send},
          {"ktls_receive", side.ktls_receive}, {"tls_bytes", side.tls_bytes},
          {"facts", facts_json(side.facts)}};
}

// --repeat auto: the rule, the rounds it took and why it stopped; null without it.
ordered_json auto_repeat_json(const measure::Comparison& c) {
  if (!c.auto_repeat) return nullptr;
  const measure::AutoRepeatOutcome& o = *c.auto_repeat;
  const char* stopped_by = measure::to_string(o.decision.reason);
  return {
      {"ci_target_percent", 100 * o.rule.ci_target},
      {"min_rounds", o.rule.min_rounds},
      {"max_rounds", o.rule.max_rounds},
      {"max_time_s", o.rule.max_time_s > 0 ? ordered_json(o.rule.max_time_s) : ordered_json(nullptr)},
      {"rounds", o.rounds},
      {"stopped_by", *stopped_by != '\0' ? ordered_json(stopped_by)
                     : c.interrupted     ? ordered_json("interrupted")
                                         : ordered_json("error")},
      {"widest_ci_half_width_percent",
       o.decision.widest ? ordered_json(100 * *o.decision.widest) : ordered_json(nullptr)},
      {"widest_variant", o.decision.widest ? ordered_json(o.decision.widest_label) : ordered_json(nullptr)}};
}

ordered_json to_json(const measure::RunResult& run, const measure::TestParameters& parameters) {
  ordered_json streams = json::array();
  const auto intervals_json = [](const std::vector<measure::Interval>& list) {
    ordered_json intervals = json::array();
    for (const measure::Interval& i : list) {
      intervals.push_back({{"start_s", i.start_s},
                           {"end_s", i.end_s},
                           {"bytes", i.bytes},
                           {"mbytes_per_s", i.mbytes_per_s()}});
    }
    return intervals;
  };
  for (const measure::StreamResult& s : run.streams) {
    streams.push_back({{"stream", s.index},
                       {"direction", to_string(s.direction)},
                       {"bytes", s.bytes},
                       {"transfer_us", s.transfer_us},
                       {"sender_us", s.sender_us},
                       {"mbytes_per_s", s.mbytes_per_s()},
                       {"messages", s.messages},
                       {"intervals", intervals_json(s.intervals)}});
  }
  return {{"variant", run.label()},
          {"round", run.round},
          {"warmup", run.warmup},
          {"partial", run.partial},
          {"mode", to_string(run.mode)},
          {"direction", to_string(parameters.direction)},
          {"bytes", run.bytes},
          {"chunk_bytes", parameters.chunk_bytes},
          {"transfer_us", run.transfer_us},
          {"sender_us", run.sender_us},
          {"handshake_us", run.handshake_us},
          {"mbytes_per_s", run.mbytes_per_s()},
          {"messages", run.messages},
          {"payload_bytes", run.payload_bytes},
          {"messages_per_s", run.messages_per_s()},
          {"tls_version", tls_or_null(run.tls.version, run.mode)},
          {"cipher", tls_or_null(run.tls.cipher, run.mode)},
          {"group", tls_or_null(run.tls.group, run.mode)},
          {"certificate_key_type", tls_or_null(run.tls.certificate_key_type, run.mode)},
          {"record_size", run.mode == Mode::tls ? ordered_json(run.tls.record_size) : ordered_json(nullptr)},
          {"client_certificate_key_type", run.tls.client_certificate_key_type.empty()
                                              ? ordered_json(nullptr)
                                              : ordered_json(run.tls.client_certificate_key_type)},
          {"client", to_json(run.client, run.bytes)},
          {"server", to_json(run.server, run.bytes)},
          {"streams", streams},
          {"intervals", intervals_json(run.intervals)}};
}

ordered_json ratio_json(const measure::StreamResults& c) {
  if (!c.tls_over_tcp) return nullptr;
  ordered_json r = report::ratio_json(*c.tls_over_tcp, c.tls_over_tcp_ci);
  r["ci_method"] = ci_method();
  return r;
}

ordered_json to_json(const measure::HandshakeKind& k) {
  return {{"count", k.handshake_us.count},
          {"resumed", k.resumed},
          {"handshake_us", to_json(k.handshake_us)},
          {"tls_us", to_json(k.tls_us)},
          {"bytes_received", to_json(k.bytes_received)},
          {"bytes_sent", to_json(k.bytes_sent)},
          {"client_hello_bytes", to_json(k.client_hello_bytes)},
          {"server_hello_bytes", to_json(k.server_hello_bytes)},
          {"per_second", k.per_second()}};
}

ordered_json to_json(const measure::HandshakeResults& h) {
  return {{"requested", h.requested},
          {"tls_version", h.tls.version},
          {"cipher", h.tls.cipher},
          {"group", h.tls.group},
          {"certificate_key_type", h.tls.certificate_key_type},
          {"full", to_json(h.full)},
          {"resumed", to_json(h.resumed)}};
}

ordered_json handshakes_json(const measure::Comparison& c) {
  const auto* handshakes = c.get<measure::HandshakeResults>();
  return handshakes != nullptr ? to_json(*handshakes) : ordered_json(nullptr);
}

// --compare-groups: a row per group, with its ratios to X25519's row.
ordered_json groups_json(const measure::Comparison& c) {
  const auto* groups = c.get<measure::GroupResults>();
  if (groups == nullptr) return nullptr;
  const measure::HandshakeResults* base = measure::group_baseline(groups->groups);
  ordered_json rows = json::array();
  for (const measure::GroupHandshakes& g : groups->groups) {
    ordered_json row = {{"group", g.group},
                        {"error", g.error.empty() ? ordered_json(nullptr) : ordered_json(g.error)}};
    if (g.results) {
      row.update(to_json(*g.results));
      row["vs_x25519"] = nullptr;
      if (base != nullptr) {
        const measure::GroupRatios r = measure::group_ratios(*g.results, *base);
        row["vs_x25519"] = {
            {"full_per_second", r.full_per_second},       {"resumed_per_second", r.resumed_per_second},
            {"full_tls_us_median", r.full_tls_us_median}, {"resumed_tls_us_median", r.resumed_tls_us_median},
            {"client_hello_bytes", r.client_hello_bytes}, {"server_hello_bytes", r.server_hello_bytes}};
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

ordered_json summary_json(const measure::Summary& s) {
  return {{"count", s.count}, {"min", s.min},       {"median", s.median}, {"max", s.max},
          {"mean", s.mean},   {"stddev", s.stddev}, {"p99", s.p99}};
}

ordered_json ratio_json(const measure::Summary& ratios, const std::optional<measure::Interval95>& ci) {
  ordered_json out = summary_json(ratios);
  out["ci95_low"] = ci ? ordered_json(ci->low) : ordered_json(nullptr);
  out["ci95_high"] = ci ? ordered_json(ci->high) : ordered_json(nullptr);
  return out;
}

ordered_json ratio_json(const std::optional<measure::PairedRatio>& r) {
  if (!r) return nullptr;
  return ratio_json(r->ratio, r->ci);
}

ordered_json latency_json(const measure::LatencySummary& l) {
  return {{"min", l.min},   {"p50", l.p50}, {"p90", l.p90},  {"p99", l.p99},
          {"p999", l.p999}, {"max", l.max}, {"mean", l.mean}};
}

std::string ratio_text(const std::optional<measure::PairedRatio>& r) {
  if (!r) return "-";
  return fmt::format("{:.2f}x", r->ratio.median);
}

std::string ratio_sentence(const char* what, const std::optional<measure::PairedRatio>& r) {
  if (!r) return "";
  std::string text = fmt::format("{} {:.2f}x", what, r->ratio.median);
  if (r->ci) text += fmt::format(" (95% CI {:.2f}x - {:.2f}x)", r->ci->low, r->ci->high);
  return text;
}

ordered_json tls_or_null(const std::string& value, Mode mode) {
  if (mode != Mode::tls) return nullptr;
  return value;
}

std::string ci_method() {
  return "percentile bootstrap of the median over the paired rounds, " +
         std::to_string(measure::kBootstrapResamples) + " resamples";
}

nlohmann::ordered_json test_json(const measure::TestParameters& p) {
  ordered_json modes = json::array();
  for (Mode mode : p.modes)
    modes.push_back(to_string(mode));
  ordered_json variants = json::array();
  for (const std::string& v : p.variants)
    variants.push_back(v);
  return {{"command_line", p.command_line},
          {"host", p.host},
          {"port", p.port},
          {"embedded_server", p.embedded_server},
          {"modes", modes},
          {"variants", variants},
          {"direction", to_string(p.direction)},
          {"bytes", p.bytes},
          {"duration_s", p.duration_s},
          {"chunk_bytes", p.chunk_bytes},
          {"interval_s", p.interval_s},
          {"rounds", p.rounds},
          {"warmup_rounds", p.warmup_rounds},
          {"no_delay", p.no_delay},
          {"verify", p.verify},
          {"tls_version", p.tls_version},
          {"cipher", p.cipher},
          {"groups", p.groups},
          {"record_size", p.record_size},
          {"ktls", p.ktls},
          {"client_certificate", p.client_certificate},
          {"framing", p.framing},
          {"msg_size", p.msg_size},
          {"read_size", p.read_size},
          {"sndbuf_bytes", p.sndbuf_bytes},
          {"rcvbuf_bytes", p.rcvbuf_bytes},
          {"streams", p.streams},
          {"bidir", p.bidir},
          {"packets", p.packets},
          {"rate_bps", p.rate_bps},
          {"gso", p.gso},
          {"handshakes", p.handshakes},
          {"compare_groups", p.compare_groups},
          {"rr_request_bytes", p.rr_request_bytes},
          {"rr_response_bytes", p.rr_response_bytes},
          {"transactions", p.transactions},
          {"rate_tps", p.rate_tps},
          {"kind", to_string(p.kind)},
          {"crr", p.kind == TestKind::crr},
          {"compare_key_types", p.compare_key_types},
          {"crr_close",
           p.kind == TestKind::crr ? ordered_json(p.crr_reset ? "reset" : "fin") : ordered_json(nullptr)},
          {"repeat", p.auto_repeat ? ordered_json("auto") : ordered_json(p.rounds)},
          {"start_at_ns", p.start_at_ns ? ordered_json(*p.start_at_ns) : ordered_json(nullptr)},
          {"max_skew_s", p.start_at_ns ? ordered_json(p.max_skew_s) : ordered_json(nullptr)}};
}

std::string render_json(const measure::Comparison& c) {
  return comparison_json(c).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  if (const auto* streams = c.get<measure::StreamResults>(); streams != nullptr && !streams->runs.empty())
    return to_json(streams->runs.back(), c.parameters);
  for (const ordered_json& list : {rr_runs_json(c), crr_runs_json(c), datagram_runs_json(c)}) {
    if (!list.empty()) return list.back();
  }
  return nullptr;
}

nlohmann::ordered_json comparison_json(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  const measure::Environment& e = c.environment;
  const measure::StreamResults& streams = c.or_empty<measure::StreamResults>();
  ordered_json runs = json::array();
  for (const auto& run : streams.runs)
    runs.push_back(to_json(run, p));

  ordered_json summary = json::object();
  for (const auto& stats : streams.stats) {
    ordered_json over_tcp = nullptr;
    if (stats.over_tcp) {
      over_tcp = report::ratio_json(*stats.over_tcp, stats.over_tcp_ci);
    }
    summary[stats.variant] = {{"mode", to_string(stats.mode)},
                              {"runs", stats.transfer_us.count},
                              {"bytes", to_json(stats.bytes)},
                              {"transfer_us", to_json(stats.transfer_us)},
                              {"sender_us", to_json(stats.sender_us)},
                              {"handshake_us", to_json(stats.handshake_us)},
                              {"mbytes_per_s", to_json(stats.mbytes_per_s)},
                              {"messages_per_s", to_json(stats.messages_per_s)},
                              {"client_cpu_s_per_gib", to_json(stats.client_cpu_s_per_gib)},
                              {"server_cpu_s_per_gib", to_json(stats.server_cpu_s_per_gib)},
                              {"client_core_share", to_json(stats.client_core_share)},
                              {"server_core_share", to_json(stats.server_core_share)},
                              {"over_tcp_transfer_time", over_tcp}};
  }
  summary["tls_over_tcp_transfer_time"] = ratio_json(streams);

  ordered_json out = {
      {"tlscmp_version", e.client_version},
      {"test", test_json(p)},
      {"auto_repeat", auto_repeat_json(c)},
      {"clock_offset_s", c.clock_offset_s ? ordered_json(*c.clock_offset_s) : ordered_json(nullptr)},
      {"environment",
       {{"client",
         {{"tlscmp_version", e.client_version},
          {"tls_library", e.client_tls_library},
          {"cpu_model", e.client_cpu_model},
          {"cpu_features", e.client_cpu_features},
          {"kernel", e.client_kernel},
          {"tcp_available_ulp", e.client_tls_ulps}}},
        {"server",
         {{"tlscmp_version", e.server_version},
          {"tls_library", e.server_tls_library},
          {"cpu_model", e.server_cpu_model},
          {"cpu_features", e.server_cpu_features},
          {"kernel", e.server_kernel},
          {"tcp_available_ulp", e.server_tls_ulps}}}}},
      {"runs", runs},
      {"summary", summary},
      {"handshakes", handshakes_json(c)},
      {"groups", groups_json(c)},
      {"datagram_runs", datagram_runs_json(c)},
      {"datagram_summary", datagram_summary_json(c)},
      {"rr_runs", rr_runs_json(c)},
      {"rr_summary", rr_summary_json(c)},
      {"crr_runs", crr_runs_json(c)},
      {"crr_summary", crr_summary_json(c)},
      {"notes", c.notes},
      {"interrupted", c.interrupted},
      {"error", c.error.empty() ? ordered_json(nullptr) : ordered_json(c.error)},
  };
  return out;
}

}  // namespace tlscmp::report
