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
#include "protocol/fields.hpp"
#include "spec/tls_policy.hpp"

namespace tlscmp::protocol {
namespace {

using namespace wire;

constexpr char kMagic[6] = {'T', 'L', 'S', 'C', 'M', 'P'};
// Control messages are flat objects; deeper nesting is refused before parsing.
constexpr int kMaxJsonDepth = 4;

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

// For fields added after the first release of the protocol: absent means `absent`.
std::uint64_t get_uint_or(const json& object, const char* name, std::uint64_t absent, std::uint64_t min,
                          std::uint64_t max) {
  return object.contains(name) ? get_uint(object, name, min, max) : absent;
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
  if (!m.tls_library.empty()) j["tls_library"] = m.tls_library;
  return j;
}

json to_json(const TestAccept& m) {
  return {{"type", "test_accept"},
          {"cookie", cookie_hex(m.cookie)},
          {"server_version", m.server_version},
          {"tls_library", m.tls_library},
          {"tls_library_name", m.tls_library_name},
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
  for (const auto& [mode, why] : m.refused)
    out[std::string("no_") + to_string(mode)] = why;
  return out;
}

json to_json(const KindResult& m) {
  json out = m.fields;
  out["type"] = m.type;
  return out;
}

json to_json(const Refusal& m) {
  return {{"type", "refusal"}, {"reason", m.reason}};
}

constexpr auto kMaxInt = static_cast<std::uint64_t>(std::numeric_limits<int>::max());

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
// source finds them; at most kMaxFlowSources (the kinds say whose tests
// may have them: kinds::check_request).
void get_flow_sources(const json& j, TestRequest& m) {
  constexpr std::size_t kMaxFlowSources = 1024;
  const json& list = j["flow_sources"];
  if (!list.is_array() || list.size() > kMaxFlowSources) bad("'flow_sources' is not a short array");
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
  if (!m.cipher.empty() && !facts(m.mode).tls_over_tcp) bad("'cipher' is for tls tests");
  m.verify_seed = get_uint(j, "verify_seed", 0, std::numeric_limits<std::uint64_t>::max());
  m.client_version = get_string(j, "client_version");
  m.round = static_cast<std::uint32_t>(get_uint_or(j, "round", 0, 0, 1'000'000));
  if (j.contains("server_cpu") && !j["server_cpu"].is_null())
    m.server_cpu = static_cast<int>(get_uint(j, "server_cpu", 0, kMaxCpu));
  if (j.contains("flow_sources")) get_flow_sources(j, m);
  if (j.contains("release_buffers")) m.release_buffers = get_bool(j, "release_buffers");
  if (j.contains("tls_library")) {
    m.tls_library = get_string(j, "tls_library");
    if (!spec::is_library_name(m.tls_library)) bad("'tls_library' is not a TLS library's name");
    if (!facts(m.mode).per_library) bad("'tls_library' is for tls and dtls tests");
  }
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
    if (j.contains("tls_library_name")) m.tls_library_name = get_string(j, "tls_library_name");
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
    for (const Mode mode : kAllModes) {
      const std::string key = std::string("no_") + to_string(mode);
      if (!j.contains(key)) continue;
      if (std::string why = get_string(j, key.c_str()); !why.empty()) reply.refused.emplace_back(mode, why);
    }
    return reply;
  }
  if (type.ends_with("_result")) {
    KindResult result{type, j};
    result.fields.erase("type");
    return result;
  }
  if (type == "refusal") return Refusal{get_string(j, "reason")};
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
      kind != static_cast<std::uint8_t>(ConnectionKind::flow) &&
      kind != static_cast<std::uint8_t>(ConnectionKind::http)) {
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
}  // namespace tlscmp::protocol
