#include <fmt/format.h>
#include <algorithm>

#include "endpoint.hpp"
#include "report/crr.hpp"
#include "report/datagram.hpp"
#include "report/facts.hpp"
#include "report/report.hpp"
#include "report/rr.hpp"

namespace tlscmp::report {
namespace {

std::string tls_column(const measure::RunResult& run) {
  if (run.mode != Mode::tls) return "-";
  std::string text = fmt::format("{} {} {} {}", run.tls.version, run.tls.cipher, run.tls.group,
                                 run.tls.certificate_key_type);
  if (!run.tls.client_certificate_key_type.empty()) {
    text += fmt::format(", client {}", run.tls.client_certificate_key_type);
  }
  if (run.tls.record_size != 0) text += fmt::format(", records {} B", run.tls.record_size);
  return text;
}

std::string describe_direction(Direction direction) {
  return direction == Direction::client_to_server ? "client -> server" : "server -> client (-R)";
}

std::string describe_host(const std::string& library, const std::string& cpu, const std::string& features,
                          const std::string& kernel) {
  return fmt::format("{} on {} [{}], {}", library, cpu,
                     features.empty() ? "no crypto extensions seen" : features, kernel);
}

std::string describe_socket(const measure::SideCost& side) {
  return fmt::format("sndbuf {} rcvbuf {} mss {} {}", side.sndbuf_bytes, side.rcvbuf_bytes, side.mss_bytes,
                     side.congestion);
}

// Coefficient of variation: the spread at a glance.
std::string cv(const measure::Summary& s) {
  if (s.count < 2 || s.mean == 0) return "-";
  return fmt::format("{:.0f}%", 100 * s.stddev / s.mean);
}

}  // namespace

std::string rounds_text(const measure::TestParameters& p) {
  if (!p.auto_repeat) return fmt::format("{} round{}", p.rounds, p.rounds == 1 ? "" : "s");
  const measure::AutoRepeat& a = *p.auto_repeat;
  return fmt::format(
      "{} to {} rounds until each TLS/TCP ratio's 95% CI is within {:g}% of its median (--repeat "
      "auto{})",
      a.min_rounds, a.max_rounds, 100 * a.ci_target,
      a.max_time_s > 0 ? fmt::format(", at most {:g} s", a.max_time_s) : "");
}

std::string render_auto_repeat(const measure::AutoRepeatOutcome& o) {
  const measure::StopDecision& d = o.decision;
  const std::string width = d.widest ? fmt::format("the widest, {}'s, is within {:.1f}% of its median",
                                                   d.widest_label, 100 * *d.widest)
                                     : "no ratio has an interval yet";
  const std::string rounds = fmt::format("{} round{}", o.rounds, o.rounds == 1 ? "" : "s");
  switch (d.reason) {
    case measure::StopReason::ci_target:
      return fmt::format("--repeat auto: {}: every ratio's 95% CI is within the {:g}% target; {}\n", rounds,
                         100 * o.rule.ci_target, width);
    case measure::StopReason::max_rounds:
      return fmt::format(
          "--repeat auto: stopped at --max-rounds {} short of the {:g}% target: {}; the runs "
          "vary too much to say it closer: more rounds (--max-rounds), -A, or a quieter machine\n",
          o.rule.max_rounds, 100 * o.rule.ci_target, width);
    case measure::StopReason::max_time:
      return fmt::format(
          "--repeat auto: stopped after {} at --max-time {:g} s, short of the {:g}% target: {}\n", rounds,
          o.rule.max_time_s, 100 * o.rule.ci_target, width);
    case measure::StopReason::none:
      break;
  }
  return fmt::format("--repeat auto: ended after {} (interrupted or failed); {}\n", rounds, width);
}

std::string render_handshakes(const measure::HandshakeResults& h) {
  std::string out =
      fmt::format("\n{} full and {} resumed handshakes, alternating: {} {} {}, {} certificate\n",
                  h.full.handshake_us.count, h.resumed.handshake_us.count, h.tls.version, h.tls.cipher,
                  h.tls.group, h.tls.certificate_key_type);
  out += fmt::format("{:<8} {:>6} {:>8} {:>40} {:>14} {:>11} {:>15} {:>19}\n", "kind", "count", "resumed",
                     "connect+handshake_us min / median / max", "tls_us median", "per second",
                     "bytes in / out", "Client/ServerHello");
  for (const auto& [name, k] : {std::pair{"full", &h.full}, std::pair{"resumed", &h.resumed}}) {
    out += fmt::format(
        "{:<8} {:>6} {:>8} {:>40} {:>14.0f} {:>11.0f} {:>15} {:>19}\n", name, k->handshake_us.count,
        k->resumed,
        fmt::format("{:.0f} / {:.0f} / {:.0f}", k->handshake_us.min, k->handshake_us.median,
                    k->handshake_us.max),
        k->tls_us.median, k->per_second(),
        fmt::format("{:.0f} / {:.0f}", k->bytes_received.median, k->bytes_sent.median),
        fmt::format("{:.0f} / {:.0f}", k->client_hello_bytes.median, k->server_hello_bytes.median));
  }
  if (h.full.tls_us.median > 0 && h.resumed.tls_us.count > 0) {
    out += fmt::format("resumed / full TLS handshake time (medians): {:.2f}x\n",
                       h.resumed.tls_us.median / h.full.tls_us.median);
  }
  if (h.resumed.resumed < h.resumed.handshake_us.count) {
    out += fmt::format(
        "note: the server resumed only {} of {} offered sessions; the rest were full handshakes\n",
        h.resumed.resumed, h.resumed.handshake_us.count);
  }
  return out;
}

// --compare-groups: one row per key exchange group, then each over X25519.
std::string render_groups(const measure::TestParameters& p, const measure::GroupResults& c) {
  std::string out;
  const measure::GroupHandshakes* first = nullptr;
  std::size_t width = 5;
  for (const measure::GroupHandshakes& g : c.groups) {
    width = std::max(width, g.group.size());
    if (first == nullptr && g.results) first = &g;
  }
  out += fmt::format(
      "\nkey exchange groups: up to {} full and {} resumed handshakes per group and round, {} round{}{}\n",
      p.handshakes, p.handshakes, p.rounds, p.rounds == 1 ? "" : "s",
      first != nullptr ? fmt::format("; {} {}, {} certificate", first->results->tls.version,
                                     first->results->tls.cipher, first->results->tls.certificate_key_type)
                       : "");
  out += fmt::format("{:<{}} {:>8} {:>9} {:>21} {:>22} {:>11} {:>11} {:>9}\n", "group", width, "full/s",
                     "resumed/s", "full tls_us p50/p99", "resumed tls_us p50/p99", "ClientHello",
                     "ServerHello", "resumed");
  for (const measure::GroupHandshakes& g : c.groups) {
    if (!g.results) {
      out += fmt::format("{:<{}} failed: {}\n", g.group, width, g.error.empty() ? "no handshakes" : g.error);
      continue;
    }
    const measure::HandshakeResults& h = *g.results;
    out += fmt::format("{:<{}} {:>8.0f} {:>9.0f} {:>21} {:>22} {:>11.0f} {:>11.0f} {:>9}\n", g.group, width,
                       h.full.per_second(), h.resumed.per_second(),
                       fmt::format("{:.0f} / {:.0f}", h.full.tls_us.median, h.full.tls_us.p99),
                       fmt::format("{:.0f} / {:.0f}", h.resumed.tls_us.median, h.resumed.tls_us.p99),
                       h.full.client_hello_bytes.median, h.full.server_hello_bytes.median,
                       fmt::format("{}/{}", h.resumed.resumed, h.resumed.handshake_us.count));
  }
  const measure::HandshakeResults* base = measure::group_baseline(c.groups);
  if (base == nullptr) return out + "(no X25519 row, so no ratios)\n";
  out += fmt::format("\n{:<{}} {:>8} {:>9} {:>13} {:>16} {:>11} {:>11}   (over X25519, tls_us medians)\n",
                     "group", width, "full/s", "resumed/s", "full tls_us", "resumed tls_us", "ClientHello",
                     "ServerHello");
  for (const measure::GroupHandshakes& g : c.groups) {
    if (!g.results) continue;
    const measure::GroupRatios r = measure::group_ratios(*g.results, *base);
    out += fmt::format("{:<{}} {:>7.2f}x {:>8.2f}x {:>12.2f}x {:>15.2f}x {:>10.2f}x {:>10.2f}x\n", g.group,
                       width, r.full_per_second, r.resumed_per_second, r.full_tls_us_median,
                       r.resumed_tls_us_median, r.client_hello_bytes, r.server_hello_bytes);
  }
  return out;
}

std::string render_text(const measure::Comparison& c) {
  return render_text_header(c.parameters, c.environment.client_version) + render_text_body(c);
}

std::string render_text_header(const measure::TestParameters& p, const std::string& version) {
  std::string out;
  out += fmt::format("tlscmp {}: {}, {}{}\n", version, describe_direction(p.direction),
                     host_port(p.host, p.port), p.embedded_server ? " (embedded server)" : "");
  const std::string payload = p.bytes > 0 ? fmt::format("{} ({} bytes)", format_bytes(p.bytes), p.bytes)
                                          : fmt::format("{:g} s of sending", p.duration_s);
  if (p.streams > 1 && p.kind == TestKind::stream) {
    out += fmt::format("{} parallel streams{}, {}{}\n", p.streams,
                       p.bidir ? ", odd-numbered ones the other way (--bidir)" : "",
                       p.bytes > 0 ? "the payload on each" : "each sending for the time",
                       p.interval_s > 0 ? "; intervals add up the streams that go the test's way" : "");
  }
  if (p.msg_size > 0) {
    out += fmt::format("messages of {} bytes, {}{}\n", p.msg_size,
                       p.framing == "len4" ? "each behind a 4-byte length (len4)" : "back to back (raw)",
                       p.read_size > 0 ? fmt::format(", read {} bytes at a time", p.read_size) : "");
  } else if (p.read_size > 0) {
    out += fmt::format("the receiver reads {} bytes at a time\n", p.read_size);
  }
  if (p.kind == TestKind::crr) return out + render_crr_header(p);
  if (p.kind == TestKind::rr) return out + render_rr_header(p);
  if (p.kind == TestKind::stream)
    out +=
        fmt::format("payload {} in {} chunks, {}{}{}\n", payload, format_bytes(p.chunk_bytes), rounds_text(p),
                    p.warmup_rounds > 0 ? fmt::format(" after {} warm-up", p.warmup_rounds) : "",
                    p.verify ? ", every byte verified" : "");
  return out;
}

namespace {

// The stream runs, one line each (and a line of per-stream rates with -P), and what was notable.
std::string render_stream_runs(const measure::Comparison& c, const measure::StreamResults& streams) {
  const measure::TestParameters& p = c.parameters;
  std::string out;
  const measure::RunResult& last = streams.runs.back();
  out += fmt::format("sockets (last run): client {}; server {}\n", describe_socket(last.client),
                     describe_socket(last.server));

  out += fmt::format("\n{:>5} {:<4} {:>13} {:>12} {:>12} {:>12} {:>9}  {}\n", "round", "mode", "bytes",
                     "transfer_us", "sender_us", "handshake_us", "MB/s", "tls");
  for (const auto& run : streams.runs) {
    std::string per_stream;
    for (const measure::StreamResult& s : run.streams) {
      per_stream += fmt::format("{}{} {}{:.1f}", per_stream.empty() ? "" : ", ", s.index,
                                s.direction == p.direction ? "" : "(back) ", s.mbytes_per_s());
    }
    out += fmt::format("{:>5} {:<4} {:>13} {:>12.0f} {:>12.0f} {:>12.0f} {:>9.1f}  {}\n", round_label(run),
                       to_string(run.mode), run.bytes, run.transfer_us, run.sender_us, run.handshake_us,
                       run.mbytes_per_s(), tls_column(run));
    if (!per_stream.empty()) out += fmt::format("{:>5} streams, MB/s each: {}\n", "", per_stream);
  }
  if (p.warmup_rounds > 0) out += "(w: warm-up, left out of the statistics)\n";
  if (c.interrupted) out += "(*: interrupted, this side's figures until then; left out of the statistics)\n";
  out += render_notable(facts_runs(streams.runs));
  return out;
}

// The stream statistics, a line per variant.
std::string render_stream_stats(const measure::TestParameters& p, const measure::StreamResults& streams) {
  std::string out;
  const bool client_sends = p.direction == Direction::client_to_server;
  std::size_t width = 4;
  for (const auto& s : streams.stats)
    width = std::max(width, s.variant.size());
  const bool messages = p.msg_size > 0;
  out += fmt::format("\n{:<{}} {:>4} {:>9} {:>19} {:>4} {:>12} {:>12} {:>15} {:>15} {:>8}{}\n", "mode", width,
                     "runs", "MB/s", "min - max", "cv", "handshake_us", "transfer_us", "CPU s/GiB", "cores",
                     "vs tcp", messages ? fmt::format(" {:>13}", "messages/s") : "");
  out += fmt::format("{:<{}} {:>4} {:>9} {:>19} {:>4} {:>12} {:>12} {:>15} {:>15} {:>8}{}\n", "", width, "",
                     "median", "", "", "median", "median", "send / recv", "send / recv", "time",
                     messages ? fmt::format(" {:>13}", "median") : "");
  for (const auto& s : streams.stats) {
    const measure::Summary& sender_gib = client_sends ? s.client_cpu_s_per_gib : s.server_cpu_s_per_gib;
    const measure::Summary& receiver_gib = client_sends ? s.server_cpu_s_per_gib : s.client_cpu_s_per_gib;
    const measure::Summary& sender_cores = client_sends ? s.client_core_share : s.server_core_share;
    const measure::Summary& receiver_cores = client_sends ? s.server_core_share : s.client_core_share;
    out += fmt::format(
        "{:<{}} {:>4} {:>9.1f} {:>19} {:>4} {:>12.0f} {:>12.0f} {:>15} {:>15} {:>8}{}\n", s.variant, width,
        s.transfer_us.count, s.mbytes_per_s.median,
        fmt::format("{:.1f} - {:.1f}", s.mbytes_per_s.min, s.mbytes_per_s.max), cv(s.mbytes_per_s),
        s.handshake_us.median, s.transfer_us.median,
        fmt::format("{:.2f} / {:.2f}", sender_gib.median, receiver_gib.median),
        fmt::format("{:.2f} / {:.2f}", sender_cores.median, receiver_cores.median),
        s.over_tcp ? fmt::format("{:.2f}x", s.over_tcp->median) : (s.mode == Mode::tcp ? "1.00x" : "-"),
        messages ? fmt::format(" {:>13.0f}", s.messages_per_s.median) : "");
  }
  return out;
}

// The headline: TLS's transfer time over TCP's, paired by round, with its interval.
std::string render_stream_ratio(const measure::StreamResults& streams) {
  std::string out;
  const measure::Summary& r = *streams.tls_over_tcp;
  if (r.count == 1) {
    out += fmt::format("\nTLS/TCP transfer time: {:.2f}x (one pair; --repeat for an interval)\n", r.median);
  } else {
    out += fmt::format("\nTLS/TCP transfer time, paired by round: median {:.2f}x", r.median);
    if (streams.tls_over_tcp_ci) {
      out += fmt::format(", 95% CI {:.2f}x - {:.2f}x", streams.tls_over_tcp_ci->low,
                         streams.tls_over_tcp_ci->high);
    }
    out += fmt::format(" (min {:.2f}x, max {:.2f}x, {} pairs; bootstrap)\n", r.min, r.max, r.count);
  }
  return out;
}

}  // namespace

std::string render_text_body(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  const measure::Environment& e = c.environment;
  std::string out;
  const std::string client_host =
      describe_host(e.client_tls_library, e.client_cpu_model, e.client_cpu_features, e.client_kernel);
  const std::string server_host =
      describe_host(e.server_tls_library, e.server_cpu_model, e.server_cpu_features, e.server_kernel);
  if (!e.server_tls_library.empty()) {
    out += client_host == server_host ? fmt::format("client and server: {}\n", client_host)
                                      : fmt::format("client: {}\nserver: {}\n", client_host, server_host);
  }
  if (p.kind == TestKind::datagram) out += render_datagram_runs(c);
  if (c.get<measure::RrResults>() != nullptr) out += render_rr_runs(c);
  if (c.get<measure::CrrResults>() != nullptr) out += render_crr_runs(c);
  const measure::StreamResults* streams = c.get<measure::StreamResults>();
  if (streams != nullptr && !streams->runs.empty()) out += render_stream_runs(c, *streams);
  if (streams != nullptr && !streams->stats.empty()) out += render_stream_stats(p, *streams);
  for (const std::string& note : c.notes)
    out += fmt::format("note: {}\n", note);

  if (streams != nullptr && streams->tls_over_tcp) out += render_stream_ratio(*streams);
  if (const auto* handshakes = c.get<measure::HandshakeResults>()) out += render_handshakes(*handshakes);
  if (const auto* groups = c.get<measure::GroupResults>()) out += render_groups(p, *groups);
  if (c.auto_repeat) out += fmt::format("\n{}", render_auto_repeat(*c.auto_repeat));
  if (c.interrupted) out += "\ninterrupted: the figures above are partial\n";
  // An error is not repeated here: main prints it once, on stderr.
  return out;
}

}  // namespace tlscmp::report
