#include "protocol/fields.hpp"

#include <fmt/format.h>
#include <cmath>
#include <limits>

#include "protocol/messages.hpp"

namespace tlscmp::protocol {
namespace wire {
namespace {

// QUIC's UDP facts, absent from other runs and from older peers.
void get_udp_facts(const json& facts, RunFacts& f) {
  constexpr std::uint64_t kMax32 = std::numeric_limits<std::uint32_t>::max();
  if (facts.contains("udp_path")) {
    const json& p = field(facts, "udp_path");
    if (!p.is_object()) bad("'udp_path' is not an object");
    UdpPath path;
    path.datagrams_sent = get_uint(p, "datagrams_sent", 0, kMaxTestBytes);
    path.datagrams_received = get_uint(p, "datagrams_received", 0, kMaxTestBytes);
    path.bytes_sent = get_uint(p, "bytes_sent", 0, kMaxTestBytes);
    path.bytes_received = get_uint(p, "bytes_received", 0, kMaxTestBytes);
    path.largest_sent = static_cast<std::uint32_t>(get_uint(p, "largest_sent", 0, kMax32));
    path.send_calls = get_uint(p, "send_calls", 0, kMaxTestBytes);
    path.gso_segment = static_cast<std::uint32_t>(get_uint(p, "gso_segment", 0, kMax32));
    if (p.contains("port_connections"))  // a server's: its port's connections
      path.port_connections = static_cast<std::uint32_t>(get_uint(p, "port_connections", 0, kMax32));
    f.udp_path = path;
  }
  if (facts.contains("host_udp")) {
    const json& u = field(facts, "host_udp");
    if (!u.is_object()) bad("'host_udp' is not an object");
    HostUdp host;
    host.in_datagrams = get_uint(u, "in_datagrams", 0, kMaxTestBytes);
    host.out_datagrams = get_uint(u, "out_datagrams", 0, kMaxTestBytes);
    host.in_errors = get_uint(u, "in_errors", 0, kMaxTestBytes);
    host.rcvbuf_errors = get_uint(u, "rcvbuf_errors", 0, kMaxTestBytes);
    host.sndbuf_errors = get_uint(u, "sndbuf_errors", 0, kMaxTestBytes);
    f.host_udp = host;
  }
  if (facts.contains("transaction_streams"))
    f.transaction_streams = get_uint(facts, "transaction_streams", 0, kMaxTransactions);
}

}  // namespace

[[noreturn]] void bad(const std::string& what) {
  throw ProtocolError("bad control message: " + what);
}

const json& field(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end()) bad(fmt::format("'{}' is missing", name));
  return *it;
}

std::uint64_t get_uint(const json& object, const char* name, std::uint64_t min, std::uint64_t max) {
  const json& value = field(object, name);
  if (!value.is_number_unsigned()) bad(fmt::format("'{}' is not a non-negative integer", name));
  const auto n = value.get<std::uint64_t>();
  if (n < min || n > max) bad(fmt::format("'{}' = {} is outside {}..{}", name, n, min, max));
  return n;
}

double get_double(const json& object, const char* name, double max) {
  const json& value = field(object, name);
  if (!value.is_number()) bad(fmt::format("'{}' is not a number", name));
  const auto d = value.get<double>();
  if (!std::isfinite(d) || d < 0 || d > max) bad(fmt::format("'{}' is outside 0..{}", name, max));
  return d;
}

bool get_bool(const json& object, const char* name) {
  const json& value = field(object, name);
  if (!value.is_boolean()) bad(fmt::format("'{}' is not a boolean", name));
  return value.get<bool>();
}

// Strings are bounded and may not hold control characters: they end up in logs.
std::string get_string(const json& object, const char* name) {
  const json& value = field(object, name);
  if (!value.is_string()) bad(fmt::format("'{}' is not a string", name));
  const auto& s = value.get_ref<const std::string&>();
  if (s.size() > kMaxStringBytes) bad(fmt::format("'{}' is longer than {} bytes", name, kMaxStringBytes));
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      bad(fmt::format("'{}' holds a control character", name));
  }
  return s;
}

Role get_role(const json& object, const char* name) {
  const std::string text = get_string(object, name);
  for (Role role : {Role::sender, Role::receiver}) {
    if (text == to_string(role)) return role;
  }
  bad(fmt::format("'{}' has an unknown value", name));
}

json facts_json(const RunFacts& f) {
  json cpu_samples = json::array();
  for (const auto& [cpu, n] : f.cpu_samples)
    cpu_samples.push_back(json::array({cpu, n}));
  json tcp = nullptr;
  if (f.tcp) {
    const TcpInfo& t = *f.tcp;
    tcp = {{"total_retrans", t.total_retrans}, {"bytes_retrans", t.bytes_retrans}, {"rtt_us", t.rtt_us},
           {"rttvar_us", t.rttvar_us},         {"snd_cwnd", t.snd_cwnd},           {"cwnd_max", t.cwnd_max},
           {"delivery_rate", t.delivery_rate}};
    if (t.busy_us && t.rwnd_limited_us && t.sndbuf_limited_us) {
      tcp["busy_us"] = *t.busy_us;
      tcp["rwnd_limited_us"] = *t.rwnd_limited_us;
      tcp["sndbuf_limited_us"] = *t.sndbuf_limited_us;
    }
  }
  json host = nullptr;
  if (f.host_cpu) {
    const HostCpu& h = *f.host_cpu;
    host = {{"user", h.user},   {"system", h.system}, {"irq", h.irq},    {"softirq", h.softirq},
            {"steal", h.steal}, {"idle", h.idle},     {"ticks", h.ticks}};
  }
  json out{{"tcp_info", tcp},
           {"host_cpu", host},
           {"cpu_samples", cpu_samples},
           {"pinned_cpu", f.pinned_cpu >= 0 ? json(f.pinned_cpu) : json(nullptr)}};
  if (f.udp_path) {
    const UdpPath& p = *f.udp_path;
    out["udp_path"] = {{"datagrams_sent", p.datagrams_sent}, {"datagrams_received", p.datagrams_received},
                       {"bytes_sent", p.bytes_sent},         {"bytes_received", p.bytes_received},
                       {"largest_sent", p.largest_sent},     {"send_calls", p.send_calls},
                       {"gso_segment", p.gso_segment}};
    if (p.port_connections) out["udp_path"]["port_connections"] = *p.port_connections;
  }
  if (f.transaction_streams) out["transaction_streams"] = *f.transaction_streams;
  if (f.host_udp) {
    const HostUdp& u = *f.host_udp;
    out["host_udp"] = {{"in_datagrams", u.in_datagrams},
                       {"out_datagrams", u.out_datagrams},
                       {"in_errors", u.in_errors},
                       {"rcvbuf_errors", u.rcvbuf_errors},
                       {"sndbuf_errors", u.sndbuf_errors}};
  }
  return out;
}

// A side's run facts (absent from peers older than them: none).
RunFacts get_facts(const json& object, const char* key) {
  RunFacts f;
  if (!object.contains(key)) return f;
  const json& facts = field(object, key);
  if (!facts.is_object()) bad(fmt::format("'{}' is not an object", key));
  constexpr std::uint64_t kMax32 = std::numeric_limits<std::uint32_t>::max();
  if (const json& t = field(facts, "tcp_info"); !t.is_null()) {
    if (!t.is_object()) bad("'tcp_info' is not an object");
    TcpInfo i;
    i.total_retrans = static_cast<std::uint32_t>(get_uint(t, "total_retrans", 0, kMax32));
    i.bytes_retrans = get_uint(t, "bytes_retrans", 0, kMaxTestBytes);
    i.rtt_us = static_cast<std::uint32_t>(get_uint(t, "rtt_us", 0, kMax32));
    i.rttvar_us = static_cast<std::uint32_t>(get_uint(t, "rttvar_us", 0, kMax32));
    i.snd_cwnd = static_cast<std::uint32_t>(get_uint(t, "snd_cwnd", 0, kMax32));
    i.cwnd_max = static_cast<std::uint32_t>(get_uint(t, "cwnd_max", 0, kMax32));
    i.delivery_rate = get_uint(t, "delivery_rate", 0, kMaxTestBytes);
    if (t.contains("busy_us")) {
      i.busy_us = get_uint(t, "busy_us", 0, kMaxTestBytes);
      i.rwnd_limited_us = get_uint(t, "rwnd_limited_us", 0, kMaxTestBytes);
      i.sndbuf_limited_us = get_uint(t, "sndbuf_limited_us", 0, kMaxTestBytes);
    }
    f.tcp = i;
  }
  if (const json& h = field(facts, "host_cpu"); !h.is_null()) {
    if (!h.is_object()) bad("'host_cpu' is not an object");
    HostCpu c;
    c.user = get_double(h, "user", 100);
    c.system = get_double(h, "system", 100);
    c.irq = get_double(h, "irq", 100);
    c.softirq = get_double(h, "softirq", 100);
    c.steal = get_double(h, "steal", 100);
    c.idle = get_double(h, "idle", 100);
    c.ticks = get_uint(h, "ticks", 0, kMaxTestBytes);
    f.host_cpu = c;
  }
  const json& samples = field(facts, "cpu_samples");
  if (!samples.is_array() || samples.size() > kMaxCpu + 1)
    bad("'cpu_samples' is not a list of [cpu, samples]");
  for (const json& item : samples) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_number_unsigned() ||
        item[0].get<std::uint64_t>() > kMaxCpu || !item[1].is_number_unsigned() ||
        item[1].get<std::uint64_t>() > kMax32) {
      bad("'cpu_samples' holds something other than [cpu, samples]");
    }
    f.cpu_samples[item[0].get<int>()] = item[1].get<std::uint32_t>();
  }
  if (const json& pinned = field(facts, "pinned_cpu"); !pinned.is_null())
    f.pinned_cpu = static_cast<int>(get_uint(facts, "pinned_cpu", 0, kMaxCpu));
  get_udp_facts(facts, f);
  return f;
}

}  // namespace wire

std::string KindResult::error() const {
  const auto it = fields.find("error");
  return it != fields.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void FieldReader::Row::malformed() const {
  wire::bad(fmt::format("an item of '{}' is not a list of as many numbers as its fields", key));
}

void FieldReader::check_list(const char* key, const json& array, std::size_t most) {
  if (!array.is_array()) wire::bad(fmt::format("'{}' is not an array", key));
  if (array.size() > most) wire::bad(fmt::format("'{}' holds more than {} items", key, most));
}

}  // namespace tlscmp::protocol
