// Where a bulk TLS run's extra CPU goes (measure::CostSplit), as the text
// report, the JSON and the CSV give it.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kinds/stream/stream.hpp"
#include "measure/cost_split.hpp"
#include "measure/stats.hpp"
#include "measure/units.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {
namespace {

using nlohmann::ordered_json;
using render::figure_text;

// Seconds per GiB to the millisecond: "0.472".
std::string per_gib(double seconds) {
  return fmt::format("{:.3f}", seconds);
}

// A count per chunk: "4", "1.51".
std::string count_text(double count) {
  return count == std::round(count) ? fmt::format("{:.0f}", count) : fmt::format("{:.2f}", count);
}

std::string gbytes_text(double bytes_per_s) {
  return figure_text(bytes_per_s / 1e9) + " GB/s";
}

// "(4 records and 4 writes per 64 KiB chunk; TCP 1 write)".
std::string calls_text(const measure::CostSplit& s) {
  const auto call = [&](double n) { return std::string(s.sender ? "write" : "read") + (n == 1 ? "" : "s"); };
  std::string text =
      fmt::format("{} record{}", count_text(s.records_per_chunk), s.records_per_chunk == 1 ? "" : "s");
  if (s.tls_calls_per_chunk)
    text += fmt::format(" and {} {}", count_text(*s.tls_calls_per_chunk), call(*s.tls_calls_per_chunk));
  text += fmt::format(" per {} chunk", measure::format_bytes(s.chunk_bytes));
  if (s.tcp_calls_per_chunk)
    text += fmt::format("; TCP {} {}", count_text(*s.tcp_calls_per_chunk), call(*s.tcp_calls_per_chunk));
  return text;
}

std::string side_line(const char* side, const measure::CostSplit& s) {
  return fmt::format(
      "the {} ({})'s TLS extra {} s/GiB: crypto {} ({} at {} here), record layer {}, socket {} ({})\n", side,
      s.sender ? "sender" : "receiver", per_gib(s.extra_s_per_gib), per_gib(s.crypto_s_per_gib), s.aead,
      gbytes_text(s.aead_bytes_per_s), per_gib(s.record_layer_s_per_gib), per_gib(s.socket_s_per_gib),
      calls_text(s));
}

double part_value(const measure::CostSplit& s, const std::string& part) {
  if (part == "crypto") return s.crypto_s_per_gib;
  return part == "record layer" ? s.record_layer_s_per_gib : s.socket_s_per_gib;
}

// One hint, from the largest part of either side.
std::string hint(const measure::TestParameters& p, const measure::Environment& e,
                 const std::optional<measure::CostSplit>& client,
                 const std::optional<measure::CostSplit>& server) {
  const measure::CostSplit* lead = nullptr;
  bool lead_is_client = true;
  for (const auto* s : {client ? &*client : nullptr, server ? &*server : nullptr}) {
    if (s == nullptr) continue;
    if (lead == nullptr ||
        part_value(*s, measure::largest_part(*s)) > part_value(*lead, measure::largest_part(*lead))) {
      lead = s;
      lead_is_client = s == (client ? &*client : nullptr);
    }
  }
  if (lead == nullptr) return {};
  const std::string part = measure::largest_part(*lead);
  const char* side = lead_is_client ? "client" : "server";
  if (part == "crypto") {
    return fmt::format(
        "hint: the cipher leads on the {}: a faster suite, or a CPU with AES instructions, helps most "
        "(--compare-ciphers shows each suite here; tlscmp speed each cipher's rate)\n",
        side);
  }
  if (part == "record layer") {
    return fmt::format(
        "hint: the record layer leads on the {}: larger records (--record-size, {} now) and larger chunks "
        "(-l, "
        "{} now) help most\n",
        side, measure::format_bytes(lead->record_bytes), measure::format_bytes(lead->chunk_bytes));
  }
  const std::string& ulps = lead_is_client ? e.client_tls_ulps : e.server_tls_ulps;
  if (ulps.find("tls") != std::string::npos) {
    return fmt::format(
        "hint: the socket path leads on the {}: kernel TLS (--ktls) moves the records into the "
        "kernel's own send and receive path\n",
        side);
  }
  return fmt::format(
      "hint: the socket path leads on the {}: kernel TLS (--ktls) would take it, but this kernel has no tls "
      "module (tcp_available_ulp: {}); larger chunks (-l, {} now) mean fewer system calls\n",
      side, ulps.empty() ? "not readable here" : ulps, measure::format_bytes(p.test.chunk_bytes));
}

// A share as a percentage, to one significant figure below 1%: "0.3%",
// never "0%" for what is not zero.
std::string percent_text(double share) {
  const double percent = 100 * share;
  if (percent == 0 || percent >= 1) return fmt::format("{:.0f}%", percent);
  return fmt::format("{:.1g}%", percent);
}

// What the sender's TCP_INFO says over a variant's runs: its segments
// retransmitted, added up, and the median share of its busy time that
// neither the receiver's window nor its own send buffer held it back (the
// congestion window's: the path's); none where the kernel does not say.
struct PathFacts {
  std::uint64_t retransmits = 0;
  std::optional<double> cwnd_share;
};

PathFacts path_facts(const std::vector<StreamRun>& runs, const std::string& variant, bool client_sends) {
  PathFacts f;
  std::vector<double> shares;
  for (const StreamRun& run : runs) {
    if (run.label() != variant || run.warmup || run.partial) continue;
    const std::optional<TcpInfo>& tcp = (client_sends ? run.client : run.server).facts.tcp;
    if (!tcp) continue;
    f.retransmits += tcp->total_retrans;
    if (tcp->busy_us && *tcp->busy_us > 0)
      shares.push_back(1 - tcp->rwnd_limited_share() - tcp->sndbuf_limited_share());
  }
  if (!shares.empty()) f.cwnd_share = measure::summarize(shares).median;
  return f;
}

// Where the link, not the CPU, set the pace: the sender's threads under half
// a core in both the baseline's runs and this variant's, and this variant
// within 10% of the baseline's rate. Then TLS cost CPU here, not time, and
// the line says so in place of a hint about the CPU; "" otherwise.
std::string link_bound_line(const measure::Comparison& c, const StreamStats& stats, bool client_sends) {
  const StreamResults* results = c.get<StreamResults>();
  if (results == nullptr) return {};
  const Mode baseline = facts(stats.mode).baseline;
  const auto base = std::find_if(results->stats.begin(), results->stats.end(),
                                 [&](const StreamStats& s) { return s.mode == baseline; });
  if (base == results->stats.end() || base->mbytes_per_s.median <= 0) return {};
  const auto busy = [&](const StreamStats& s) {
    return (client_sends ? s.client_core_share : s.server_core_share).median;
  };
  constexpr double kIdleCore = 0.5;
  constexpr double kSameRate = 0.9;
  if (busy(*base) >= kIdleCore || busy(stats) >= kIdleCore ||
      stats.mbytes_per_s.median < kSameRate * base->mbytes_per_s.median)
    return {};
  const PathFacts path = path_facts(results->runs, stats.variant, client_sends);
  std::string tcp_info;
  if (path.cwnd_share)
    tcp_info = fmt::format(
        " (TCP_INFO, {}: the congestion window held it {} of its busy time, {} segments "
        "retransmitted)",
        stats.variant, percent_text(*path.cwnd_share), path.retransmits);
  return fmt::format(
      "the link limits this run, not the CPU: {} {:.1f} MB/s and {} {:.1f} MB/s, the sender's threads busy "
      "{} "
      "and {} of a core{}; TLS's cost here is CPU (the split per GiB above), not time\n",
      base->variant, base->mbytes_per_s.median, stats.variant, stats.mbytes_per_s.median,
      percent_text(busy(*base)), percent_text(busy(stats)), tcp_info);
}

bool any_negative(const measure::CostSplit& s) {
  return s.crypto_s_per_gib < 0 || s.record_layer_s_per_gib < 0 || s.socket_s_per_gib < 0;
}

}  // namespace

std::string render_cost_split(const measure::Comparison& c, const StreamStats& stats) {
  if (!stats.client_split && !stats.server_split) return {};
  std::string out = "\n";
  if (stats.client_split) out += side_line("client", *stats.client_split);
  if (stats.server_split) out += side_line("server", *stats.server_split);
  if (!stats.client_split || !stats.server_split) {
    out += fmt::format(
        "(no split for the {}: its host could not measure {} in memory, as with a BoringSSL client, which "
        "cannot ask for a TLS 1.3 suite, or kernel TLS)\n",
        stats.client_split ? "server" : "client",
        (stats.client_split ? stats.client_split : stats.server_split)->suite);
  }
  const bool client_sends = stats.client_split ? stats.client_split->sender : !stats.server_split->sender;
  const std::optional<measure::CostSplit>& sender = client_sends ? stats.client_split : stats.server_split;
  const std::string link_bound = link_bound_line(c, stats, client_sends);
  if (sender && sender->aead_bytes_per_s > 0 && link_bound.empty()) {
    out += fmt::format("the run reached {} of the sender's {} rate here ({})\n",
                       percent_text(sender->rate_share_of_aead), sender->aead,
                       gbytes_text(sender->aead_bytes_per_s));
  }
  const bool negative = (stats.client_split && any_negative(*stats.client_split)) ||
                        (stats.server_split && any_negative(*stats.server_split));
  if (negative) {
    out +=
        "(a part below zero is noise: the run's CPU and the calibration in memory each vary; more rounds "
        "narrow it)\n";
  }
  if (!link_bound.empty()) return out + link_bound;
  return out + hint(c.parameters, c.environment, stats.client_split, stats.server_split);
}

nlohmann::ordered_json cost_split_json(const std::optional<measure::CostSplit>& s) {
  if (!s) return nullptr;
  return {{"role", s->sender ? "sender" : "receiver"},
          {"suite", s->suite},
          {"aead", s->aead},
          {"aead_mbytes_per_s", s->aead_bytes_per_s / 1e6},
          {"tcp_cpu_s_per_gib", s->tcp_s_per_gib},
          {"tls_cpu_s_per_gib", s->tls_s_per_gib},
          {"extra_s_per_gib", s->extra_s_per_gib},
          {"crypto_s_per_gib", s->crypto_s_per_gib},
          {"record_layer_s_per_gib", s->record_layer_s_per_gib},
          {"socket_s_per_gib", s->socket_s_per_gib},
          {"largest", measure::largest_part(*s)},
          {"rate_share_of_aead", s->rate_share_of_aead},
          {"chunk_bytes", s->chunk_bytes},
          {"record_bytes", s->record_bytes},
          {"records_per_chunk", s->records_per_chunk},
          {"tls_calls_per_chunk", render::value_or_null(s->tls_calls_per_chunk)},
          {"tcp_calls_per_chunk", render::value_or_null(s->tcp_calls_per_chunk)}};
}

nlohmann::ordered_json calibration_json(const std::optional<measure::TlsCalibration>& c) {
  if (!c) return nullptr;
  return {{"suite", c->suite},
          {"aead", c->aead},
          {"chunk_bytes", c->chunk_bytes},
          {"record_bytes", c->record_bytes},
          {"read_bytes", c->read_bytes},
          {"seal_mbytes_per_s", c->seal_bytes_per_s / 1e6},
          {"open_mbytes_per_s", c->open_bytes_per_s / 1e6},
          {"writer_s_per_gib", c->writer_s_per_gib},
          {"reader_s_per_gib", c->reader_s_per_gib}};
}

}  // namespace tlscmp::kinds
