#include "protocol/messages.hpp"

#include <arpa/inet.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>
#include <utility>

#include "byte_order.hpp"

namespace tlscmp::protocol {
namespace {

using nlohmann::json;

constexpr char kMagic[6] = {'T', 'L', 'S', 'C', 'M', 'P'};
// Control messages are flat objects; deeper nesting is refused before parsing.
constexpr int kMaxJsonDepth = 4;

[[noreturn]] void bad(const std::string& what) {
  throw ProtocolError("bad control message: " + what);
}

// Rejects nesting deeper than kMaxJsonDepth without building anything.
void check_depth(std::span<const std::byte> body) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::byte b : body) {
    const char c = static_cast<char>(b);
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) bad("nested too deeply");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
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

// For fields added after the first release of the protocol: absent means `absent`.
std::uint64_t get_uint_or(const json& object, const char* name, std::uint64_t absent, std::uint64_t min,
                          std::uint64_t max) {
  return object.contains(name) ? get_uint(object, name, min, max) : absent;
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

template <typename Enum, std::size_t N>
Enum get_enum(const json& object, const char* name, const std::array<Enum, N>& values) {
  const std::string text = get_string(object, name);
  for (Enum v : values) {
    if (text == to_string(v)) return v;
  }
  bad(fmt::format("'{}' has an unknown value", name));
}

// Bytes from a peer, fit for a log line: printable ASCII as is, the rest as \xNN.
std::string printable(std::span<const std::byte> bytes) {
  std::string text;
  for (std::byte b : bytes) {
    const auto c = std::to_integer<unsigned char>(b);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      text += static_cast<char>(c);
    } else {
      text += fmt::format("\\x{:02x}", c);
    }
  }
  return text;
}

int from_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Cookie get_cookie(const json& object, const char* name) {
  const std::string text = get_string(object, name);
  if (text.size() != 2 * kCookieBytes) bad(fmt::format("'{}' is not {} hex digits", name, 2 * kCookieBytes));
  Cookie cookie{};
  for (std::size_t i = 0; i < kCookieBytes; ++i) {
    const int hi = from_hex(text[2 * i]);
    const int lo = from_hex(text[2 * i + 1]);
    if (hi < 0 || lo < 0) bad(fmt::format("'{}' is not lower-case hex", name));
    cookie[i] = static_cast<std::byte>(hi * 16 + lo);
  }
  return cookie;
}

// A test's field on the wire: numbers and booleans as they are, enums by name.
template <typename Value>
json wire_value(const Value& value) {
  if constexpr (std::is_enum_v<Value>) {
    return to_string(value);
  } else {
    return value;
  }
}

json to_json(const TestRequest& m) {
  json j = {{"type", "test_request"}, {"kind", to_string(m.test.kind)}, {"mode", to_string(m.mode)}};
  spec::for_each_field(m.test, [&](const spec::Field& f, const auto& value) {
    if (spec::reads(m.test.kind, f.part)) j[f.key] = wire_value(value);
  });
  j["verify_seed"] = m.verify_seed;
  j["key_type"] = m.key_type;
  j["cipher"] = m.cipher;
  j["client_version"] = m.client_version;
  j["round"] = m.round;
  j["server_cpu"] = m.server_cpu >= 0 ? json(m.server_cpu) : json(nullptr);
  if (m.release_buffers) j["release_buffers"] = true;
  if (!m.flow_sources.empty()) j["flow_sources"] = m.flow_sources;
  return j;
}

json optional_value(const std::optional<std::uint64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json to_json(const FlowsResult& m) {
  return {{"type", "flows_result"},
          {"role", to_string(m.role)},
          {"flows", m.flows},
          {"failed", m.failed},
          {"transactions", m.transactions},
          {"elapsed_us", m.elapsed_us},
          {"cpu_s", m.cpu_s},
          {"establish_us", m.establish_us},
          {"threads", m.threads},
          {"rss_before", optional_value(m.memory.rss_before)},
          {"rss_idle", optional_value(m.memory.rss_idle)},
          {"rss_after", optional_value(m.memory.rss_after)},
          {"tcp_pages_before", optional_value(m.memory.tcp_pages_before)},
          {"tcp_pages_idle", optional_value(m.memory.tcp_pages_idle)},
          {"tcp_pages_after", optional_value(m.memory.tcp_pages_after)},
          {"heap_before", optional_value(m.memory.heap_before)},
          {"heap_idle", optional_value(m.memory.heap_idle)},
          {"heap_after", optional_value(m.memory.heap_after)},
          {"error", m.error}};
}

json to_json(const TestAccept& m) {
  return {{"type", "test_accept"},
          {"cookie", cookie_hex(m.cookie)},
          {"server_version", m.server_version},
          {"tls_library", m.tls_library},
          {"cpu_model", m.cpu_model},
          {"cpu_features", m.cpu_features},
          {"kernel", m.kernel},
          {"tls_versions", m.tls_versions},
          {"tls_ciphers", m.tls_ciphers},
          {"tls_groups", m.tls_groups},
          {"ktls", m.ktls},
          {"tls_ulps", m.tls_ulps},
          {"certificate_key_type", m.certificate_key_type},
          {"udp_ports", m.udp_ports}};
}

json to_json(const Ready&) {
  return {{"type", "ready"}};
}

json to_json(const ClockRequest&) {
  return {{"type", "clock_request"}};
}

json to_json(const ClockReply& m) {
  json out{{"type", "clock_reply"}, {"realtime_ns", m.realtime_ns}};
  if (m.no_quic) out["no_quic"] = *m.no_quic;
  return out;
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

json to_json(const DatagramResult& m) {
  json intervals = json::array();
  for (const DatagramInterval& i : m.intervals)
    intervals.push_back(json::array({i.end_us, i.received, i.expected}));
  json senders = json::array();
  for (const SenderCount& s : m.senders) {
    senders.push_back({{"sender", s.sender},
                       {"packets", s.packets},
                       {"bytes", s.bytes},
                       {"first_us", s.first_us},
                       {"last_us", s.last_us},
                       {"reordered", s.reordered},
                       {"duplicates", s.duplicates}});
  }
  return {{"type", "datagram_result"},
          {"role", to_string(m.role)},
          {"senders", senders},
          {"elapsed_us", m.elapsed_us},
          {"cpu_user_s", m.cpu_user_s},
          {"cpu_system_s", m.cpu_system_s},
          {"sndbuf_bytes", m.sndbuf_bytes},
          {"rcvbuf_bytes", m.rcvbuf_bytes},
          {"foreign", m.foreign},
          {"kernel_drops", m.kernel_drops},
          {"rcvbuf_errors", m.rcvbuf_errors ? json(*m.rcvbuf_errors) : json(nullptr)},
          {"intervals", intervals},
          {"facts", facts_json(m.facts)},
          {"error", m.error}};
}

json to_json(const Refusal& m) {
  return {{"type", "refusal"}, {"reason", m.reason}};
}

json optional_json(const std::optional<std::uint64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json calibration_json(const std::optional<measure::TlsCalibration>& c) {
  if (!c) return nullptr;
  return {{"suite", c->suite},
          {"aead", c->aead},
          {"chunk_bytes", c->chunk_bytes},
          {"record_bytes", c->record_bytes},
          {"read_bytes", c->read_bytes},
          {"seal_bytes_per_s", c->seal_bytes_per_s},
          {"open_bytes_per_s", c->open_bytes_per_s},
          {"writer_s_per_gib", c->writer_s_per_gib},
          {"reader_s_per_gib", c->reader_s_per_gib}};
}

json optional_json(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json transaction_calibration_json(const std::optional<measure::TransactionCalibration>& c) {
  if (!c) return nullptr;
  return {{"suite", c->suite},
          {"aead", c->aead},
          {"request_bytes", c->request_bytes},
          {"response_bytes", c->response_bytes},
          {"record_bytes", c->record_bytes},
          {"client_crypto_us", c->client_crypto_us},
          {"server_crypto_us", c->server_crypto_us},
          {"client_tls_us", c->client_tls_us},
          {"server_tls_us", c->server_tls_us},
          {"key_type", c->key_type},
          {"group", c->group},
          {"resumed", c->resumed},
          {"client_handshake_us", optional_json(c->client_handshake_us)},
          {"server_handshake_us", optional_json(c->server_handshake_us)}};
}

json to_json(const SideResult& m) {
  json intervals = json::array();
  for (std::size_t i = 0; i < m.interval_end_us.size() && i < m.interval_bytes.size(); ++i) {
    intervals.push_back(json::array({m.interval_end_us[i], m.interval_bytes[i]}));
  }
  return {{"type", "side_result"},
          {"role", to_string(m.role)},
          {"bytes", m.bytes},
          {"elapsed_us", m.elapsed_us},
          {"cpu_user_s", m.cpu_user_s},
          {"cpu_system_s", m.cpu_system_s},
          {"sndbuf_bytes", m.sndbuf_bytes},
          {"rcvbuf_bytes", m.rcvbuf_bytes},
          {"mss_bytes", m.mss_bytes},
          {"congestion", m.congestion},
          {"ktls_send", m.ktls_send},
          {"ktls_receive", m.ktls_receive},
          {"tls_bytes", m.tls_bytes},
          {"read_calls", optional_json(m.read_calls)},
          {"write_calls", optional_json(m.write_calls)},
          {"calibration", calibration_json(m.calibration)},
          {"transaction_calibration", transaction_calibration_json(m.transaction_calibration)},
          {"messages", m.messages},
          {"payload_bytes", m.payload_bytes},
          {"stream", m.stream},
          {"connections", m.connections},
          {"resumed", m.resumed},
          {"failed", m.failed},
          {"wire_bytes_sent", m.wire_bytes_sent},
          {"offset_us", m.offset_us},
          {"intervals", intervals},
          {"facts", facts_json(m.facts)},
          {"error", m.error}};
}

// The "intervals" list of `object`: at most kMaxIntervals items, each
// [end_us, then `Counts` unsigned counts] (`shape` names it in errors), ends
// increasing. Hands each to take(end_us, counts).
template <std::size_t Counts, typename Take>
void for_each_interval(const json& object, const char* shape, Take take) {
  const json& list = field(object, "intervals");
  if (!list.is_array()) bad("'intervals' is not an array");
  if (list.size() > kMaxIntervals) bad(fmt::format("more than {} intervals", kMaxIntervals));
  double previous_end = 0;
  for (const json& item : list) {
    bool well_formed = item.is_array() && item.size() == Counts + 1 && item[0].is_number();
    for (std::size_t k = 1; well_formed && k <= Counts; ++k)
      well_formed = item[k].is_number_unsigned();
    if (!well_formed) bad(fmt::format("an interval is not {}", shape));
    const auto end_us = item[0].get<double>();
    if (!std::isfinite(end_us) || end_us < previous_end || end_us > kMaxElapsedUs)
      bad("interval ends out of order");
    previous_end = end_us;
    std::array<std::uint64_t, Counts> counts{};
    for (std::size_t k = 0; k < Counts; ++k)
      counts[k] = item[k + 1].template get<std::uint64_t>();
    take(end_us, counts);
  }
}

// [[end_us, bytes], ...]: bytes adding up to no more than the side's total.
void get_intervals(const json& object, SideResult& m) {
  std::uint64_t sum = 0;
  for_each_interval<1>(object, "[end_us, bytes]", [&](double end_us, const std::array<std::uint64_t, 1>& c) {
    if (c[0] > kMaxTestBytes - sum) bad("interval bytes add up to too many");
    sum += c[0];
    m.interval_end_us.push_back(end_us);
    m.interval_bytes.push_back(c[0]);
  });
  if (sum > m.bytes) bad("interval bytes add up to more than 'bytes'");
}

// A count that may be none: absent or null.
std::optional<std::uint64_t> get_optional_uint(const json& j, const char* name, std::uint64_t max) {
  if (!j.contains(name) || j[name].is_null()) return std::nullopt;
  return get_uint(j, name, 0, max);
}

// A side's calibration (absent from older peers, null for TCP): none. The
// rates of a host's cipher and TLS in memory, each finite and at most a
// terabyte a second.
std::optional<measure::TlsCalibration> get_calibration(const json& object) {
  if (!object.contains("calibration") || object.at("calibration").is_null()) return std::nullopt;
  const json& c = field(object, "calibration");
  if (!c.is_object()) bad("'calibration' is not an object");
  constexpr double kMaxRate = 1e12;
  constexpr double kMaxSecondsPerGib = 1e6;
  measure::TlsCalibration out;
  out.suite = get_string(c, "suite");
  out.aead = get_string(c, "aead");
  out.chunk_bytes = static_cast<std::uint32_t>(get_uint(c, "chunk_bytes", 1, kMaxChunkBytes));
  out.record_bytes =
      static_cast<std::uint32_t>(get_uint(c, "record_bytes", kMinRecordBytes, kMaxRecordBytes));
  out.read_bytes = static_cast<std::uint32_t>(get_uint(c, "read_bytes", 1, kMaxChunkBytes));
  out.seal_bytes_per_s = get_double(c, "seal_bytes_per_s", kMaxRate);
  out.open_bytes_per_s = get_double(c, "open_bytes_per_s", kMaxRate);
  out.writer_s_per_gib = get_double(c, "writer_s_per_gib", kMaxSecondsPerGib);
  out.reader_s_per_gib = get_double(c, "reader_s_per_gib", kMaxSecondsPerGib);
  return out;
}

// A figure that may be null; a number as get_double takes it.
std::optional<double> get_optional_double(const json& object, const char* name, double max) {
  if (field(object, name).is_null()) return std::nullopt;
  return get_double(object, name, max);
}

// An rr or crr side's calibration (absent from older peers, null for TCP):
// none. Each figure finite, and at most a hundred seconds a transaction.
std::optional<measure::TransactionCalibration> get_transaction_calibration(const json& object) {
  if (!object.contains("transaction_calibration") || object.at("transaction_calibration").is_null())
    return std::nullopt;
  const json& c = field(object, "transaction_calibration");
  if (!c.is_object()) bad("'transaction_calibration' is not an object");
  constexpr double kMaxUs = 1e8;
  measure::TransactionCalibration out;
  out.suite = get_string(c, "suite");
  out.aead = get_string(c, "aead");
  out.request_bytes = static_cast<std::uint32_t>(get_uint(c, "request_bytes", 1, kMaxRrBytes));
  out.response_bytes = static_cast<std::uint32_t>(get_uint(c, "response_bytes", 1, kMaxRrBytes));
  out.record_bytes =
      static_cast<std::uint32_t>(get_uint(c, "record_bytes", kMinRecordBytes, kMaxRecordBytes));
  out.client_crypto_us = get_double(c, "client_crypto_us", kMaxUs);
  out.server_crypto_us = get_double(c, "server_crypto_us", kMaxUs);
  out.client_tls_us = get_double(c, "client_tls_us", kMaxUs);
  out.server_tls_us = get_double(c, "server_tls_us", kMaxUs);
  out.key_type = get_string(c, "key_type");
  out.group = get_string(c, "group");
  out.resumed = get_bool(c, "resumed");
  out.client_handshake_us = get_optional_double(c, "client_handshake_us", kMaxUs);
  out.server_handshake_us = get_optional_double(c, "server_handshake_us", kMaxUs);
  return out;
}

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

// A side's run facts (absent from peers older than them: none).
RunFacts get_facts(const json& object) {
  RunFacts f;
  if (!object.contains("facts")) return f;
  const json& facts = field(object, "facts");
  if (!facts.is_object()) bad("'facts' is not an object");
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

constexpr std::array kRoles{Role::sender, Role::receiver};
constexpr auto kMaxInt = static_cast<std::uint64_t>(std::numeric_limits<int>::max());

// [[end_us, received, expected], ...]: received adding up to no more than
// the senders' total.
void get_datagram_intervals(const json& object, DatagramResult& m) {
  std::uint64_t sum = 0;
  for_each_interval<2>(object, "[end_us, received, expected]",
                       [&](double end_us, const std::array<std::uint64_t, 2>& c) {
                         if (c[0] > kMaxTestBytes - sum || c[1] > kMaxTestBytes)
                           bad("interval counts are too large");
                         sum += c[0];
                         m.intervals.push_back({end_us, c[0], c[1]});
                       });
  std::uint64_t total = 0;
  for (const SenderCount& s : m.senders)
    total += s.packets;
  if (sum > total) bad("interval counts add up to more than the senders' packets");
}

DatagramResult decode_datagram_result(const json& j) {
  DatagramResult m;
  m.role = get_enum(j, "role", kRoles);
  const json& senders = field(j, "senders");
  if (!senders.is_array() || senders.size() > kMaxSenders) bad("'senders' is not a short array");
  for (const json& s : senders) {
    if (!s.is_object()) bad("a sender is not an object");
    SenderCount c;
    c.sender = static_cast<std::uint32_t>(get_uint(s, "sender", m.senders.size(), m.senders.size()));
    c.packets = get_uint(s, "packets", 0, kMaxTestBytes);
    c.bytes = get_uint(s, "bytes", 0, kMaxTestBytes);
    c.first_us = get_double(s, "first_us", kMaxElapsedUs);
    c.last_us = get_double(s, "last_us", kMaxElapsedUs);
    if (c.last_us < c.first_us) bad("a sender's last datagram comes before its first");
    c.reordered = get_uint(s, "reordered", 0, kMaxTestBytes);
    c.duplicates = get_uint(s, "duplicates", 0, kMaxTestBytes);
    m.senders.push_back(c);
  }
  m.elapsed_us = get_double(j, "elapsed_us", kMaxElapsedUs);
  m.cpu_user_s = get_double(j, "cpu_user_s", kMaxElapsedUs / 1e6);
  m.cpu_system_s = get_double(j, "cpu_system_s", kMaxElapsedUs / 1e6);
  m.sndbuf_bytes = static_cast<int>(get_uint(j, "sndbuf_bytes", 0, kMaxInt));
  m.rcvbuf_bytes = static_cast<int>(get_uint(j, "rcvbuf_bytes", 0, kMaxInt));
  m.foreign = get_uint(j, "foreign", 0, kMaxTestBytes);
  m.kernel_drops = get_uint(j, "kernel_drops", 0, kMaxTestBytes);
  if (j.contains("intervals")) get_datagram_intervals(j, m);
  if (j.contains("rcvbuf_errors") && !j["rcvbuf_errors"].is_null()) {
    m.rcvbuf_errors = get_uint(j, "rcvbuf_errors", 0, kMaxTestBytes);
  }
  m.facts = get_facts(j);
  m.error = get_string(j, "error");
  return m;
}

// One field of a request's test, held to its range; an enum by its name.
template <typename Value>
void read_test_field(const json& j, const spec::Field& f, Value& value) {
  if constexpr (std::is_same_v<Value, bool>) {
    value = get_bool(j, f.key);
  } else if constexpr (std::is_enum_v<Value>) {
    if (!spec::parse(get_string(j, f.key), value)) bad(fmt::format("'{}' has an unknown value", f.key));
  } else {
    if constexpr (std::is_floating_point_v<Value>) {
      value = get_double(j, f.key, f.most);
    } else {
      value = static_cast<Value>(get_uint(j, f.key, 0, static_cast<std::uint64_t>(f.most)));
    }
    if (static_cast<double>(value) < f.least && !(f.or_zero && value == 0)) {
      bad(fmt::format("'{}' = {} is below {}{}", f.key, value, f.least, f.or_zero ? " (0 for none)" : ""));
    }
  }
}

// The test a request carries: its kind's fields, each in range; a field of
// another kind's part is refused, as it would go unread.
spec::Test decode_test(const json& j) {
  spec::Test test;
  test.kind = get_enum(j, "kind", kAllKinds);
  spec::for_each_field(test, [&](const spec::Field& f, auto& value) {
    if (spec::reads(test.kind, f.part)) {
      read_test_field(j, f, value);
    } else if (j.contains(f.key)) {
      bad(fmt::format("'{}' is for {} tests, not {} ones", f.key, to_string(f.part), to_string(test.kind)));
    }
  });
  return test;
}

// Addresses as inet_ntop writes them, so that the server's accounting by
// source finds them; at most kMaxFlowSources, for flows tests alone.
void get_flow_sources(const json& j, TestRequest& m) {
  constexpr std::size_t kMaxFlowSources = 1024;
  const json& list = j["flow_sources"];
  if (!list.is_array() || list.size() > kMaxFlowSources) bad("'flow_sources' is not a short array");
  if (m.test.kind != TestKind::flows && !list.empty()) bad("'flow_sources' is for flows tests");
  for (const json& item : list) {
    if (!item.is_string()) bad("'flow_sources' holds something other than an address");
    const std::string text = item.get<std::string>();
    std::array<unsigned char, sizeof(in6_addr)> raw{};
    std::array<char, INET6_ADDRSTRLEN> canonical{};
    const int family = text.find(':') == std::string::npos ? AF_INET : AF_INET6;
    if (text.size() >= canonical.size() || ::inet_pton(family, text.c_str(), raw.data()) != 1 ||
        text != ::inet_ntop(family, raw.data(), canonical.data(), canonical.size())) {
      bad("'flow_sources' holds something other than an address");
    }
    m.flow_sources.push_back(text);
  }
}

TestRequest decode_test_request(const json& j) {
  TestRequest m;
  m.test = decode_test(j);
  m.mode = get_enum(j, "mode", kAllModes);
  m.key_type = get_string(j, "key_type");
  if (m.key_type.size() > 32 ||
      m.key_type.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    bad("'key_type' is not a key type name");
  }
  m.cipher = get_string(j, "cipher");
  if (!m.cipher.empty() && m.mode != Mode::tls) bad("'cipher' is for tls tests");
  m.verify_seed = get_uint(j, "verify_seed", 0, std::numeric_limits<std::uint64_t>::max());
  m.client_version = get_string(j, "client_version");
  m.round = static_cast<std::uint32_t>(get_uint_or(j, "round", 0, 0, 1'000'000));
  if (j.contains("server_cpu") && !j["server_cpu"].is_null())
    m.server_cpu = static_cast<int>(get_uint(j, "server_cpu", 0, kMaxCpu));
  if (j.contains("flow_sources")) get_flow_sources(j, m);
  if (j.contains("release_buffers")) {
    m.release_buffers = get_bool(j, "release_buffers");
    if (m.release_buffers && (m.test.kind != TestKind::flows || m.mode != Mode::tls))
      bad("'release_buffers' is for flows tests over tls");
  }
  return m;
}

FlowsResult decode_flows_result(const json& j) {
  constexpr std::uint64_t kMaxMemory = std::uint64_t{1} << 50;
  FlowsResult m;
  m.role = get_enum(j, "role", kRoles);
  m.flows = get_uint(j, "flows", 0, spec::kMaxFlows);
  m.failed = get_uint(j, "failed", 0, spec::kMaxFlows);
  m.transactions = get_uint(j, "transactions", 0, kMaxTransactions);
  m.elapsed_us = get_double(j, "elapsed_us", kMaxElapsedUs);
  m.cpu_s = get_double(j, "cpu_s", kMaxElapsedUs / 1e6 * spec::kMaxFlowThreads);
  m.establish_us = get_double(j, "establish_us", kMaxElapsedUs);
  m.threads = static_cast<std::uint32_t>(get_uint(j, "threads", 0, spec::kMaxFlowThreads));
  m.memory.rss_before = get_optional_uint(j, "rss_before", kMaxMemory);
  m.memory.rss_idle = get_optional_uint(j, "rss_idle", kMaxMemory);
  m.memory.rss_after = get_optional_uint(j, "rss_after", kMaxMemory);
  m.memory.tcp_pages_before = get_optional_uint(j, "tcp_pages_before", kMaxMemory);
  m.memory.tcp_pages_idle = get_optional_uint(j, "tcp_pages_idle", kMaxMemory);
  m.memory.tcp_pages_after = get_optional_uint(j, "tcp_pages_after", kMaxMemory);
  m.memory.heap_before = get_optional_uint(j, "heap_before", kMaxMemory);
  m.memory.heap_idle = get_optional_uint(j, "heap_idle", kMaxMemory);
  m.memory.heap_after = get_optional_uint(j, "heap_after", kMaxMemory);
  m.error = get_string(j, "error");
  return m;
}

Message decode_object(const json& j) {
  const std::string type = get_string(j, "type");
  if (type == "test_request") return decode_test_request(j);
  if (type == "test_accept") {
    TestAccept m;
    m.cookie = get_cookie(j, "cookie");
    m.server_version = get_string(j, "server_version");
    m.tls_library = get_string(j, "tls_library");
    m.cpu_model = get_string(j, "cpu_model");
    m.cpu_features = get_string(j, "cpu_features");
    m.kernel = get_string(j, "kernel");
    m.tls_versions = get_string(j, "tls_versions");
    m.tls_ciphers = get_string(j, "tls_ciphers");
    m.tls_groups = get_string(j, "tls_groups");
    m.ktls = get_bool(j, "ktls");
    m.tls_ulps = get_string(j, "tls_ulps");
    if (j.contains("certificate_key_type")) m.certificate_key_type = get_string(j, "certificate_key_type");
    const json& ports = j.contains("udp_ports") ? j["udp_ports"] : json::array();
    if (!ports.is_array() || ports.size() > kMaxSenders) bad("'udp_ports' is not a short array");
    for (const json& port : ports) {
      if (!port.is_number_unsigned() || port.get<std::uint64_t>() == 0 || port.get<std::uint64_t>() > 65535)
        bad("'udp_ports' holds something other than a port");
      m.udp_ports.push_back(port.get<std::uint16_t>());
    }
    return m;
  }
  if (type == "ready") return Ready{};
  if (type == "clock_request") return ClockRequest{};
  if (type == "clock_reply") {
    // From the epoch to the year 2500: a clock, not a stray number.
    ClockReply reply{
        static_cast<std::int64_t>(get_uint(j, "realtime_ns", 0, 16'725'225'600ull * 1'000'000'000ull)), {}};
    if (j.contains("no_quic")) reply.no_quic = get_string(j, "no_quic");
    return reply;
  }
  if (type == "datagram_result") return decode_datagram_result(j);
  if (type == "flows_result") return decode_flows_result(j);
  if (type == "refusal") return Refusal{get_string(j, "reason")};
  if (type == "side_result") {
    SideResult m;
    m.role = get_enum(j, "role", kRoles);
    m.bytes = get_uint(j, "bytes", 0, kMaxTestBytes);
    m.elapsed_us = get_double(j, "elapsed_us", kMaxElapsedUs);
    m.cpu_user_s = get_double(j, "cpu_user_s", kMaxElapsedUs / 1e6);
    m.cpu_system_s = get_double(j, "cpu_system_s", kMaxElapsedUs / 1e6);
    m.sndbuf_bytes = static_cast<int>(get_uint(j, "sndbuf_bytes", 0, kMaxInt));
    m.rcvbuf_bytes = static_cast<int>(get_uint(j, "rcvbuf_bytes", 0, kMaxInt));
    m.mss_bytes = static_cast<int>(get_uint(j, "mss_bytes", 0, kMaxInt));
    m.congestion = get_string(j, "congestion");
    m.ktls_send = get_bool(j, "ktls_send");
    m.ktls_receive = get_bool(j, "ktls_receive");
    m.tls_bytes = get_uint(j, "tls_bytes", 0, 2 * kMaxTestBytes);
    m.read_calls = get_optional_uint(j, "read_calls", kMaxTestBytes);
    m.write_calls = get_optional_uint(j, "write_calls", kMaxTestBytes);
    m.calibration = get_calibration(j);
    m.transaction_calibration = get_transaction_calibration(j);
    m.messages = get_uint(j, "messages", 0, kMaxTestBytes);
    m.payload_bytes = get_uint(j, "payload_bytes", 0, kMaxTestBytes);
    m.stream = static_cast<std::uint32_t>(get_uint(j, "stream", 0, kMaxStreams - 1));
    m.connections = get_uint_or(j, "connections", 0, 0, kMaxTransactions);
    m.resumed = get_uint_or(j, "resumed", 0, 0, m.connections);
    m.failed = get_uint_or(j, "failed", 0, 0, kMaxTransactions);
    m.wire_bytes_sent = get_uint_or(j, "wire_bytes_sent", 0, 0, 2 * kMaxTestBytes);
    m.offset_us = get_double(j, "offset_us", kMaxElapsedUs);
    get_intervals(j, m);
    m.facts = get_facts(j);
    m.error = get_string(j, "error");
    return m;
  }
  bad(fmt::format("unknown type '{}'", type));
}

}  // namespace

Preamble encode_preamble(ConnectionKind kind) {
  Preamble p{};
  std::memcpy(p.data(), kMagic, sizeof kMagic);
  p[6] = static_cast<std::byte>(kind);
  p[7] = static_cast<std::byte>(kVersion);
  return p;
}

bool could_begin_preamble(std::span<const std::byte> first) {
  const std::size_t n = std::min(first.size(), sizeof kMagic);
  return std::memcmp(first.data(), kMagic, n) == 0;
}

std::string describe_foreign_bytes(std::span<const std::byte> first) {
  // What other servers and clients send first: a greeting, an answer to our
  // bytes, or a request of their own.
  static constexpr std::pair<std::string_view, std::string_view> kKnown[] = {
      {"HTTP/", "HTTP"},   {"GET ", "HTTP"},     {"POST ", "HTTP"},      {"HEAD ", "HTTP"},
      {"PUT ", "HTTP"},    {"OPTIONS ", "HTTP"}, {"PRI * ", "HTTP/2"},   {"SSH-", "SSH"},
      {"\x15\x03", "TLS"}, {"\x16\x03", "TLS"},  {"220", "SMTP or FTP"}, {"+OK", "POP3"},
      {"* OK", "IMAP"},    {"-ERR", "Redis"},    {"RFB ", "VNC"}};
  std::size_t line = 0;
  while (line < first.size() && line < 40 && first[line] != std::byte{'\r'} && first[line] != std::byte{'\n'})
    ++line;
  std::string text = fmt::format("\"{}\"", printable(first.first(line)));
  const std::string_view bytes(reinterpret_cast<const char*>(first.data()), first.size());
  for (const auto& [start, protocol] : kKnown) {
    // A known start, or as much of one as came (at least 3 bytes: "HTT" then a stall).
    const std::size_t n = std::min(start.size(), bytes.size());
    if (n >= std::min<std::size_t>(3, start.size()) && bytes.substr(0, n) == start.substr(0, n))
      return fmt::format("{}, which looks like {}", text, protocol);
  }
  return text;
}

PreambleInfo parse_preamble(std::span<const std::byte, kPreambleBytes> bytes) {
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw ProtocolError(fmt::format("not a tlscmp peer (it sent {})", describe_foreign_bytes(bytes)));
  }
  const auto kind = static_cast<std::uint8_t>(bytes[6]);
  if (kind != static_cast<std::uint8_t>(ConnectionKind::control) &&
      kind != static_cast<std::uint8_t>(ConnectionKind::data) &&
      kind != static_cast<std::uint8_t>(ConnectionKind::handshake) &&
      kind != static_cast<std::uint8_t>(ConnectionKind::crr) &&
      kind != static_cast<std::uint8_t>(ConnectionKind::flow)) {
    throw ProtocolError(fmt::format("unknown connection kind {:#04x}", kind));
  }
  return {static_cast<ConnectionKind>(kind), static_cast<std::uint8_t>(bytes[7])};
}

void check_version(const PreambleInfo& preamble) {
  if (preamble.version != kVersion) {
    throw ProtocolError(
        fmt::format("the peer speaks tlscmp protocol version {}, this build speaks version {}",
                    preamble.version, kVersion));
  }
}

ConnectionKind decode_preamble(std::span<const std::byte, kPreambleBytes> bytes) {
  const PreambleInfo info = parse_preamble(bytes);
  check_version(info);
  return info.kind;
}

std::string body_text(const Message& message) {
  return std::visit(
      [](const auto& m) { return to_json(m).dump(-1, ' ', false, json::error_handler_t::replace); }, message);
}

std::vector<std::byte> encode(const Message& message) {
  const std::string body = body_text(message);
  const auto n = static_cast<std::uint32_t>(body.size());
  std::vector<std::byte> frame(kFrameHeaderBytes + body.size());
  store_big_u32(frame.data(), n);
  std::memcpy(frame.data() + kFrameHeaderBytes, body.data(), body.size());
  return frame;
}

std::size_t decode_frame_length(std::span<const std::byte, kFrameHeaderBytes> header) {
  const std::uint32_t n = load_big_u32(header.data());
  if (n == 0 || n > kMaxFrameBytes) {
    throw ProtocolError(fmt::format("bad control message: length {} is outside 1..{}", n, kMaxFrameBytes));
  }
  return n;
}

Message decode(std::span<const std::byte> body) {
  if (body.empty() || body.size() > kMaxFrameBytes) bad("empty or too long");
  check_depth(body);
  const auto* text = reinterpret_cast<const char*>(body.data());
  const json j = json::parse(text, text + body.size(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) bad("not valid JSON");
  if (!j.is_object()) bad("not a JSON object");
  return decode_object(j);
}

DataHeader encode_data_header(const Cookie& cookie, std::uint32_t stream) {
  DataHeader header{};
  std::memcpy(header.data(), cookie.data(), kCookieBytes);
  store_big_u16(header.data() + kCookieBytes, static_cast<std::uint16_t>(stream));
  return header;
}

DataHeaderInfo decode_data_header(std::span<const std::byte, kDataHeaderBytes> bytes) {
  DataHeaderInfo info;
  std::memcpy(info.cookie.data(), bytes.data(), kCookieBytes);
  info.stream = load_big_u16(bytes.data() + kCookieBytes);
  return info;
}

std::string cookie_hex(const Cookie& cookie) {
  std::string text;
  text.reserve(2 * kCookieBytes);
  for (std::byte b : cookie)
    text += fmt::format("{:02x}", std::to_integer<unsigned>(b));
  return text;
}

std::string rr_schedule_problem(double rate_tps, std::uint32_t streams) {
  if (rate_tps <= 0 || streams == 0) return {};
  const double spacing_us = 1e6 * streams / rate_tps;
  if (spacing_us >= kMinRrSpacingUs) return {};
  return fmt::format(
      "a rate of {:g} transactions/s over {} connection{} puts requests {:.3g} us apart on each; the "
      "schedule "
      "keeps {:g} us at the least: lower the rate or add connections (-P)",
      rate_tps, streams, streams == 1 ? "" : "s", spacing_us, kMinRrSpacingUs);
}

}  // namespace tlscmp::protocol
