// The datagram kind's part of the reports: text, -J and CSV (its table entry
// points at them; report/ lays them out).

#include "kinds/datagram/datagram.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "render/facts.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {

using render::csv_field;
using render::facts_json;
using render::facts_runs;
using render::render_notable;
using render::round_label;
using render::summary_json;

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

double seconds(double us) {
  return us / 1e6;
}

double per_second(std::uint64_t count, double us) {
  return us > 0 ? static_cast<double>(count) / seconds(us) : 0;
}

std::string row(const std::string& round, const std::string& mode, const std::string& sender,
                const DatagramSender& s, const std::string& kernel, const std::string& foreign) {
  return fmt::format(
      "{:>5} {:<4} {:>6} {:>10} {:>7.2f} {:>10.0f} {:>10} {:>7.2f}% {:>10.0f} {:>9} {:>6} {:>9} {:>7}\n",
      round, mode, sender, s.sent, seconds(s.sender_us), per_second(s.sent, s.sender_us), s.received,
      s.loss_percent(), per_second(s.received, s.receiver_us), s.reordered, s.duplicates, kernel, foreign);
}

ordered_json sender_json(const DatagramSender& s) {
  return {{"sent", s.sent},
          {"received", s.received},
          {"lost", s.lost()},
          {"loss_percent", s.loss_percent()},
          {"reordered", s.reordered},
          {"duplicates", s.duplicates},
          {"bytes_sent", s.bytes_sent},
          {"bytes_received", s.bytes_received},
          {"sender_us", s.sender_us},
          {"receiver_us", s.receiver_us},
          {"sent_per_s", per_second(s.sent, s.sender_us)},
          {"received_per_s", per_second(s.received, s.receiver_us)}};
}

const DatagramStats* stats_of(const measure::Comparison& c, const std::string& variant) {
  for (const DatagramStats& s : c.or_empty<DatagramResults>().stats) {
    if (s.variant == variant) return &s;
  }
  return nullptr;
}

// Each dtls variant's handshake, once: what it settled on and how long it took.
std::string handshake_lines(const DatagramResults& results) {
  std::string out;
  std::vector<std::string> said;
  for (const DatagramRun& run : results.runs) {
    if (!is_encrypted(run.mode) || std::find(said.begin(), said.end(), run.label()) != said.end()) continue;
    said.push_back(run.label());
    out += fmt::format(
        "{}: {} {} {}; cookie exchange {:.0f} us, handshake {:.0f} us (first ClientHello to "
        "Finished, mean per sender)\n",
        run.label(), run.tls.version, run.tls.cipher, run.tls.group, run.cookie_us, run.handshake_us);
  }
  return out;
}

// The medians of each variant, and each other library's dtls over the first's.
std::string stats_lines(const DatagramResults& results, const std::vector<std::string>& libraries) {
  std::size_t width = 4;
  for (const DatagramStats& s : results.stats)
    width = std::max(width, s.variant.size());
  std::string out = fmt::format("\n{:<{}} {:>4} {:>12} {:>12} {:>8}\n", "variant", width, "runs",
                                "received/s", "sent/s", "loss");
  for (const DatagramStats& s : results.stats) {
    out +=
        fmt::format("{:<{}} {:>4} {:>12.0f} {:>12.0f} {:>7.2f}%\n", s.variant, width, s.received_per_s.count,
                    s.received_per_s.median, s.sent_per_s.median, s.loss_percent.median);
  }
  out += "(medians)\n";
  out += render::library_lines<DatagramStats>(results.stats, libraries,
                                              {{&DatagramStats::received_per_s, "DTLS datagrams received/s"},
                                               {&DatagramStats::loss_percent, "loss"}});
  for (const DatagramStats& s : results.stats) {
    if (!s.received_per_s_over_first_library) continue;
    out += fmt::format("{}/{}, paired by round {}: {}\n", s.variant, render::twin_of(s.mode, s.variant),
                       render::pairs_text(s.received_per_s_over_first_library->ratio.count),
                       render::ratio_sentence("datagrams received/s", s.received_per_s_over_first_library));
  }
  return out;
}

// The modes the ratio names: udp and dtls, unless two others were asked for.
render::ComparedModes compared_modes(const measure::Comparison& c) {
  return render::compared_modes(c.parameters, Mode::udp, Mode::dtls);
}

}  // namespace

std::string render_datagram_runs(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  std::string out = fmt::format(
      "datagrams of {} bytes, {} per sender, {} sender{}, {}{}; {} round{}\n", p.test.chunk_bytes,
      p.test.datagram.packets > 0 ? std::to_string(p.test.datagram.packets)
                                  : fmt::format("{:g} s of sending", p.test.duration_s()),
      p.test.streams, p.test.streams == 1 ? "" : "s",
      p.test.datagram.rate_bps > 0 ? fmt::format("{} bit/s per sender", p.test.datagram.rate_bps)
                                   : "as fast as they can",
      p.test.datagram.gso ? " (--gso: segmented by the kernel)" : "", p.rounds, p.rounds == 1 ? "" : "s");
  if (c.or_empty<DatagramResults>().runs.empty()) return out;
  out += fmt::format("\n{:>5} {:<4} {:>6} {:>10} {:>7} {:>10} {:>10} {:>8} {:>10} {:>9} {:>6} {:>9} {:>7}\n",
                     "round", "mode", "sender", "sent", "time_s", "sent/s", "received", "loss", "received/s",
                     "reordered", "dups", "kernel", "foreign");
  for (const DatagramRun& run : c.or_empty<DatagramResults>().runs) {
    const std::string round = round_label(run);
    if (run.senders.size() > 1) {
      for (const DatagramSender& s : run.senders)
        out += row(round, run.label(), std::to_string(s.index), s, "", "");
    }
    out += row(round, run.label(), run.senders.size() > 1 ? "all" : "", run.total,
               std::to_string(run.kernel_drops), std::to_string(run.foreign));
  }
  out +=
      "(received/s over the receiver's first to last datagram; kernel: dropped for a full buffer at the\n"
      " receiver's sockets, SO_RXQ_OVFL and /proc/net/udp; foreign: datagrams set apart as not of this "
      "test)\n";
  out += render_notable(facts_runs(c.or_empty<DatagramResults>().runs));
  bool intervals_title = false;
  for (const DatagramRun& run : c.or_empty<DatagramResults>().runs) {
    for (const DatagramInterval& i : run.intervals) {
      if (!intervals_title) {
        out += fmt::format("\nthe receiver's intervals (-i {:g}; loss from sequence numbers, an estimate):\n",
                           p.test.interval_s());
        intervals_title = true;
      }
      out += fmt::format("{:<10} {:>16} {:>10} received {:>10.0f}/s {:>9} lost {:>6.2f}%\n",
                         fmt::format("[{} {}{}]", run.label(), run.warmup ? "w" : "", run.round),
                         fmt::format("{:.2f}-{:.2f} s", i.start_s, i.end_s), i.received, i.received_per_s(),
                         i.lost(), i.loss_percent());
    }
  }
  const DatagramRun& last = c.or_empty<DatagramResults>().runs.back();
  out += fmt::format("sockets (last run): client SO_SNDBUF {}, server SO_RCVBUF {}", last.client.sndbuf_bytes,
                     last.server.rcvbuf_bytes);
  if (last.rcvbuf_errors)
    out += fmt::format("; Udp RcvbufErrors on the server's host +{}", *last.rcvbuf_errors);
  out += "\n";
  out += handshake_lines(c.or_empty<DatagramResults>());
  if (!c.or_empty<DatagramResults>().stats.empty() && p.rounds > 1)
    out += stats_lines(c.or_empty<DatagramResults>(), p.tls_policy.libraries);
  const render::ComparedModes modes = compared_modes(c);
  const auto* base = stats_of(c, modes.baseline);
  const auto* other = stats_of(c, modes.other);
  if (base != nullptr && other != nullptr && base->received_per_s.median > 0) {
    out +=
        fmt::format("\n{} datagrams received per second: {:.2f}x; sent per second: {:.2f}x\n", modes.title(),
                    other->received_per_s.median / base->received_per_s.median,
                    base->sent_per_s.median > 0 ? other->sent_per_s.median / base->sent_per_s.median : 0.0);
  }
  return out;
}

ordered_json datagram_runs_json(const measure::Comparison& c) {
  ordered_json runs = json::array();
  for (const DatagramRun& run : c.or_empty<DatagramResults>().runs) {
    ordered_json senders = json::array();
    for (const DatagramSender& s : run.senders) {
      ordered_json one = {{"sender", s.index}};
      one.update(sender_json(s));
      senders.push_back(one);
    }
    const bool dtls = is_encrypted(run.mode);
    ordered_json r = {{"variant", run.label()},      {"round", run.round},
                      {"warmup", run.warmup},        {"partial", run.partial},
                      {"mode", to_string(run.mode)}, {"datagram_bytes", c.parameters.test.chunk_bytes}};
    r.update(sender_json(run.total));
    r.update(ordered_json{
        {"foreign", run.foreign},
        {"kernel_drops", run.kernel_drops},
        {"rcvbuf_errors", run.rcvbuf_errors ? ordered_json(*run.rcvbuf_errors) : ordered_json(nullptr)},
        {"handshake_us", dtls ? ordered_json(run.handshake_us) : ordered_json(nullptr)},
        {"cookie_us", dtls ? ordered_json(run.cookie_us) : ordered_json(nullptr)},
        {"cookie_exchanged", dtls ? ordered_json(run.cookie_exchanged) : ordered_json(nullptr)},
        {"tls_version", dtls ? ordered_json(run.tls.version) : ordered_json(nullptr)},
        {"cipher", dtls ? ordered_json(run.tls.cipher) : ordered_json(nullptr)},
        {"group", dtls ? ordered_json(run.tls.group) : ordered_json(nullptr)},
        {"tls_library", render::text_or_null(run.tls.library)},
        {"server_tls_library", render::text_or_null(run.tls.server_library)},
        {"client",
         {{"cpu_user_s", run.client.cpu_user_s},
          {"cpu_system_s", run.client.cpu_system_s},
          {"sndbuf_bytes", run.client.sndbuf_bytes},
          {"facts", facts_json(run.client.facts)}}},
        {"server",
         {{"cpu_user_s", run.server.cpu_user_s},
          {"cpu_system_s", run.server.cpu_system_s},
          {"rcvbuf_bytes", run.server.rcvbuf_bytes},
          {"facts", facts_json(run.server.facts)}}},
        {"senders", senders}});
    ordered_json intervals = json::array();
    for (const DatagramInterval& i : run.intervals) {
      intervals.push_back({{"start_s", i.start_s},
                           {"end_s", i.end_s},
                           {"received", i.received},
                           {"expected", i.expected},
                           {"lost", i.lost()},
                           {"loss_percent", i.loss_percent()},
                           {"bytes", i.bytes},
                           {"received_per_s", i.received_per_s()}});
    }
    r["intervals"] = intervals;
    runs.push_back(r);
  }
  return runs;
}

ordered_json datagram_summary_json(const measure::Comparison& c) {
  ordered_json summary = json::object();
  for (const DatagramStats& s : c.or_empty<DatagramResults>().stats) {
    summary[s.variant] = {{"mode", to_string(s.mode)},
                          {"runs", s.received_per_s.count},
                          {"received_per_s", summary_json(s.received_per_s)},
                          {"sent_per_s", summary_json(s.sent_per_s)},
                          {"loss_percent", summary_json(s.loss_percent)},
                          {"over_twin", render::over_twin_json(s.mode, s.variant, "received_per_s",
                                                               s.received_per_s_over_first_library)}};
  }
  const render::ComparedModes modes = compared_modes(c);
  const auto* base = stats_of(c, modes.baseline);
  const auto* other = stats_of(c, modes.other);
  summary[modes.headline_key() + "_received_per_s"] =
      base != nullptr && other != nullptr && base->received_per_s.median > 0
          ? ordered_json(other->received_per_s.median / base->received_per_s.median)
          : ordered_json(nullptr);
  return summary;
}

std::string render_datagram_csv(const measure::Comparison& c) {
  std::string out =
      "variant,round,warmup,partial,mode,sender,datagram_bytes,sent,received,lost,loss_percent,reordered,"
      "duplicates,sender_us,receiver_us,sent_per_s,received_per_s,kernel_drops,foreign,rcvbuf_errors,"
      "handshake_us,"
      "cookie_us,tls_version,cipher,client_cpu_s,server_cpu_s,client_sndbuf_bytes,server_rcvbuf_bytes,"
      "tls_library,server_tls_library\n";
  for (const DatagramRun& run : c.or_empty<DatagramResults>().runs) {
    auto line = [&](const std::string& sender, const DatagramSender& s, bool total) {
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{:.4f},{},{},{:.3f},{:.3f},{:.1f},{:.1f},{},{},{},{:.3f},{:.3f},{},{"
          "},{:.6f},{:.6f},{},{},{},{}\n",
          csv_field(run.label()), run.round, run.warmup ? 1 : 0, run.partial ? 1 : 0, to_string(run.mode),
          sender, c.parameters.test.chunk_bytes, s.sent, s.received, s.lost(), s.loss_percent(), s.reordered,
          s.duplicates, s.sender_us, s.receiver_us, per_second(s.sent, s.sender_us),
          per_second(s.received, s.receiver_us), total ? std::to_string(run.kernel_drops) : "",
          total ? std::to_string(run.foreign) : "",
          total && run.rcvbuf_errors ? std::to_string(*run.rcvbuf_errors) : "", run.handshake_us,
          run.cookie_us, csv_field(run.tls.version), csv_field(run.tls.cipher), run.client.cpu_s(),
          run.server.cpu_s(), run.client.sndbuf_bytes, run.server.rcvbuf_bytes, csv_field(run.tls.library),
          csv_field(run.tls.server_library));
    };
    if (run.senders.size() > 1) {
      for (const DatagramSender& s : run.senders)
        line(std::to_string(s.index), s, false);
    }
    line("all", run.total, true);
  }
  return out;
}

}  // namespace tlscmp::kinds
