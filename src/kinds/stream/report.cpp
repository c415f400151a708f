// The stream kind's part of the reports: text, -J and CSV (its table entry
// points at them; report/ lays them out).

#include <fmt/format.h>
#include <algorithm>
#include <map>

#include "kinds/stream/stream.hpp"
#include "render/facts.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {

using render::ci_method;
using render::csv_field;
using render::facts_columns;
using render::facts_fields;
using render::facts_json;
using render::facts_runs;
using render::format_bytes;
using render::ratio_json;
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

// The modes the ratios name: tcp and tls, unless two others were asked for.
render::ComparedModes compared_modes(const measure::TestParameters& p) {
  return render::compared_modes(p, Mode::tcp, Mode::tls);
}

// The headline variant's stats, or null where there is none.
const StreamStats* headline_stats(const StreamResults& streams) {
  for (const StreamStats& s : streams.stats) {
    if (!streams.headline.empty() && s.variant == streams.headline && s.over_baseline) return &s;
  }
  return nullptr;
}

std::string tls_column(const StreamRun& run) {
  if (!is_tls_stream(run.mode)) return "-";
  std::string text = fmt::format("{} {} {} {}", run.tls.version, run.tls.cipher, run.tls.group,
                                 run.tls.certificate_key_type);
  if (!run.tls.client_certificate_key_type.empty()) {
    text += fmt::format(", client {}", run.tls.client_certificate_key_type);
  }
  if (run.tls.record_size != 0) text += fmt::format(", records {} B", run.tls.record_size);
  return text;
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

// The stream runs, one line each (and a line of per-stream rates with -P), and what was notable.
// With -P: each variant's set-up, the first connect to the last connection
// ready (median over its runs), and how many were set up at a time.
std::string render_setup(const std::vector<StreamRun>& runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> by_variant;
  std::uint32_t at_once = 1;
  for (const StreamRun& run : runs) {
    if (run.setup_us <= 0) continue;
    if (!by_variant.contains(run.label())) order.push_back(run.label());
    by_variant[run.label()].push_back(run.setup_us);
    at_once = std::max(at_once, run.setup_at_once);
  }
  if (order.empty()) return {};
  std::string each;
  for (const std::string& label : order)
    each += fmt::format("{}{} {:.1f} ms", each.empty() ? "" : ", ", label,
                        measure::summarize(by_variant[label]).median / 1e3);
  return fmt::format("set-up, the first connect to the last connection ready ({} at a time), median: {}\n",
                     at_once, each);
}

std::string render_runs(const measure::Comparison& c, const StreamResults& streams) {
  const measure::TestParameters& p = c.parameters;
  std::string out;
  const StreamRun& last = streams.runs.back();
  out += fmt::format("sockets (last run): client {}; server {}\n", describe_socket(last.client),
                     describe_socket(last.server));

  std::size_t width = 4;  // the variants' labels: "tls boringssl" beside "tls" (--tls-lib)
  for (const auto& run : streams.runs)
    width = std::max(width, run.label().size());
  out += fmt::format("\n{:>5} {:<{}} {:>13} {:>12} {:>12} {:>12} {:>9}  {}\n", "round", "mode", width,
                     "bytes", "transfer_us", "sender_us", "handshake_us", "MB/s", "tls");
  for (const auto& run : streams.runs) {
    std::string per_stream;
    for (const StreamResult& s : run.streams) {
      per_stream += fmt::format("{}{} {}{:.1f}", per_stream.empty() ? "" : ", ", s.index,
                                s.direction == p.test.stream.direction ? "" : "(back) ", s.mbytes_per_s());
    }
    out += fmt::format("{:>5} {:<{}} {:>13} {:>12.0f} {:>12.0f} {:>12.0f} {:>9.1f}  {}\n", round_label(run),
                       run.label(), width, run.bytes, run.transfer_us, run.sender_us, run.handshake_us,
                       run.mbytes_per_s(), tls_column(run));
    if (!per_stream.empty()) out += fmt::format("{:>5} streams, MB/s each: {}\n", "", per_stream);
  }
  if (p.warmup_rounds > 0) out += "(w: warm-up, left out of the statistics)\n";
  if (c.interrupted) out += "(*: interrupted, this side's figures until then; left out of the statistics)\n";
  if (p.test.streams > 1) out += render_setup(streams.runs);
  out += render_notable(facts_runs(streams.runs));
  return out;
}

// The stream statistics, a line per variant.
std::string render_stats(const measure::TestParameters& p, const StreamResults& streams) {
  std::string out;
  const bool client_sends = p.test.stream.direction == Direction::client_to_server;
  std::size_t width = 4;
  for (const auto& s : streams.stats)
    width = std::max(width, s.variant.size());
  const bool messages = p.test.stream.msg_size > 0;
  out +=
      fmt::format("\n{:<{}} {:>4} {:>9} {:>19} {:>4} {:>12} {:>12} {:>15} {:>15} {:>8}{}\n", "mode", width,
                  "runs", "MB/s", "min - max", "cv", "handshake_us", "transfer_us", "CPU s/GiB", "cores",
                  "vs " + compared_modes(p).baseline, messages ? fmt::format(" {:>13}", "messages/s") : "");
  out += fmt::format("{:<{}} {:>4} {:>9} {:>19} {:>4} {:>12} {:>12} {:>15} {:>15} {:>8}{}\n", "", width, "",
                     "median", "", "", "median", "median", "send / recv", "send / recv", "time",
                     messages ? fmt::format(" {:>13}", "median") : "");
  for (const auto& s : streams.stats) {
    const measure::Summary& sender_gib = client_sends ? s.client_cpu_s_per_gib : s.server_cpu_s_per_gib;
    const measure::Summary& receiver_gib = client_sends ? s.server_cpu_s_per_gib : s.client_cpu_s_per_gib;
    const measure::Summary& sender_cores = client_sends ? s.client_core_share : s.server_core_share;
    const measure::Summary& receiver_cores = client_sends ? s.server_core_share : s.client_core_share;
    out += fmt::format("{:<{}} {:>4} {:>9.1f} {:>19} {:>4} {:>12.0f} {:>12.0f} {:>15} {:>15} {:>8}{}\n",
                       s.variant, width, s.transfer_us.count, s.mbytes_per_s.median,
                       fmt::format("{:.1f} - {:.1f}", s.mbytes_per_s.min, s.mbytes_per_s.max),
                       cv(s.mbytes_per_s), s.handshake_us.median, s.transfer_us.median,
                       fmt::format("{:.2f} / {:.2f}", sender_gib.median, receiver_gib.median),
                       fmt::format("{:.2f} / {:.2f}", sender_cores.median, receiver_cores.median),
                       s.variant == compared_modes(p).baseline ? "1.00x" : ratio_text(s.over_baseline),
                       messages ? fmt::format(" {:>13.0f}", s.messages_per_s.median) : "");
  }
  return out;
}

// The headline: the other mode's transfer time over the baseline's (TLS over
// TCP), paired by round, with its interval.
std::string render_ratio(const measure::TestParameters& p, const measure::PairedRatio& ratio) {
  std::string out;
  const measure::Summary& r = ratio.ratio;
  const std::string title = compared_modes(p).title();
  if (r.count == 1) {
    out += fmt::format("\n{} transfer time: {:.2f}x (one pair; --repeat for an interval)\n", title, r.median);
  } else {
    out += fmt::format("\n{} transfer time, paired by round: median {:.2f}x", title, r.median);
    if (ratio.ci) out += fmt::format(", 95% CI {:.2f}x - {:.2f}x", ratio.ci->low, ratio.ci->high);
    out += fmt::format(" (min {:.2f}x, max {:.2f}x, {} pairs; bootstrap)\n", r.min, r.max, r.count);
  }
  return out;
}

ordered_json to_json(const measure::Summary& s) {
  return summary_json(s);
}

// A run's split on a side as JSON fields of the side, null where it has none.
void add_split(ordered_json& side, const std::optional<measure::RunSplit>& split) {
  const auto value = [&](double measure::RunSplit::*part) {
    return split ? ordered_json(split.value().*part) : ordered_json(nullptr);
  };
  side["crypto_s_per_gib"] = value(&measure::RunSplit::crypto_s_per_gib);
  side["record_layer_s_per_gib"] = value(&measure::RunSplit::record_layer_s_per_gib);
  side["socket_s_per_gib"] = value(&measure::RunSplit::socket_s_per_gib);
}

ordered_json to_json(const measure::SideCost& side, std::uint64_t bytes) {
  return {{"window_us", side.window_us},
          {"cpu_user_s", side.cpu_user_s},
          {"cpu_system_s", side.cpu_system_s},
          {"cpu_s_per_gib", side.cpu_s_per_gib(bytes)},
          {"core_share", side.core_share()},
          {"sndbuf_bytes", side.sndbuf_bytes},
          {"rcvbuf_bytes", side.rcvbuf_bytes},
          {"mss_bytes", side.mss_bytes},
          {"congestion", side.congestion},
          {"ktls_send", side.ktls_send},
          {"ktls_receive", side.ktls_receive},
          {"tls_bytes", side.tls_bytes},
          {"read_calls", render::value_or_null(side.read_calls)},
          {"write_calls", render::value_or_null(side.write_calls)},
          {"calibration", calibration_json(side.calibration)},
          {"facts", facts_json(side.facts)}};
}

ordered_json side_json(const measure::SideCost& side, const std::optional<measure::RunSplit>& split,
                       std::uint64_t bytes) {
  ordered_json out = to_json(side, bytes);
  add_split(out, split);
  return out;
}

ordered_json to_json(const StreamRun& run, const measure::TestParameters& parameters) {
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
  for (const StreamResult& s : run.streams) {
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
          {"direction", to_string(parameters.test.stream.direction)},
          {"bytes", run.bytes},
          {"chunk_bytes", parameters.test.chunk_bytes},
          {"transfer_us", run.transfer_us},
          {"sender_us", run.sender_us},
          {"handshake_us", run.handshake_us},
          {"setup_us", run.setup_us},
          {"setup_at_once", run.setup_at_once},
          {"mbytes_per_s", run.mbytes_per_s()},
          {"messages", run.messages},
          {"payload_bytes", run.payload_bytes},
          {"messages_per_s", run.messages_per_s()},
          {"tls_version", tls_or_null(run.tls.version, run.mode)},
          {"cipher", tls_or_null(run.tls.cipher, run.mode)},
          {"group", tls_or_null(run.tls.group, run.mode)},
          {"tls_library", text_or_null(run.tls.library)},
          {"server_tls_library", text_or_null(run.tls.server_library)},
          {"certificate_key_type", tls_or_null(run.tls.certificate_key_type, run.mode)},
          {"record_size",
           facts(run.mode).tls_over_tcp ? ordered_json(run.tls.record_size) : ordered_json(nullptr)},
          {"client_certificate_key_type", run.tls.client_certificate_key_type.empty()
                                              ? ordered_json(nullptr)
                                              : ordered_json(run.tls.client_certificate_key_type)},
          {"client", side_json(run.client, run.client_split, run.bytes)},
          {"server", side_json(run.server, run.server_split, run.bytes)},
          {"streams", streams},
          {"intervals", intervals_json(run.intervals)}};
}

ordered_json headline_json(const StreamResults& streams) {
  const StreamStats* s = headline_stats(streams);
  if (s == nullptr) return nullptr;
  ordered_json r = ratio_json(s->over_baseline);
  r["ci_method"] = ci_method();
  return r;
}

constexpr const char* kSideColumns[] = {"window_us",
                                        "cpu_user_s",
                                        "cpu_system_s",
                                        "cpu_s_per_gib",
                                        "core_share",
                                        "sndbuf_bytes",
                                        "rcvbuf_bytes",
                                        "mss_bytes",
                                        "congestion",
                                        "ktls_send",
                                        "ktls_receive",
                                        "tls_bytes",
                                        "read_calls",
                                        "write_calls",
                                        "aead_seal_mbytes_per_s",
                                        "aead_open_mbytes_per_s",
                                        "memory_writer_s_per_gib",
                                        "memory_reader_s_per_gib"};

// A figure a side may not have: empty where it has none.
template <typename T>
std::string optional_field(const std::optional<T>& value, double scale = 1) {
  return value ? fmt::format("{:g}", static_cast<double>(*value) * scale) : std::string();
}

std::string side_fields(const measure::SideCost& side, std::uint64_t bytes) {
  const auto calibrated = [&](double measure::TlsCalibration::*figure, double scale) {
    return side.calibration ? fmt::format("{:g}", side.calibration.value().*figure * scale) : std::string();
  };
  return fmt::format("{:.3f},{:.6f},{:.6f},{:.6f},{:.4f},{},{},{},{},{},{},{},{},{},{},{},{},{}{}",
                     side.window_us, side.cpu_user_s, side.cpu_system_s, side.cpu_s_per_gib(bytes),
                     side.core_share(), side.sndbuf_bytes, side.rcvbuf_bytes, side.mss_bytes,
                     csv_field(side.congestion), side.ktls_send ? 1 : 0, side.ktls_receive ? 1 : 0,
                     side.tls_bytes, optional_field(side.read_calls), optional_field(side.write_calls),
                     calibrated(&measure::TlsCalibration::seal_bytes_per_s, 1e-6),
                     calibrated(&measure::TlsCalibration::open_bytes_per_s, 1e-6),
                     calibrated(&measure::TlsCalibration::writer_s_per_gib, 1),
                     calibrated(&measure::TlsCalibration::reader_s_per_gib, 1), facts_fields(side.facts));
}

}  // namespace

std::string render_stream_header(const measure::TestParameters& p) {
  std::string out;
  if (p.test.streams > 1) {
    out +=
        fmt::format("{} parallel streams{}, {}{}\n", p.test.streams,
                    p.test.stream.bidir ? ", odd-numbered ones the other way (--bidir)" : "",
                    p.test.stream.bytes > 0 ? "the payload on each" : "each sending for the time",
                    p.test.interval_s() > 0 ? "; intervals add up the streams that go the test's way" : "");
    if (p.quic_streams > 1) {
      out += fmt::format(
          "(--streams {}: tcp and tls open a connection a stream, quic {} connection{} of {} streams)\n",
          p.quic_streams, p.test.streams / p.quic_streams, p.test.streams / p.quic_streams == 1 ? "" : "s",
          p.quic_streams);
    }
  }
  if (p.test.stream.msg_size > 0) {
    out += fmt::format(
        "messages of {} bytes, {}{}\n", p.test.stream.msg_size,
        p.test.stream.framing == framing::Framing::len4 ? "each behind a 4-byte length (len4)"
                                                        : "back to back (raw)",
        p.test.stream.read_size > 0 ? fmt::format(", read {} bytes at a time", p.test.stream.read_size) : "");
  } else if (p.test.stream.read_size > 0) {
    out += fmt::format("the receiver reads {} bytes at a time\n", p.test.stream.read_size);
  }
  const std::string payload =
      p.test.stream.bytes > 0
          ? fmt::format("{} ({} bytes)", format_bytes(p.test.stream.bytes), p.test.stream.bytes)
          : fmt::format("{:g} s of sending", p.test.duration_s());
  out += fmt::format("payload {} in {} chunks, {}{}{}\n", payload, format_bytes(p.test.chunk_bytes),
                     rounds_text(p),
                     p.warmup_rounds > 0 ? fmt::format(" after {} warm-up", p.warmup_rounds) : "",
                     p.test.verify ? ", every byte verified" : "");
  return out;
}

std::string render_stream_runs(const measure::Comparison& c) {
  const StreamResults* streams = c.get<StreamResults>();
  std::string out;
  if (streams != nullptr && !streams->runs.empty()) out += render_runs(c, *streams);
  if (streams != nullptr && !streams->stats.empty()) out += render_stats(c.parameters, *streams);
  return out;
}

std::string render_stream_headline(const measure::Comparison& c) {
  const StreamResults* streams = c.get<StreamResults>();
  const StreamStats* headline = streams != nullptr ? headline_stats(*streams) : nullptr;
  if (headline == nullptr) return {};
  std::string out = render_ratio(c.parameters, *headline->over_baseline);
  for (const StreamStats& s : streams->stats) {
    if (!s.over_tls) continue;
    const measure::Summary& r = s.over_tls->ratio;
    out += fmt::format("{}/{} transfer time, paired by round: median {:.2f}x", s.variant,
                       render::twin_of(s.mode, s.variant), r.median);
    if (s.over_tls->ci)
      out += fmt::format(", 95% CI {:.2f}x - {:.2f}x", s.over_tls->ci->low, s.over_tls->ci->high);
    out +=
        fmt::format(" ({} pair{})\n", r.count, r.count == 1 ? "; --repeat for an interval" : "s; bootstrap");
  }
  // Each other --tls-lib library's line: its bulk rate and CPU per GiB over the first's.
  out += render::library_lines<StreamStats>(streams->stats, c.parameters.tls_policy.libraries,
                                            {{&StreamStats::mbytes_per_s, "bulk rate (MB/s)"},
                                             {&StreamStats::client_cpu_s_per_gib, "client CPU per GiB"},
                                             {&StreamStats::server_cpu_s_per_gib, "server CPU per GiB"}});
  return out + render_cost_split(c, *headline);
}

void add_stream_json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  const measure::TestParameters& p = c.parameters;
  const StreamResults& streams = c.or_empty<StreamResults>();
  ordered_json runs = json::array();
  for (const auto& run : streams.runs)
    runs.push_back(to_json(run, p));

  ordered_json summary = json::object();
  const render::ComparedModes modes = compared_modes(p);
  for (const auto& stats : streams.stats) {
    summary[stats.variant] = {
        {"mode", to_string(stats.mode)},
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
        {modes.over_key() + "_transfer_time", ratio_json(stats.over_baseline)},
        {"over_twin", render::over_twin_json(stats.mode, stats.variant, "transfer_time", stats.over_tls)},
        {"cost_split", stats.client_split || stats.server_split
                           ? ordered_json{{"client", cost_split_json(stats.client_split)},
                                          {"server", cost_split_json(stats.server_split)}}
                           : ordered_json(nullptr)}};
  }
  summary[modes.headline_key() + "_transfer_time"] = headline_json(streams);
  out["runs"] = std::move(runs);
  out["summary"] = std::move(summary);
}

nlohmann::ordered_json stream_last_run_json(const measure::Comparison& c) {
  const auto* streams = c.get<StreamResults>();
  if (streams == nullptr || streams->runs.empty()) return nullptr;
  return to_json(streams->runs.back(), c.parameters);
}

std::string render_stream_csv(const measure::Comparison& c) {
  std::string out =
      "variant,round,warmup,partial,mode,direction,bytes,chunk_bytes,transfer_us,sender_us,handshake_us,"
      "mbytes_per_s,messages,payload_bytes,messages_per_s,"
      "tls_version,cipher,group,certificate_key_type,client_certificate_key_type,record_size,tls_library,"
      "server_tls_library";
  for (const char* side : {"client", "server"}) {
    for (const char* column : kSideColumns)
      out += fmt::format(",{}_{}", side, column);
    out += facts_columns(side);
  }
  out += ",client_tls_library,server_tls_library,client_cpu_model,server_cpu_model\n";
  const measure::Environment& e = c.environment;
  for (const StreamRun& run : c.or_empty<StreamResults>().runs) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{:.1f},{},{},{},{},{},{},{},{},{},{},{},{}"
        ",{},"
        "{}\n",
        csv_field(run.label()), run.round, run.warmup ? 1 : 0, run.partial ? 1 : 0, to_string(run.mode),
        to_string(c.parameters.test.stream.direction), run.bytes, c.parameters.test.chunk_bytes,
        run.transfer_us, run.sender_us, run.handshake_us, run.mbytes_per_s(), run.messages, run.payload_bytes,
        run.messages_per_s(), csv_field(run.tls.version), csv_field(run.tls.cipher), csv_field(run.tls.group),
        csv_field(run.tls.certificate_key_type), csv_field(run.tls.client_certificate_key_type),
        run.tls.record_size, csv_field(run.tls.library), csv_field(run.tls.server_library),
        side_fields(run.client, run.bytes), side_fields(run.server, run.bytes),
        csv_field(e.client_tls_library), csv_field(e.server_tls_library), csv_field(e.client_cpu_model),
        csv_field(e.server_cpu_model));
  }
  return out;
}

std::string stream_sweep_title(const std::vector<const measure::Comparison*>& points) {
  const bool messages = std::any_of(points.begin(), points.end(), [](const measure::Comparison* c) {
    return c->parameters.test.stream.msg_size > 0;
  });
  return fmt::format("{} per second, min - max over the rounds", messages ? "messages" : "MB");
}

std::vector<SweepFigures> stream_sweep_figures(const measure::Comparison& c) {
  const bool messages = c.parameters.test.stream.msg_size > 0;
  std::vector<SweepFigures> out;
  for (const StreamStats& s : c.or_empty<StreamResults>().stats) {
    SweepFigures f;
    f.variant = s.variant;
    f.mode = s.mode;
    f.runs = s.transfer_us.count;
    const measure::Summary& m = messages ? s.messages_per_s : s.mbytes_per_s;
    f.cell = messages ? fmt::format("{} - {}", render::thousands(m.min), render::thousands(m.max))
                      : fmt::format("{:.1f} - {:.1f}", m.min, m.max);
    const auto& over = s.over_baseline;
    f.csv = {{"bytes_median", fmt::format("{:.0f}", s.bytes.median)},
             {"mbytes_per_s_min", fmt::format("{:.3f}", s.mbytes_per_s.min)},
             {"mbytes_per_s_median", fmt::format("{:.3f}", s.mbytes_per_s.median)},
             {"mbytes_per_s_max", fmt::format("{:.3f}", s.mbytes_per_s.max)},
             {"messages_per_s_min", fmt::format("{:.1f}", s.messages_per_s.min)},
             {"messages_per_s_median", fmt::format("{:.1f}", s.messages_per_s.median)},
             {"messages_per_s_max", fmt::format("{:.1f}", s.messages_per_s.max)},
             {"transfer_us_median", fmt::format("{:.3f}", s.transfer_us.median)},
             {"over_tcp_median", over ? fmt::format("{:.4f}", over->ratio.median) : ""},
             {"over_tcp_ci95_low", over && over->ci ? fmt::format("{:.4f}", over->ci->low) : ""},
             {"over_tcp_ci95_high", over && over->ci ? fmt::format("{:.4f}", over->ci->high) : ""}};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tlscmp::kinds
