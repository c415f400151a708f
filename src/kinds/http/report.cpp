// The http kind's part of the reports: text, -J and CSV (its table entry
// points at them; report/ lays them out).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/http/http.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {

using render::format_bytes;
using render::latency_json;
using render::ratio_json;
using render::ratio_sentence;
using render::ratio_text;
using render::summary_json;
using render::tls_or_null;

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json side_json(const HttpRun& run, const measure::SideCost& side) {
  return {{"cpu_user_s", side.cpu_user_s},
          {"cpu_system_s", side.cpu_system_s},
          {"cpu_us_per_request", run.cpu_us_per_request(side)}};
}

// A summary of so many connections' connect and handshake: how many, then the percentiles.
ordered_json counted_json(const measure::LatencySummary& l) {
  ordered_json j = {{"count", l.count}};
  j.update(latency_json(l));
  return j;
}

ordered_json run_json(const HttpRun& run, const measure::TestParameters& p) {
  return {
      {"variant", run.label()},
      {"round", run.round},
      {"warmup", run.warmup},
      {"partial", run.partial},
      {"mode", to_string(run.mode)},
      {"http_version", http_version_name(http_version_on(p.test.http.version, run.mode))},
      {"request_bytes", p.test.rr.request_bytes},
      {"response_bytes", p.test.rr.response_bytes},
      {"connections", p.test.streams},
      {"streams_per_connection", p.test.http.streams},
      {"requests", run.requests},
      {"elapsed_us", run.elapsed_us},
      {"requests_per_s", run.requests_per_s()},
      {"handshake_us", run.handshake_us},
      {"connections_opened", run.connections_opened > 0 ? ordered_json(run.connections_opened) : nullptr},
      {"resumed_connections", run.connections_opened > 0 ? ordered_json(run.resumed_connections) : nullptr},
      {"handshake_full_us",
       run.handshake_full_us.count > 0 ? counted_json(run.handshake_full_us) : ordered_json(nullptr)},
      {"handshake_resumed_us",
       run.handshake_resumed_us.count > 0 ? counted_json(run.handshake_resumed_us) : ordered_json(nullptr)},
      {"latency_us", latency_json(run.latency)},
      {"first_byte_us", latency_json(run.first_byte)},
      {"wire_bytes_sent", run.wire_sent},
      {"wire_bytes_received", run.wire_received},
      {"wire_bytes_per_request", run.wire_bytes_per_request()},
      {"fairness", run.fairness()},
      {"connection_requests_per_s", run.connection_rates},
      {"tls_version", tls_or_null(run.tls.version, run.mode)},
      {"cipher", tls_or_null(run.tls.cipher, run.mode)},
      {"tls_library", render::text_or_null(run.tls.library)},
      {"alpn", render::text_or_null(run.alpn)},
      {"client", side_json(run, run.client)},
      {"server", run.partial || !run.server_measured ? ordered_json(nullptr) : side_json(run, run.server)}};
}

// --requests-per-connection: each run's connections, the share resumed,
// and the connect plus handshake of each kind apart; "" for kept-alive runs.
std::string reconnections_text(const HttpResults& http) {
  std::string out;
  for (const HttpRun& run : http.runs) {
    if (run.connections_opened == 0) continue;
    const std::string resumed = run.mode == Mode::tcp
                                    ? std::string()
                                    : fmt::format(", {} resumed ({:.0f}%)", run.resumed_connections,
                                                  100.0 * static_cast<double>(run.resumed_connections) /
                                                      static_cast<double>(run.connections_opened));
    out += fmt::format(
        "{:>5} {:<4} {} connections{}; conn_us p50 {}{:.1f}{}\n", render::round_label(run), run.label(),
        run.connections_opened, resumed, run.mode == Mode::tcp ? "" : "full ", run.handshake_full_us.p50,
        run.handshake_resumed_us.count > 0 ? fmt::format(", resumed {:.1f}", run.handshake_resumed_us.p50)
                                           : std::string());
  }
  return out;
}

std::string runs_table(const measure::Comparison& c, const HttpResults& http) {
  std::string out =
      fmt::format("\n{:>5} {:<4} {:>9} {:>8} {:>10} {:>9} {:>9} {:>10} {:>10} {:>9} {:>17} {:>10} {:>9}\n",
                  "round", "mode", "requests", "time_s", "req/s", "p50_us", "p99_us", "p99.9_us", "max_us",
                  "ttfb_p50", "CPU us/req cli/srv", "wire B/req", "conn_us");
  for (const HttpRun& run : http.runs) {
    const measure::LatencySummary& l = run.latency;
    out += fmt::format(
        "{:>5} {:<4} {:>9} {:>8.2f} {:>10.0f} {:>9.1f} {:>9.1f} {:>10.1f} {:>10.1f} {:>9.1f} {:>17} "
        "{:>10.0f} "
        "{:>9.0f}\n",
        render::round_label(run), run.label(), run.requests, run.elapsed_us / 1e6, run.requests_per_s(),
        l.p50, l.p99, l.p999, l.max, run.first_byte.p50,
        fmt::format("{:.1f} / {}", run.cpu_us_per_request(run.client),
                    run.partial || !run.server_measured
                        ? std::string("-")
                        : fmt::format("{:.1f}", run.cpu_us_per_request(run.server))),
        run.wire_bytes_per_request(), run.handshake_us);
  }
  if (c.interrupted) out += "(*: interrupted, this side's figures until then; left out of the statistics)\n";
  out += reconnections_text(http);
  const double rate = c.parameters.test.rr.rate_tps;
  for (const HttpRun& run : http.runs) {
    if (rate > 0 && !run.partial && run.requests_per_s() < 0.95 * rate)
      out += fmt::format("{:>5} {:<4} fell behind the schedule: {:.0f} of the {:g} requests/s asked\n",
                         render::round_label(run), run.label(), run.requests_per_s(), rate);
  }
  out += fmt::format(
      "(latency: each request's {} to its response's last byte; ttfb: to its first; wire: the bytes TCP "
      "(quic: its datagrams) carried both ways, headers and TLS records with the bodies; conn: connect and "
      "handshake)\n",
      rate > 0 ? "scheduled send" : "send");
  return out;
}

}  // namespace

std::string render_http_header(const measure::TestParameters& p) {
  std::string amount = p.test.rr.transactions > 0 ? fmt::format("{} requests in all", p.test.rr.transactions)
                                                  : fmt::format("{:g} s", p.test.duration_s());
  if (p.test.rr.rate_tps > 0)
    amount += fmt::format(
        " open loop at {:g} requests/s over all connections (latency from each request's scheduled time)",
        p.test.rr.rate_tps);
  const std::string what = p.test.rr.request_bytes > 0
                               ? fmt::format("POST of {}", format_bytes(p.test.rr.request_bytes))
                               : std::string("GET");
  // Against a tlscmp server the path names the response's size; --url's is the URL's own.
  const std::string asked = p.embedded_server || p.test.rr.response_bytes > 0
                                ? fmt::format(" /{} (responses of {})", p.test.rr.response_bytes,
                                              format_bytes(p.test.rr.response_bytes))
                                : " of the URL's path";
  const std::uint32_t per = p.test.http.requests_per_connection;
  std::string how;
  if (per > 0)
    how = fmt::format(" in turn, each a new connection every {} request{}{}", per, per == 1 ? "" : "s",
                      p.test.http.resume_percent > 0
                          ? fmt::format(", {}% offering the last session", p.test.http.resume_percent)
                          : std::string());
  if (p.test.rr.rate_tps > 0) {
    how += p.test.http.version >= 2 ? ", as many streams in flight as the schedule makes"
                                    : ", requests pipelined as the schedule makes them";
  } else if (per == 0) {
    how = p.test.http.version >= 2 ? fmt::format(", {} streams in flight on each", p.test.http.streams)
                                   : std::string(" kept alive");
  }
  const char* version = p.test.http.version == 3 ? "HTTP/3 over quic (HTTP/2 over tcp and tls)"
                                                 : http_version_name(p.test.http.version);
  return fmt::format("http: {}, {}{}, {} connection{}{}, {} per run, {}\n", version, what, asked,
                     p.test.streams, p.test.streams == 1 ? "" : "s", how, amount, render::rounds_text(p));
}

std::string render_http_runs(const measure::Comparison& c) {
  const HttpResults& http = c.or_empty<HttpResults>();
  std::string out = http.runs.empty() ? std::string() : runs_table(c, http);
  if (http.stats.empty()) return out;
  std::size_t width = 4;
  for (const HttpStats& s : http.stats)
    width = std::max(width, s.variant.size());
  const render::ComparedModes modes = render::compared_modes(c.parameters, Mode::tcp, Mode::tls);
  out += fmt::format("\n{:<{}} {:>4} {:>10} {:>9} {:>9} {:>18} {:>10} {:>18}\n", "mode", width, "runs",
                     "req/s", "p50_us", "p99_us", "CPU us/req cli/srv", "wire B/req",
                     fmt::format("vs {}: req/s  p99", modes.baseline));
  for (const HttpStats& s : http.stats) {
    out += fmt::format(
        "{:<{}} {:>4} {:>10.0f} {:>9.1f} {:>9.1f} {:>18} {:>10.0f} {:>18}\n", s.variant, width,
        s.requests_per_s.count, s.requests_per_s.median, s.p50_us.median, s.p99_us.median,
        fmt::format(
            "{:.1f} / {}", s.client_cpu_us_per_request.median,
            s.server_measured ? fmt::format("{:.1f}", s.server_cpu_us_per_request.median) : std::string("-")),
        s.wire_bytes_per_request.median,
        s.variant == modes.baseline ? std::string("1.00x 1.00x")
                                    : fmt::format("{} {}", ratio_text(s.requests_per_s_over_baseline),
                                                  ratio_text(s.p99_over_baseline)));
  }
  out += "(medians over the rounds)\n";
  for (const HttpStats& s : http.stats) {
    if (!s.requests_per_s_over_baseline) continue;
    out += fmt::format("\n{}/{}, paired by round {}: {}; {}\n", s.variant, modes.baseline,
                       render::pairs_text(s.requests_per_s_over_baseline->ratio.count),
                       ratio_sentence("requests/s", s.requests_per_s_over_baseline),
                       ratio_sentence("p99 latency", s.p99_over_baseline));
  }
  for (const HttpStats& s : http.stats) {
    if (!s.requests_per_s_over_twin) continue;
    out += fmt::format("{}/{}, paired by round {}: {}\n", s.variant, render::twin_of(s.mode, s.variant),
                       render::pairs_text(s.requests_per_s_over_twin->ratio.count),
                       ratio_sentence("requests/s", s.requests_per_s_over_twin));
  }
  return out;
}

ordered_json http_runs_json(const measure::Comparison& c) {
  ordered_json runs = json::array();
  for (const HttpRun& run : c.or_empty<HttpResults>().runs)
    runs.push_back(run_json(run, c.parameters));
  return runs;
}

ordered_json http_summary_json(const measure::Comparison& c) {
  const HttpResults& http = c.or_empty<HttpResults>();
  ordered_json summary = json::object();
  ordered_json headline = nullptr;
  const render::ComparedModes modes = render::compared_modes(c.parameters, Mode::tcp, Mode::tls);
  for (const HttpStats& s : http.stats) {
    ordered_json over_baseline = nullptr;
    if (s.requests_per_s_over_baseline) {
      over_baseline = {{"requests_per_s", ratio_json(s.requests_per_s_over_baseline)},
                       {"p99_us", ratio_json(s.p99_over_baseline)},
                       {"ci_method", render::ci_method()}};
      if (s.variant == http.headline) headline = over_baseline;
    }
    summary[s.variant] = {
        {"mode", to_string(s.mode)},
        {"runs", s.requests_per_s.count},
        {"requests_per_s", summary_json(s.requests_per_s)},
        {"p50_us", summary_json(s.p50_us)},
        {"p99_us", summary_json(s.p99_us)},
        {"first_byte_p50_us", summary_json(s.first_byte_p50_us)},
        {"client_cpu_us_per_request", summary_json(s.client_cpu_us_per_request)},
        {"server_cpu_us_per_request",
         s.server_measured ? summary_json(s.server_cpu_us_per_request) : ordered_json(nullptr)},
        {"wire_bytes_per_request", summary_json(s.wire_bytes_per_request)},
        {"handshake_us", summary_json(s.handshake_us)},
        {modes.over_key(), over_baseline},
        {"over_twin",
         render::over_twin_json(s.mode, s.variant, "requests_per_s", s.requests_per_s_over_twin)}};
  }
  summary[modes.headline_key()] = headline;
  return summary;
}

std::string render_http_csv(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  std::string out =
      "variant,round,warmup,partial,mode,http_version,request_bytes,response_bytes,connections,streams,"
      "requests,"
      "elapsed_us,requests_per_s,handshake_us,latency_p50_us,latency_p99_us,latency_p999_us,latency_max_us,"
      "first_byte_p50_us,first_byte_p99_us,wire_bytes_per_request,fairness,client_cpu_us_per_request,"
      "server_cpu_us_per_request,tls_version,cipher,tls_library\n";
  for (const HttpRun& run : c.or_empty<HttpResults>().runs) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},",
                       render::csv_field(run.label()), run.round, run.warmup ? 1 : 0, run.partial ? 1 : 0,
                       to_string(run.mode), http_version_name(http_version_on(p.test.http.version, run.mode)),
                       p.test.rr.request_bytes, p.test.rr.response_bytes, p.test.streams, p.test.http.streams,
                       run.requests, run.elapsed_us, run.requests_per_s(), run.handshake_us);
    out += fmt::format("{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.1f},{:.4f},{:.3f},{:.3f},{},{},{}\n",
                       run.latency.p50, run.latency.p99, run.latency.p999, run.latency.max,
                       run.first_byte.p50, run.first_byte.p99, run.wire_bytes_per_request(), run.fairness(),
                       run.cpu_us_per_request(run.client), run.cpu_us_per_request(run.server),
                       render::csv_field(run.tls.version), render::csv_field(run.tls.cipher),
                       render::csv_field(run.tls.library));
  }
  return out;
}

}  // namespace tlscmp::kinds
