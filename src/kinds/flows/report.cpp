// The flows kind's part of the reports: text, -J and CSV (its table entry
// points at them; report/ lays them out).

#include <fmt/format.h>
#include <algorithm>

#include "framing/http.hpp"
#include "kinds/flows/flows.hpp"
#include "kinds/transactions.hpp"
#include "render/facts.hpp"
#include "render/render.hpp"
#include "render/result_json.hpp"

namespace tlscmp::kinds {

using render::ci_method;
using render::csv_field;
using render::format_bytes;
using render::latency_json;
using render::pairs_text;
using render::ratio_json;
using render::ratio_sentence;
using render::ratio_text;
using render::round_label;
using render::rounds_text;
using render::summary_json;
using render::text_or_null;
using render::tls_or_null;

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string kib(const std::optional<double>& bytes) {
  return bytes ? fmt::format("{:.1f}", *bytes / 1024) : std::string("-");
}

// Each side's memory per connection, or, with the embedded server (one
// process holds both ends, and each side's figures are that process's),
// the figure once as both ends'.
std::string memory_pair(bool embedded, const std::string& client, const std::string& server) {
  return embedded ? server + " both" : fmt::format("{} / {}", client, server);
}
const char* memory_sides(bool embedded) {
  return embedded ? "(both ends)" : "cli/srv";
}
// What the JSON's memory figures are of.
const char* memory_of(bool embedded) {
  return embedded ? "both_ends" : "each_side";
}

// `of`: "each_side" (this side's process), or "both_ends" (the embedded
// server's process, which holds both ends of every flow).
ordered_json memory_json(const FlowsMemory& m, const char* of) {
  return {{"of", of},
          {"idle_rss_bytes", render::value_or_null(m.idle_rss)},
          {"after_rss_bytes", render::value_or_null(m.after_rss)},
          {"idle_tcp_bytes", render::value_or_null(m.idle_tcp)},
          {"after_tcp_bytes", render::value_or_null(m.after_tcp)},
          {"idle_heap_bytes", render::value_or_null(m.idle_heap)},
          {"after_heap_bytes", render::value_or_null(m.after_heap)}};
}

ordered_json side_json(const FlowsRun& run, const measure::SideCost& side, std::uint32_t threads,
                       const FlowsMemory& memory, const char* memory_of, const RunFacts& facts) {
  const FlowUnits& u = flow_units(run.work);
  return {{"threads", threads},
          {"cpu_s", side.cpu_s()},
          {u.cpu_key, run.cpu_us_per_transaction(side) * u.cpu_scale},
          {"core_share", side.core_share()},
          {"memory_per_connection",
           run.work == spec::FlowWork::crr ? ordered_json(nullptr) : memory_json(memory, memory_of)},
          {"facts", render::facts_json(facts)}};
}

ordered_json run_json(const FlowsRun& run, const measure::TestParameters& p) {
  const FlowUnits& u = flow_units(run.work);
  const bool stream = run.work == spec::FlowWork::stream;
  const bool crr = run.work == spec::FlowWork::crr;
  const auto if_not_stream = [&](std::uint64_t bytes) {
    return stream ? ordered_json(nullptr) : ordered_json(bytes);
  };
  ordered_json j = {
      {"variant", run.label()},
      {"round", run.round},
      {"warmup", run.warmup},
      {"partial", run.partial},
      {"mode", to_string(run.mode)},
      {"work", to_string(run.work)},
      {"release_buffers", run.release_buffers},
      {"flows", run.flows},
      {"request_bytes", if_not_stream(p.test.rr.request_bytes)},
      {"response_bytes", if_not_stream(p.test.rr.response_bytes)},
      {"establish_us", crr ? ordered_json(nullptr) : ordered_json(run.establish_us)},
      {"flows_per_s", crr ? ordered_json(nullptr) : ordered_json(run.flows_per_s())},
      {"transactions", nullptr},
      {"connections", nullptr},
      {"bytes", nullptr},
      {"elapsed_us", run.elapsed_us},
      {"transactions_per_s", nullptr},
      {"connections_per_s", nullptr},
      {"mbytes_per_s", nullptr},
      {"latency_us", stream ? ordered_json(nullptr) : latency_json(run.latency)},
      {"connect_us", crr ? latency_json(run.connect) : ordered_json(nullptr)},
      {"handshake_us", crr && is_tls_stream(run.mode) ? latency_json(run.handshake) : ordered_json(nullptr)},
      {"per_flow",
       {{"unit", u.count_key}, {"min", run.flow_min}, {"p50", run.flow_p50}, {"max", run.flow_max}}},
      {"fairness", run.fairness},
      {"failed_flows", run.failed_flows},
      {"first_failure", run.first_failure.empty() ? ordered_json(nullptr) : ordered_json(run.first_failure)},
      {"tls_version", tls_or_null(run.tls.version, run.mode)},
      {"cipher", tls_or_null(run.tls.cipher, run.mode)},
      {"group", tls_or_null(run.tls.group, run.mode)},
      {"tls_library", text_or_null(run.tls.library)},
      {"server_tls_library", text_or_null(run.tls.server_library)},
      {"certificate_key_type", tls_or_null(run.tls.certificate_key_type, run.mode)},
      {"client", side_json(run, run.client, run.client_threads, run.client_memory,
                           memory_of(p.embedded_server), run.client_facts)},
      // An interrupted run never heard the server's account.
      {"server", run.partial ? ordered_json(nullptr)
                             : side_json(run, run.server, run.server_threads, run.server_memory,
                                         memory_of(p.embedded_server), run.server_facts)}};
  j[u.count_key] = run.transactions;
  j[u.rate_key] = run.transactions_per_s() * u.rate_scale;
  return j;
}

// A flow's units in a text column: a count, or bytes for a stream.
std::string flow_amount(const FlowsRun& run, double units) {
  return run.work == spec::FlowWork::stream ? format_bytes(static_cast<std::uint64_t>(units))
                                            : fmt::format("{:.0f}", units);
}

std::string or_dash(bool known, double value, const char* format) {
  return known ? fmt::format(fmt::runtime(format), value) : std::string("-");
}

std::string render_runs_table(const measure::Comparison& c, const FlowsResults& flows) {
  const bool embedded = c.parameters.embedded_server;
  const FlowUnits& u = flow_units(c.parameters.test.flows.work);
  const bool stream = c.parameters.test.flows.work == spec::FlowWork::stream;
  std::size_t width = 11;  // the variants' labels: "tls-release boringssl" (--tls-lib)
  for (const FlowsRun& run : flows.runs)
    width = std::max(width, run.label().size());
  std::string out = fmt::format(
      "\n{:>5} {:<{}} {:>6} {:>9} {:>12} {:>10} {:>9} {:>9} {:>19} {:>17} {:>8} {:>21} {:>15}\n", "round",
      "mode", width, "flows", "flows/s", u.count_key, u.rate_label, "p50_us", "p99_us", u.cpu_label,
      "flow min/max", "fairness", fmt::format("KiB/conn idle {}", memory_sides(embedded)),
      fmt::format("heap {}", memory_sides(embedded)));
  for (const FlowsRun& run : flows.runs) {
    const bool crr = run.work == spec::FlowWork::crr;
    out += fmt::format(
        "{:>5} {:<{}} {:>6} {:>9} {:>12} {:>10.1f} {:>9} {:>9} {:>19} {:>17} {:>8.3f} {:>21} {:>15}\n",
        round_label(run), run.label(), width, run.flows, or_dash(!crr, run.flows_per_s(), "{:.0f}"),
        flow_amount(run, static_cast<double>(run.transactions)), run.transactions_per_s() * u.rate_scale,
        or_dash(!stream, run.latency.p50, "{:.1f}"), or_dash(!stream, run.latency.p99, "{:.1f}"),
        fmt::format("{:.2f} / {}", run.cpu_us_per_transaction(run.client) * u.cpu_scale,
                    or_dash(!run.partial, run.cpu_us_per_transaction(run.server) * u.cpu_scale, "{:.2f}")),
        fmt::format("{} / {}", flow_amount(run, run.flow_min), flow_amount(run, run.flow_max)), run.fairness,
        memory_pair(embedded, kib(run.client_memory.idle_rss), kib(run.server_memory.idle_rss)),
        memory_pair(embedded, kib(run.client_memory.idle_heap), kib(run.server_memory.idle_heap)));
  }
  if (c.parameters.warmup_rounds > 0) out += "(w: warm-up, left out of the statistics)\n";
  if (c.interrupted) out += "(*: interrupted, this side's figures until then; left out of the statistics)\n";
  const char* latency =
      stream ? "MB/s: the receiver's bytes over its first byte to its last"
      : c.parameters.test.flows.work == spec::FlowWork::crr
          ? "no flow is held: each connector connects, makes its transaction and closes, over again; latency "
            "from each connect to its response"
          : "latency from each request's send (with --rate: from when it was due) to its response";
  out += fmt::format(
      "(flows/s: every flow connected and its handshake done, timed apart; {}; KiB/conn: the process's "
      "resident memory over its own before the first flow, per connection; heap: the allocator's bytes in "
      "use, the same way)\n",
      latency);
  return out;
}

// A Summary of units a second (or a unit's CPU) as the report shows it.
measure::Summary scaled(measure::Summary s, double by) {
  s.min *= by;
  s.median *= by;
  s.max *= by;
  s.mean *= by;
  s.stddev *= by;
  s.p99 *= by;
  return s;
}

}  // namespace

const FlowUnits& flow_units(spec::FlowWork work) {
  static const FlowUnits kRr{"transactions",
                             "transactions_per_s",
                             "transactions/s",
                             "tx/s",
                             1,
                             "cpu_us_per_transaction",
                             "CPU us/tx cli/srv",
                             1};
  static const FlowUnits kCrr{"connections",
                              "connections_per_s",
                              "connections/s",
                              "conn/s",
                              1,
                              "cpu_us_per_connection",
                              "CPU us/conn cli/srv",
                              1};
  // CPU seconds a GiB, as bulk runs give them: microseconds a byte times 2^30 / 10^6.
  static const FlowUnits kStream{
      "bytes",           "mbytes_per_s", "MB/s", "MB/s", 1e-6, "cpu_s_per_gib", "CPU s/GiB cli/srv",
      1073741824.0 / 1e6};
  switch (work) {
    case spec::FlowWork::stream:
      return kStream;
    case spec::FlowWork::crr:
      return kCrr;
    case spec::FlowWork::rr:
    case spec::FlowWork::http:  // a request and its response are a transaction
      break;
  }
  return kRr;
}

std::string render_flows_header(const measure::TestParameters& p) {
  const spec::FlowWork work = p.test.flows.work;
  const std::uint64_t count = work == spec::FlowWork::stream ? p.test.stream.bytes : p.test.rr.transactions;
  const std::string amount =
      count == 0 ? fmt::format("{:g} s", p.test.duration_s())
      : work == spec::FlowWork::stream
          ? fmt::format("{} in all", format_bytes(count))
          : fmt::format("{} {} in all", count, work == spec::FlowWork::crr ? "connections" : "transactions");
  std::string what;
  if (work == spec::FlowWork::stream) {
    what = fmt::format(
        "a bulk stream each, {}, writes of {}",
        p.test.stream.direction == Direction::client_to_server ? "client to server" : "server to client",
        format_bytes(p.test.chunk_bytes));
  } else if (work == spec::FlowWork::http) {
    what = fmt::format(
        "{}, {} /{} (responses of {}) a request at a time", framing::http_version_name(p.test.http.version),
        p.test.rr.request_bytes == 0 ? "GET"
                                     : fmt::format("POST of {} to", format_bytes(p.test.rr.request_bytes)),
        p.test.rr.response_bytes, format_bytes(p.test.rr.response_bytes));
  } else {
    what =
        fmt::format("{}requests of {}, responses of {}, {}",
                    work == spec::FlowWork::crr ? "a connection per transaction, " : "",
                    format_bytes(p.test.rr.request_bytes), format_bytes(p.test.rr.response_bytes),
                    work == spec::FlowWork::crr ? fmt::format("--close {}", to_string(p.test.crr.close))
                    : p.test.rr.rate_tps > 0
                        ? fmt::format("open loop at {:g} transactions/s over all flows", p.test.rr.rate_tps)
                        : std::string("closed loop"));
  }
  const bool quic = std::any_of(p.modes.begin(), p.modes.end(), [](Mode m) { return facts(m).over_udp; });
  return fmt::format("many connections: {} {} on {} event loops at each end{}, {}, {} per run, {}{}\n",
                     p.test.flows.flows, work == spec::FlowWork::crr ? "connectors" : "flows",
                     p.test.flows.threads > 0 ? std::to_string(p.test.flows.threads) : std::string("a CPU's"),
                     quic ? " (quic: one on the server, for the rounds of the port's QUIC listeners)" : "",
                     what, amount, rounds_text(p),
                     p.warmup_rounds > 0 ? fmt::format(" after {} warm-up", p.warmup_rounds) : "");
}

std::string render_flows_runs(const measure::Comparison& c) {
  const FlowsResults& flows = c.or_empty<FlowsResults>();
  std::string out;
  if (!flows.runs.empty()) out += render_runs_table(c, flows);
  if (flows.stats.empty()) return out;
  const bool embedded = c.parameters.embedded_server;
  std::size_t width = 4;
  for (const FlowsStats& s : flows.stats)
    width = std::max(width, s.variant.size());
  const render::ComparedModes modes = render::compared_modes(c.parameters, Mode::tcp, Mode::tls);
  const FlowUnits& u = flow_units(c.parameters.test.flows.work);
  const bool stream = c.parameters.test.flows.work == spec::FlowWork::stream;
  const bool crr = c.parameters.test.flows.work == spec::FlowWork::crr;
  out += fmt::format("\n{:<{}} {:>4} {:>10} {:>9} {:>9} {:>9} {:>19} {:>27} {:>15} {:>21}\n", "mode", width,
                     "runs", u.rate_label, "p50_us", "p99_us", "flows/s", u.cpu_label,
                     fmt::format("KiB/conn idle {} (kernel)", memory_sides(embedded)),
                     fmt::format("heap {}", memory_sides(embedded)),
                     fmt::format("vs {}: {}  p50", modes.baseline, u.rate_label));
  const auto median = [](const std::optional<measure::Summary>& s) {
    return s ? std::optional<double>(s->median) : std::nullopt;
  };
  for (const FlowsStats& s : flows.stats) {
    out += fmt::format(
        "{:<{}} {:>4} {:>10.1f} {:>9} {:>9} {:>9} {:>19} {:>27} {:>15} {:>21}\n", s.variant, width,
        s.transactions_per_s.count, s.transactions_per_s.median * u.rate_scale,
        or_dash(!stream, s.p50_us.median, "{:.1f}"), or_dash(!stream, s.p99_us.median, "{:.1f}"),
        or_dash(!crr, s.flows_per_s.median, "{:.0f}"),
        fmt::format("{:.2f} / {:.2f}", s.client_cpu_us_per_transaction.median * u.cpu_scale,
                    s.server_cpu_us_per_transaction.median * u.cpu_scale),
        fmt::format("{} ({})",
                    memory_pair(embedded, kib(median(s.client_idle_rss)), kib(median(s.server_idle_rss))),
                    kib(median(s.server_idle_tcp))),
        memory_pair(embedded, kib(median(s.client_idle_heap)), kib(median(s.server_idle_heap))),
        s.variant == modes.baseline ? std::string(stream ? "1.00x" : "1.00x 1.00x")
        : stream                    ? ratio_text(s.transactions_per_s_over_baseline)
                                    : fmt::format("{} {}", ratio_text(s.transactions_per_s_over_baseline),
                                                  ratio_text(s.p50_over_baseline)));
  }
  out += "(medians over the rounds; kernel: the host's TCP memory over its own before, per connection)\n";
  for (const FlowsStats& s : flows.stats) {
    if (!s.transactions_per_s_over_baseline) continue;
    out += fmt::format("\n{}/{}, paired by round {}: {}{}\n", s.variant, modes.baseline,
                       pairs_text(s.transactions_per_s_over_baseline->ratio.count),
                       ratio_sentence(u.rate_name, s.transactions_per_s_over_baseline),
                       stream ? std::string() : "; " + ratio_sentence("p50 latency", s.p50_over_baseline));
  }
  for (const FlowsStats& s : flows.stats) {
    if (!s.transactions_per_s_over_tls) continue;
    out += fmt::format("\n{}/{}, paired by round {}: {}\n", s.variant, render::twin_of(s.mode, s.variant),
                       pairs_text(s.transactions_per_s_over_tls->ratio.count),
                       ratio_sentence(u.rate_name, s.transactions_per_s_over_tls));
  }
  return out;
}

// "1000 flows: TLS holds 35.6 KiB per connection on the server (tls-release
// 19.5 KiB), TCP 0.8 KiB; 0.75x the transactions/s; the heap in use: ...".
// Each other --tls-lib library's line: its rate over the first's, and
// each side's heap per idle connection against the first's.
std::string library_lines(const std::vector<std::string>& libraries, const std::vector<FlowsStats>& stats,
                          const char* rate) {
  const auto heap = [&](const std::optional<measure::Summary>& mine,
                        const std::optional<measure::Summary>& first, const char* side) {
    if (!mine || !first) return std::string();
    return fmt::format("{:.1f} KiB of heap per idle connection on the {} against {}'s {:.1f}",
                       mine->median / 1024, side, libraries[0], first->median / 1024);
  };
  return render::library_lines<FlowsStats>(
      stats, libraries, {{&FlowsStats::transactions_per_s, rate}}, /*name_variant=*/true,
      [&](const FlowsStats& s, const FlowsStats& first, std::vector<std::string>& parts) {
        parts.push_back(heap(s.client_idle_heap, first.client_idle_heap, "client"));
        parts.push_back(heap(s.server_idle_heap, first.server_idle_heap, "server"));
      });
}

std::string render_flows_headline(const measure::Comparison& c) {
  const FlowsResults& flows = c.or_empty<FlowsResults>();
  if (flows.stats.empty()) return {};
  const std::string libraries = library_lines(c.parameters.tls_policy.libraries, flows.stats,
                                              flow_units(c.parameters.test.flows.work).rate_name);
  const auto at = [](const std::optional<measure::Summary>& s) {
    return s ? fmt::format("{:.1f} KiB", s->median / 1024) : std::string("unknown");
  };
  const FlowsStats* lead = &flows.stats.front();  // the headline variant, or the first
  for (const FlowsStats& s : flows.stats) {
    if (s.variant == flows.headline) lead = &s;
  }
  // Variants of the lead's mode in brackets (tls-release), the others after (tcp).
  std::string beside;
  std::string rest;
  std::string heap = fmt::format("{} {}", lead->variant, at(lead->server_idle_heap));
  for (const FlowsStats& s : flows.stats) {
    if (&s == lead) continue;
    if (s.mode == lead->mode) {
      beside += fmt::format("{}{} {}", beside.empty() ? "" : ", ", s.variant, at(s.server_idle_rss));
    } else {
      rest += fmt::format(", {} {}", render::upper_variant(s.variant), at(s.server_idle_rss));
    }
    heap += fmt::format(", {} {}", s.variant, at(s.server_idle_heap));
  }
  const char* rate = flow_units(c.parameters.test.flows.work).rate_name;
  const std::string ratio =
      lead->transactions_per_s_over_baseline
          ? fmt::format("; {:.2f}x the {}", lead->transactions_per_s_over_baseline->ratio.median, rate)
          : std::string();
  if (c.parameters.test.flows.work == spec::FlowWork::crr) {  // no flow is held, no memory per connection
    return ratio.empty() ? libraries
                         : fmt::format("\n{} connectors, a connection per transaction: {}{}\n{}",
                                       c.parameters.test.flows.flows, render::upper_variant(lead->variant),
                                       ratio.substr(1), libraries);
  }
  // The embedded server's process holds both ends: its figure is theirs together.
  const char* where = c.parameters.embedded_server
                          ? "at both ends together (the embedded server's process holds both)"
                          : "on the server";
  return fmt::format("\n{} flows: {} holds {} per connection {}{}{}{}; the heap in use: {}\n{}",
                     c.parameters.test.flows.flows, render::upper_variant(lead->variant),
                     at(lead->server_idle_rss), where, beside.empty() ? "" : " (" + beside + ")", rest, ratio,
                     heap, libraries);
}

ordered_json flows_runs_json(const measure::Comparison& c) {
  const auto* flows = c.get<FlowsResults>();
  if (flows == nullptr) return nullptr;
  ordered_json runs = json::array();
  for (const FlowsRun& run : flows->runs)
    runs.push_back(run_json(run, c.parameters));
  return runs;
}

ordered_json flows_summary_json(const measure::Comparison& c) {
  const auto* flows = c.get<FlowsResults>();
  if (flows == nullptr) return nullptr;
  ordered_json summary = json::object();
  ordered_json headline = nullptr;
  const render::ComparedModes modes = render::compared_modes(c.parameters, Mode::tcp, Mode::tls);
  const auto optional_summary = [](const std::optional<measure::Summary>& s) {
    return s ? summary_json(*s) : ordered_json(nullptr);
  };
  const spec::FlowWork work = c.parameters.test.flows.work;
  const FlowUnits& u = flow_units(work);
  const bool stream = work == spec::FlowWork::stream;
  const auto unless = [](bool absent, const measure::Summary& s) {
    return absent ? ordered_json(nullptr) : summary_json(s);
  };
  for (const FlowsStats& s : flows->stats) {
    ordered_json over_baseline = nullptr;
    if (s.transactions_per_s_over_baseline) {
      over_baseline = {{u.rate_key, ratio_json(s.transactions_per_s_over_baseline)},
                       {"p50_us", stream ? ordered_json(nullptr) : ratio_json(s.p50_over_baseline)},
                       {"ci_method", ci_method()}};
      if (s.variant == flows->headline) headline = over_baseline;
    }
    summary[s.variant] = {{"mode", to_string(s.mode)},
                          {"work", to_string(work)},
                          {"runs", s.transactions_per_s.count},
                          {u.rate_key, summary_json(scaled(s.transactions_per_s, u.rate_scale))},
                          {"p50_us", unless(stream, s.p50_us)},
                          {"p99_us", unless(stream, s.p99_us)},
                          {"flows_per_s", unless(work == spec::FlowWork::crr, s.flows_per_s)},
                          {std::string("client_") + u.cpu_key,
                           summary_json(scaled(s.client_cpu_us_per_transaction, u.cpu_scale))},
                          {std::string("server_") + u.cpu_key,
                           summary_json(scaled(s.server_cpu_us_per_transaction, u.cpu_scale))},
                          {"memory_of", memory_of(c.parameters.embedded_server)},
                          {"client_idle_bytes_per_connection", optional_summary(s.client_idle_rss)},
                          {"server_idle_bytes_per_connection", optional_summary(s.server_idle_rss)},
                          {"server_idle_tcp_bytes_per_connection", optional_summary(s.server_idle_tcp)},
                          {"client_idle_heap_bytes_per_connection", optional_summary(s.client_idle_heap)},
                          {"server_idle_heap_bytes_per_connection", optional_summary(s.server_idle_heap)},
                          {modes.over_key(), over_baseline},
                          {"over_twin", render::over_twin_json(s.mode, s.variant, "transactions_per_s",
                                                               s.transactions_per_s_over_tls)}};
  }
  summary[modes.headline_key()] = headline;
  return summary;
}

std::string render_flows_csv(const measure::Comparison& c) {
  std::string out =
      "variant,round,warmup,partial,mode,work,unit,flows,client_threads,server_threads,establish_us,flows_"
      "per_s,"
      "units,elapsed_us,units_per_s,latency_p50_us,latency_p99_us,latency_p999_us,latency_max_"
      "us,"
      "flow_min,flow_p50,flow_max,fairness,failed_flows,client_cpu_s,server_cpu_s,client_idle_rss_bytes,"
      "client_after_rss_bytes,server_idle_rss_bytes,server_after_rss_bytes,client_idle_tcp_bytes,"
      "server_idle_tcp_bytes,tls_version,cipher,group,tls_library,server_tls_library\n";
  const auto opt = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.1f}", *v) : std::string();
  };
  for (const FlowsRun& r : c.or_empty<FlowsResults>().runs) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{},{:.3f},{:.3f},", csv_field(r.label()),
                       r.round, r.warmup ? 1 : 0, r.partial ? 1 : 0, to_string(r.mode), to_string(r.work),
                       flow_units(r.work).count_key, r.flows, r.client_threads, r.server_threads,
                       r.establish_us, r.flows_per_s(), r.transactions, r.elapsed_us, r.transactions_per_s());
    out += r.work == spec::FlowWork::stream  // a stream has no latency
               ? std::string(",,,,")
               : fmt::format("{:.3f},{:.3f},{:.3f},{:.3f},", r.latency.p50, r.latency.p99, r.latency.p999,
                             r.latency.max);
    out += fmt::format("{:g},{:g},{:g},{:.4f},{},{:.6f},{:.6f},", r.flow_min, r.flow_p50, r.flow_max,
                       r.fairness, r.failed_flows, r.client.cpu_s(), r.server.cpu_s());
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", opt(r.client_memory.idle_rss),
                       opt(r.client_memory.after_rss), opt(r.server_memory.idle_rss),
                       opt(r.server_memory.after_rss), opt(r.client_memory.idle_tcp),
                       opt(r.server_memory.idle_tcp), csv_field(r.tls.version), csv_field(r.tls.cipher),
                       csv_field(r.tls.group), csv_field(r.tls.library), csv_field(r.tls.server_library));
  }
  return out;
}

std::vector<SweepFigures> flows_sweep_figures(const measure::Comparison& c) {
  std::vector<SweepFigures> out;
  for (const FlowsStats& s : c.or_empty<FlowsResults>().stats) {
    SweepFigures f = transactions_sweep_figures(s);
    f.cell = fmt::format(
        "{} ({:.0f} / {:.0f} us), server {}", render::thousands(s.transactions_per_s.median), s.p50_us.median,
        s.p99_us.median,
        s.server_idle_rss ? fmt::format("{:.1f} KiB/conn", s.server_idle_rss->median / 1024) : "?");
    if (s.transactions_per_s_over_baseline)
      f.ratio_cell = fmt::format("{:.2f}x", s.transactions_per_s_over_baseline->ratio.median);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tlscmp::kinds
