// The crr kind's part of the reports: text, -J and CSV (its table entry
// points at them; report/ lays them out).

#include "kinds/crr/crr.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "kinds/unit_split.hpp"
#include "render/facts.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {

using render::ci_method;
using render::csv_field;
using render::facts_json;
using render::facts_runs;
using render::format_bytes;
using render::latency_json;
using render::pairs_text;
using render::ratio_json;
using render::ratio_sentence;
using render::ratio_text;
using render::render_notable;
using render::round_label;
using render::rounds_text;
using render::summary_json;
using render::text_or_null;
using render::tls_or_null;

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json side_json(const CrrRun& run, const measure::SideCost& side) {
  return {{"cpu_s", side.cpu_s()},
          {"cpu_us_per_connection", run.cpu_us_per_connection(side)},
          {"core_share", side.core_share()},
          {"transaction_calibration", transaction_calibration_json(side.transaction_calibration)},
          {"facts", facts_json(side.facts)}};
}

ordered_json run_json(const CrrRun& run, const measure::TestParameters& p) {
  const bool tls = is_tls_stream(run.mode);
  ordered_json failures = json::object();
  for (const auto& [cause, count] : run.failures)
    failures[cause] = count;
  return {{"variant", run.label()},
          {"round", run.round},
          {"warmup", run.warmup},
          {"partial", run.partial},
          {"mode", to_string(run.mode)},
          {"resumption", run.resumption},
          {"key_type", run.key_type.empty() ? ordered_json(nullptr) : ordered_json(run.key_type)},
          {"request_bytes", p.test.rr.request_bytes},
          {"response_bytes", p.test.rr.response_bytes},
          {"connectors", run.connectors},
          {"connections", run.connections},
          {"failed", run.failed},
          {"failures", failures},
          {"resumed", tls ? ordered_json(run.resumed) : ordered_json(nullptr)},
          {"resumption_refused", tls && run.resumption ? ordered_json(run.refused) : ordered_json(nullptr)},
          {"resumed_by", run.resumed_by.empty() ? ordered_json(nullptr) : ordered_json(run.resumed_by)},
          {"elapsed_us", run.elapsed_us},
          {"connections_per_s", run.connections_per_s()},
          {"connect_us", latency_json(run.connect)},
          {"handshake_us", tls ? latency_json(run.handshake) : ordered_json(nullptr)},
          {"response_us", latency_json(run.response)},
          {"total_us", latency_json(run.total)},
          {"bytes_sent_per_connection", run.bytes_sent},
          {"bytes_received_per_connection", run.bytes_received},
          {"tls_version", tls_or_null(run.tls.version, run.mode)},
          {"cipher", tls_or_null(run.tls.cipher, run.mode)},
          {"group", tls_or_null(run.tls.group, run.mode)},
          {"tls_library", text_or_null(run.tls.library)},
          {"server_tls_library", text_or_null(run.tls.server_library)},
          {"certificate_key_type", tls_or_null(run.tls.certificate_key_type, run.mode)},
          {"client", side_json(run, run.client)},
          // An interrupted run never heard the server's account.
          {"server", run.partial ? ordered_json(nullptr) : side_json(run, run.server)},
          {"server_connections", render::value_or_null(run.server_connections)},
          {"server_resumed", tls ? render::value_or_null(run.server_resumed) : ordered_json(nullptr)},
          {"time_wait_before", render::value_or_null(run.time_wait_before)},
          {"time_wait_after", render::value_or_null(run.time_wait_after)}};
}

std::string p50_or_dash(const measure::LatencySummary& l) {
  return l.count > 0 ? fmt::format("{:.1f}", l.p50) : "-";
}

std::string time_wait_text(const std::optional<std::uint64_t>& value) {
  return value ? std::to_string(*value) : "?";
}

}  // namespace

std::string render_crr_header(const measure::TestParameters& p) {
  const std::string amount = p.test.rr.transactions > 0
                                 ? fmt::format("{} connections in all", p.test.rr.transactions)
                                 : fmt::format("{:g} s", p.test.duration_s());
  return fmt::format(
      "connection per transaction: connect, TLS handshake, a request of {} and a response of {}, close; "
      "{} connector{}, {} per run, {}{}\n"
      "(the client closes with SO_LINGER 0, a reset: no TIME_WAIT, so a long run keeps its ephemeral "
      "ports)\n",
      format_bytes(p.test.rr.request_bytes), format_bytes(p.test.rr.response_bytes), p.test.streams,
      p.test.streams == 1 ? "" : "s", amount, rounds_text(p),
      p.warmup_rounds > 0 ? fmt::format(" after {} warm-up", p.warmup_rounds) : "",
      (p.test.crr.close == spec::Close::reset)
          ? "(the client closes with SO_LINGER 0, a reset: no TIME_WAIT, so a long run keeps its ports)"
          : "(--close fin: the client closes first and keeps each port in TIME_WAIT for 60 s)");
}

namespace {

// Each crr run, a line, then its notable facts, failures and refused resumptions.
std::string render_crr_run_lines(const measure::Comparison& c, const CrrResults& crr, std::size_t width) {
  std::string out;
  out += fmt::format(
      "\n{:>5} {:<{}} {:>11} {:>8} {:>9} {:>10} {:>12} {:>11} {:>9} {:>9} {:>9} {:>17} {:>8} {:>6}\n",
      "round", "variant", width, "connections", "time_s", "conn/s", "connect_us", "handshake_us",
      "response_us", "total_us", "p99_us", "max_us", "CPU us/conn c/s", "resumed", "failed");
  out += fmt::format("{:>5} {:<{}} {:>11} {:>8} {:>9} {:>10} {:>12} {:>11} {:>9}\n", "", "", width, "", "",
                     "", "p50", "p50", "p50", "p50");
  for (const CrrRun& run : crr.runs) {
    out += fmt::format(
        "{:>5} {:<{}} {:>11} {:>8.2f} {:>9.0f} {:>10} {:>12} {:>11} {:>9} {:>9.1f} {:>9.1f} {:>17} {:>8} "
        "{:>6}\n",
        round_label(run), run.label(), width, run.connections, run.elapsed_us / 1e6, run.connections_per_s(),
        p50_or_dash(run.connect), p50_or_dash(run.handshake), p50_or_dash(run.response),
        p50_or_dash(run.total), run.total.p99, run.total.max,
        fmt::format(
            "{:.1f} / {}", run.cpu_us_per_connection(run.client),
            run.partial ? std::string("-") : fmt::format("{:.1f}", run.cpu_us_per_connection(run.server))),
        is_tls_stream(run.mode) ? std::to_string(run.resumed) : "-", run.failed);
  }
  if (c.parameters.warmup_rounds > 0) out += "(w: warm-up, left out of the statistics)\n";
  if (c.interrupted) out += "(*: interrupted, this side's figures until then; left out of the statistics)\n";
  out +=
      "(each phase on the client: connect() to established; the TLS handshake; the request's first byte "
      "to the response's last; total from connect to response)\n";
  out += render_notable(facts_runs(crr.runs));
  for (const CrrRun& run : crr.runs) {
    for (const auto& [cause, count] : run.failures)
      out += fmt::format("{} round {}: {} failed: {}\n", run.label(), run.round, count, cause);
    if (run.resumption && run.refused > 0) {
      out += fmt::format("{} round {}: the server refused {} of {} resumptions: full handshakes instead\n",
                         run.label(), run.round, run.refused, run.connections);
    }
  }
  return out;
}

// The statistics of each variant over the rounds, and each other variant's ratios to the baseline's.
std::string render_crr_stats(const measure::TestParameters& p, const CrrResults& crr, std::size_t width) {
  std::string out;
  const render::ComparedModes modes = render::compared_modes(p, Mode::tcp, Mode::tls);
  for (const CrrStats& s : crr.stats)
    width = std::max(width, s.variant.size());
  out +=
      fmt::format("\n{:<{}} {:>4} {:>9} {:>17} {:>10} {:>12} {:>11} {:>9} {:>9} {:>17} {:>19}\n", "variant",
                  width, "runs", "conn/s", "min - max", "connect_us", "handshake_us", "response_us",
                  "total_us", "p99_us", "CPU us/conn c/s", fmt::format("vs {}: conn/s p50", modes.baseline));
  for (const CrrStats& s : crr.stats) {
    out += fmt::format(
        "{:<{}} {:>4} {:>9.0f} {:>17} {:>10.1f} {:>12} {:>11.1f} {:>9.1f} {:>9.1f} {:>17} {:>19}\n",
        s.variant, width, s.connections_per_s.count, s.connections_per_s.median,
        fmt::format("{:.0f} - {:.0f}", s.connections_per_s.min, s.connections_per_s.max),
        s.connect_p50_us.median,
        is_tls_stream(s.mode) ? fmt::format("{:.1f}", s.handshake_p50_us.median) : "-",
        s.response_p50_us.median, s.total_p50_us.median, s.total_p99_us.median,
        fmt::format("{:.1f} / {:.1f}", s.client_cpu_us_per_connection.median,
                    s.server_cpu_us_per_connection.median),
        s.variant == modes.baseline ? std::string("1.00x  1.00x")
                                    : fmt::format("{}  {}", ratio_text(s.connections_per_s_over_baseline),
                                                  ratio_text(s.total_p50_over_baseline)));
  }
  out += "(medians over the rounds; p50 and p99 of each run's connections)\n";
  for (const CrrStats& s : crr.stats) {
    if (s.variant == modes.baseline) continue;
    std::string resumption;
    if (s.resumed > 0 || s.refused > 0) {
      resumption = fmt::format("; {} of {} connections resumed{}", s.resumed, s.connections,
                               s.refused > 0 ? fmt::format(", {} resumptions refused", s.refused) : "");
    }
    if (!s.connections_per_s_over_baseline) {
      if (!resumption.empty()) out += fmt::format("\n{}{}\n", s.variant, resumption);
      continue;
    }
    const std::size_t pairs = s.connections_per_s_over_baseline->ratio.count;
    out += fmt::format("\n{}/{}, paired by round ({} pair{}{}): {}; {}{}\n", s.variant, modes.baseline, pairs,
                       pairs == 1 ? "" : "s", pairs == 1 ? "; --repeat for an interval" : ", bootstrap",
                       ratio_sentence("connections/s", s.connections_per_s_over_baseline),
                       ratio_sentence("p50 connection time", s.total_p50_over_baseline), resumption);
  }
  for (const CrrStats& s : crr.stats) {
    if (!s.connections_per_s_over_tls) continue;
    out += fmt::format("\n{}/{}, paired by round {}: {}\n", s.variant, render::twin_of(s.mode, s.variant),
                       pairs_text(s.connections_per_s_over_tls->ratio.count),
                       ratio_sentence("connections/s", s.connections_per_s_over_tls));
  }
  // Each other --tls-lib library's line: its connections/s and CPU per
  // connection over the first's, each variant (full, resumed) apart.
  const std::string libraries = render::library_lines<CrrStats>(
      crr.stats, p.tls_policy.libraries,
      {{&CrrStats::connections_per_s, "connections/s"},
       {&CrrStats::client_cpu_us_per_connection, "client CPU per connection"},
       {&CrrStats::server_cpu_us_per_connection, "server CPU per connection"}},
      /*name_variant=*/true);
  return out + (libraries.empty() ? libraries : "\n" + libraries);
}

}  // namespace

std::string render_crr_runs(const measure::Comparison& c) {
  const CrrResults& crr = c.or_empty<CrrResults>();
  std::string out;
  std::size_t width = 4;
  for (const CrrRun& run : crr.runs)
    width = std::max(width, run.label().size());
  if (!crr.runs.empty()) out += render_crr_run_lines(c, crr, width);
  if (crr.stats.empty()) return out;
  for (const CrrStats& s : crr.stats)
    width = std::max(width, s.variant.size());
  out += render_crr_stats(c.parameters, crr, width);
  for (const CrrStats& s : crr.stats)
    out += render_unit_split(c.environment, s.variant, s.client_split, s.server_split, "connection");
  if (!crr.runs.empty()) {
    out += fmt::format("TIME_WAIT sockets on the client's host: {} before the first run, {} after the last\n",
                       time_wait_text(crr.runs.front().time_wait_before),
                       time_wait_text(crr.runs.back().time_wait_after));
  }
  return out;
}

ordered_json crr_runs_json(const measure::Comparison& c) {
  const auto* crr = c.get<CrrResults>();
  if (crr == nullptr) return nullptr;
  ordered_json runs = json::array();
  for (const CrrRun& run : crr->runs)
    runs.push_back(run_json(run, c.parameters));
  return runs;
}

ordered_json crr_summary_json(const measure::Comparison& c) {
  const auto* crr = c.get<CrrResults>();
  if (crr == nullptr) return nullptr;
  ordered_json summary = json::object();
  ordered_json headline = nullptr;
  const render::ComparedModes modes = render::compared_modes(c.parameters, Mode::tcp, Mode::tls);
  for (const CrrStats& s : crr->stats) {
    ordered_json over_baseline = nullptr;
    if (s.connections_per_s_over_baseline) {
      over_baseline = {{"connections_per_s", ratio_json(s.connections_per_s_over_baseline)},
                       {"total_p50_us", ratio_json(s.total_p50_over_baseline)},
                       {"ci_method", ci_method()}};
      if (s.variant == crr->headline) headline = over_baseline;  // "tls": full handshakes
    }
    const bool tls = is_tls_stream(s.mode);
    summary[s.variant] = {
        {"mode", to_string(s.mode)},
        {"runs", s.connections_per_s.count},
        {"connections", s.connections},
        {"resumed", tls ? ordered_json(s.resumed) : ordered_json(nullptr)},
        {"resumption_refused", tls ? ordered_json(s.refused) : ordered_json(nullptr)},
        {"failed", s.failed},
        {"connections_per_s", summary_json(s.connections_per_s)},
        {"connect_p50_us", summary_json(s.connect_p50_us)},
        {"handshake_p50_us", tls ? summary_json(s.handshake_p50_us) : ordered_json(nullptr)},
        {"response_p50_us", summary_json(s.response_p50_us)},
        {"total_p50_us", summary_json(s.total_p50_us)},
        {"total_p99_us", summary_json(s.total_p99_us)},
        {"client_cpu_us_per_connection", summary_json(s.client_cpu_us_per_connection)},
        {"server_cpu_us_per_connection", summary_json(s.server_cpu_us_per_connection)},
        {"cost_split", unit_split_json(s.client_split, s.server_split)},
        {modes.over_key(), over_baseline},
        {"over_twin",
         render::over_twin_json(s.mode, s.variant, "connections_per_s", s.connections_per_s_over_tls)}};
  }
  summary[modes.headline_key()] = headline;
  return summary;
}

std::string render_crr_csv(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  std::string out =
      "variant,round,warmup,partial,mode,resumption,request_bytes,response_bytes,connectors,"
      "connections,failed,resumed,resumption_refused,elapsed_us,connections_per_s,connect_p50_us,connect_p99_"
      "us,"
      "handshake_p50_us,handshake_p99_us,response_p50_us,response_p99_us,total_p50_us,total_p99_us,total_max_"
      "us,"
      "bytes_sent_per_connection,bytes_received_per_connection,tls_version,cipher,group,certificate_key_type,"
      "tls_library,server_tls_library,"
      "client_cpu_us_per_connection,server_cpu_us_per_connection,time_wait_before,time_wait_after," +
      std::string(kCalibrationCsvColumns) + "\n";
  const auto count = [](const std::optional<std::uint64_t>& v) {
    return v ? std::to_string(*v) : std::string();
  };
  for (const CrrRun& run : c.or_empty<CrrResults>().runs) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},", csv_field(run.label()),
                       run.round, run.warmup ? 1 : 0, run.partial ? 1 : 0, to_string(run.mode),
                       run.resumption ? 1 : 0, p.test.rr.request_bytes, p.test.rr.response_bytes,
                       run.connectors, run.connections, run.failed, run.resumed, run.refused, run.elapsed_us,
                       run.connections_per_s());
    out += fmt::format("{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.1f},{:.1f},",
                       run.connect.p50, run.connect.p99, run.handshake.p50, run.handshake.p99,
                       run.response.p50, run.response.p99, run.total.p50, run.total.p99, run.total.max,
                       run.bytes_sent, run.bytes_received);
    out += fmt::format(
        "{},{},{},{},{},{},{:.3f},{},{},{},{}\n", csv_field(run.tls.version), csv_field(run.tls.cipher),
        csv_field(run.tls.group), csv_field(run.tls.certificate_key_type), csv_field(run.tls.library),
        csv_field(run.tls.server_library), run.cpu_us_per_connection(run.client),
        run.partial ? std::string() : fmt::format("{:.3f}", run.cpu_us_per_connection(run.server)),
        count(run.time_wait_before), count(run.time_wait_after), calibration_csv(run.client, run.server));
  }
  return out;
}

}  // namespace tlscmp::kinds
