#include "render/facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace tlscmp::render {
namespace {

using nlohmann::ordered_json;

constexpr double kNotableStealPercent = 1.0;

// "cpu 1", or where no CPU held two thirds of the samples "cpus 0,1".
std::string cpus_text(const RunFacts& facts) {
  if (const std::optional<int> cpu = facts.main_cpu()) return fmt::format("cpu {}", *cpu);
  std::vector<int> cpus;
  for (const auto& [cpu, n] : facts.cpu_samples)
    cpus.push_back(cpu);
  return fmt::format("cpus {}", fmt::join(cpus, ","));
}

// "3 retransmits (4.2 kB) on the client" for each side that had any.
std::string retransmits(const FactsRun& run) {
  std::string text;
  for (const auto& [side, facts] : {std::pair{"client", run.client}, std::pair{"server", run.server}}) {
    if (facts == nullptr || !facts->tcp || facts->tcp->total_retrans == 0) continue;
    const TcpInfo& t = *facts->tcp;
    text += fmt::format("{}{} segment{} retransmitted{} by the {}", text.empty() ? "" : ", ", t.total_retrans,
                        t.total_retrans == 1 ? "" : "s",
                        t.bytes_retrans > 0 ? fmt::format(" ({} bytes)", t.bytes_retrans) : "", side);
  }
  return text;
}

std::string steal(const FactsRun& run) {
  std::string text;
  for (const auto& [side, facts] : {std::pair{"client", run.client}, std::pair{"server", run.server}}) {
    if (facts == nullptr || !facts->host_cpu || facts->host_cpu->steal <= kNotableStealPercent) continue;
    text += fmt::format("{}steal {:.1f}% on the {}'s host", text.empty() ? "" : ", ", facts->host_cpu->steal,
                        side);
  }
  return text;
}

// QUIC: "client 3,210 datagrams sent (largest 1,472 B, 1.0 a send call, no
// GSO), 1,650 received; server port 3,200 datagrams received, 1,640 sent;
// UDP drops: none" with each host's drops.
std::string udp(const FactsRun& run) {
  std::string text;
  if (run.client != nullptr && run.client->udp_path) {
    const UdpPath& p = *run.client->udp_path;
    text = fmt::format(
        "client {} datagrams sent (largest {} B, {:.1f} a send call, {}), {} received", p.datagrams_sent,
        p.largest_sent,
        p.send_calls > 0 ? static_cast<double>(p.datagrams_sent) / static_cast<double>(p.send_calls) : 0.0,
        p.gso_segment > 0 ? fmt::format("GSO of {} B", p.gso_segment) : "no GSO", p.datagrams_received);
    if (run.client->transaction_streams)
      text += fmt::format(", {} transaction streams", *run.client->transaction_streams);
  }
  if (run.server != nullptr && run.server->udp_path) {
    const UdpPath& p = *run.server->udp_path;
    text += fmt::format("{}server port {} datagrams received, {} sent", text.empty() ? "" : "; ",
                        p.datagrams_received, p.datagrams_sent);
    if (p.port_connections && *p.port_connections > 1)
      text += fmt::format(" (its {} connections together)", *p.port_connections);
  }
  std::vector<std::string> drops;
  bool any_host = false;
  for (const auto& [side, facts] : {std::pair{"client", run.client}, std::pair{"server", run.server}}) {
    if (facts == nullptr || !facts->host_udp) continue;
    any_host = true;
    const HostUdp& u = *facts->host_udp;
    if (u.in_errors + u.sndbuf_errors == 0) continue;
    drops.push_back(fmt::format("{} received and {} sent on the {}'s host ({} for a full receive buffer)",
                                u.in_errors, u.sndbuf_errors, side, u.rcvbuf_errors));
  }
  if (any_host) {
    text += fmt::format("{}UDP drops: {}", text.empty() ? "" : "; ",
                        drops.empty() ? std::string("none") : fmt::format("{}", fmt::join(drops, ", ")));
  }
  return text;
}

ordered_json udp_json(const RunFacts& f) {
  ordered_json out = {{"path", nullptr},
                      {"host", nullptr},
                      {"transaction_streams",
                       f.transaction_streams ? ordered_json(*f.transaction_streams) : ordered_json(nullptr)}};
  if (f.udp_path) {
    const UdpPath& p = *f.udp_path;
    out["path"] = {
        {"datagrams_sent", p.datagrams_sent},
        {"datagrams_received", p.datagrams_received},
        {"bytes_sent", p.bytes_sent},
        {"bytes_received", p.bytes_received},
        {"largest_datagram_sent_bytes", p.largest_sent},
        {"send_calls", p.send_calls},
        {"datagrams_per_send_call", p.send_calls > 0 ? ordered_json(static_cast<double>(p.datagrams_sent) /
                                                                    static_cast<double>(p.send_calls))
                                                     : ordered_json(nullptr)},
        {"gso_segment_bytes", p.gso_segment},
        {"port_connections", p.port_connections ? ordered_json(*p.port_connections) : ordered_json(nullptr)}};
  }
  if (f.host_udp) {
    const HostUdp& u = *f.host_udp;
    out["host"] = {{"in_datagrams", u.in_datagrams},
                   {"out_datagrams", u.out_datagrams},
                   {"in_errors", u.in_errors},
                   {"rcvbuf_errors", u.rcvbuf_errors},
                   {"sndbuf_errors", u.sndbuf_errors}};
  }
  return out;
}

}  // namespace

ordered_json facts_json(const RunFacts& f) {
  ordered_json cpus = ordered_json::array();
  for (const auto& [cpu, n] : f.cpu_samples)
    cpus.push_back({{"cpu", cpu}, {"samples", n}});
  ordered_json tcp = nullptr;
  if (f.tcp) {
    const TcpInfo& t = *f.tcp;
    tcp = {{"total_retrans", t.total_retrans},
           {"bytes_retrans", t.bytes_retrans},
           {"rtt_us", t.rtt_us},
           {"rttvar_us", t.rttvar_us},
           {"snd_cwnd", t.snd_cwnd},
           {"cwnd_max", t.cwnd_max},
           {"delivery_rate_bytes_per_s", t.delivery_rate}};
    const auto or_null = [](const std::optional<std::uint64_t>& v) {
      return v ? ordered_json(*v) : ordered_json(nullptr);
    };
    tcp["busy_us"] = or_null(t.busy_us);
    tcp["rwnd_limited_us"] = or_null(t.rwnd_limited_us);
    tcp["sndbuf_limited_us"] = or_null(t.sndbuf_limited_us);
    tcp["rwnd_limited_share"] = t.busy_us ? ordered_json(t.rwnd_limited_share()) : ordered_json(nullptr);
    tcp["sndbuf_limited_share"] = t.busy_us ? ordered_json(t.sndbuf_limited_share()) : ordered_json(nullptr);
  }
  ordered_json host = nullptr;
  if (f.host_cpu) {
    const HostCpu& h = *f.host_cpu;
    host = {{"user_percent", h.user},   {"system_percent", h.system},
            {"irq_percent", h.irq},     {"softirq_percent", h.softirq},
            {"steal_percent", h.steal}, {"idle_percent", h.idle},
            {"ticks", h.ticks}};
  }
  return {{"tcp_info", tcp},
          {"host_cpu", host},
          {"cpus", cpus},
          {"main_cpu", f.main_cpu() ? ordered_json(*f.main_cpu()) : ordered_json(nullptr)},
          {"pinned_cpu", f.pinned_cpu >= 0 ? ordered_json(f.pinned_cpu) : ordered_json(nullptr)},
          {"udp", f.udp_path || f.host_udp || f.transaction_streams ? udp_json(f) : ordered_json(nullptr)}};
}

std::string facts_columns(const char* side) {
  std::string out;
  for (const char* column : {"retransmits", "bytes_retransmitted", "rtt_us", "cwnd_max", "rwnd_limited_share",
                             "sndbuf_limited_share", "host_user_percent", "host_system_percent",
                             "host_irq_percent", "host_softirq_percent", "host_steal_percent", "main_cpu"})
    out += fmt::format(",{}_{}", side, column);
  return out;
}

std::string facts_fields(const RunFacts& f) {
  std::string out;
  if (f.tcp) {
    const TcpInfo& t = *f.tcp;
    out += fmt::format(",{},{},{},{}", t.total_retrans, t.bytes_retrans, t.rtt_us, t.cwnd_max);
    out += t.busy_us ? fmt::format(",{:.4f},{:.4f}", t.rwnd_limited_share(), t.sndbuf_limited_share()) : ",,";
  } else {
    out += ",,,,,,";
  }
  if (f.host_cpu) {
    const HostCpu& h = *f.host_cpu;
    out += fmt::format(",{:.2f},{:.2f},{:.2f},{:.2f},{:.2f}", h.user, h.system, h.irq, h.softirq, h.steal);
  } else {
    out += ",,,,,";
  }
  const std::optional<int> cpu = f.main_cpu();
  return out + (cpu ? fmt::format(",{}", *cpu) : ",");
}

std::string placement(const FactsRun& run) {
  const bool client = run.client != nullptr && !run.client->cpu_samples.empty();
  const bool server = run.server != nullptr && !run.server->cpu_samples.empty();
  if (!client && !server) return {};
  return fmt::format("client {}, server {}", client ? cpus_text(*run.client) : "?",
                     server ? cpus_text(*run.server) : "?");
}

std::string render_notable(const std::vector<FactsRun>& runs) {
  std::map<std::pair<bool, int>, const FactsRun*> first_of_round;
  for (const FactsRun& run : runs)
    first_of_round.try_emplace(std::pair{run.warmup, run.round}, &run);
  std::string out;
  for (const FactsRun& run : runs) {
    std::vector<std::string> notes;
    if (std::string r = retransmits(run); !r.empty()) notes.push_back(std::move(r));
    if (std::string s = steal(run); !s.empty()) notes.push_back(std::move(s));
    if (std::string u = udp(run); !u.empty()) notes.push_back(std::move(u));
    const FactsRun& first = *first_of_round.at(std::pair{run.warmup, run.round});
    const std::string here = placement(run);
    const std::string there = placement(first);
    if (&first != &run && !here.empty() && !there.empty() && here != there)
      notes.push_back(fmt::format("ran on {}; the {} run of this round on {}", here, first.label, there));
    if (notes.empty()) continue;
    out += fmt::format("note: round {} {}: {}\n", run.round_label, run.label, fmt::join(notes, "; "));
  }
  return out;
}

}  // namespace tlscmp::render
