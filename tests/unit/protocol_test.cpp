#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "kinds/flows/wire.hpp"
#include "kinds/kind.hpp"
#include "kinds/side_result.hpp"
#include "protocol/messages.hpp"

using namespace tlscmp;
using namespace tlscmp::protocol;

namespace {

std::span<const std::byte> bytes_of(const std::string& text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

template <typename T>
T round_trip(const T& message) {
  const std::vector<std::byte> frame = encode(message);
  REQUIRE(frame.size() > kFrameHeaderBytes);
  const std::size_t length =
      decode_frame_length(std::span<const std::byte, kFrameHeaderBytes>(frame.data(), 4));
  REQUIRE(length == frame.size() - kFrameHeaderBytes);
  const Message decoded = decode(std::span(frame).subspan(kFrameHeaderBytes));
  REQUIRE(std::holds_alternative<T>(decoded));
  return std::get<T>(decoded);
}

// A kind's result on the wire and back, through its walk.
template <typename T>
T result_round_trip(const T& result) {
  return read_result<T>(round_trip(kind_result(result)));
}

// A side result as a side reads the other's bytes.
kinds::SideResult side_of(const std::string& text) {
  return read_result<kinds::SideResult>(std::get<KindResult>(decode(bytes_of(text))));
}

// The JSON body the encoder writes for `message`.
nlohmann::json with_fields(const Message& message) {
  const std::vector<std::byte> frame = encode(message);
  return nlohmann::json::parse(reinterpret_cast<const char*>(frame.data()) + kFrameHeaderBytes,
                               reinterpret_cast<const char*>(frame.data()) + frame.size());
}

// Decodes `bytes` as the server takes a message: a test request is then
// held to its kind (kinds::check_request).
Message decode_request(std::span<const std::byte> bytes) {
  Message message = decode(bytes);
  if (const auto* request = std::get_if<TestRequest>(&message)) tlscmp::kinds::check_request(*request);
  return message;
}

std::array<std::byte, 4> header(std::uint32_t n) {
  return {std::byte(n >> 24), std::byte(n >> 16), std::byte(n >> 8), std::byte(n)};
}

}  // namespace

TEST_CASE("every control message survives encoding and decoding") {
  TestRequest request;
  request.server_cpu = 3;
  request.mode = Mode::tls;
  request.test.stream.direction = Direction::server_to_client;
  request.test.stream.bytes = kMaxTestBytes;
  request.test.chunk_bytes = kMaxChunkBytes;
  request.test.stream.no_delay = true;
  request.test.interval_ms = 250;
  request.test.verify = true;
  request.verify_seed = 0xfedcba9876543210ull;
  request.test.record_size = 1024;
  request.cipher = "ECDHE-ECDSA-AES128-SHA";
  request.client_version = "0.1.0";
  const TestRequest r = round_trip(request);
  CHECK(r.cipher == "ECDHE-ECDSA-AES128-SHA");
  CHECK(r.server_cpu == 3);
  CHECK(r.test.interval_ms == 250);
  CHECK(r.test.verify);
  CHECK(r.verify_seed == 0xfedcba9876543210ull);
  CHECK(r.test.duration_ms == 0);
  CHECK(r.test.record_size == 1024);
  CHECK(r.mode == Mode::tls);
  CHECK(r.test.stream.direction == Direction::server_to_client);
  CHECK(r.test.stream.bytes == kMaxTestBytes);
  CHECK(r.test.chunk_bytes == kMaxChunkBytes);
  CHECK(r.test.stream.no_delay);
  CHECK(r.client_version == "0.1.0");

  TestAccept accept;
  for (std::size_t i = 0; i < kCookieBytes; ++i)
    accept.cookie[i] = std::byte(0xf0 + i);
  accept.server_version = "0.1.0";
  accept.tls_library = "OpenSSL 3.0.19";
  accept.cpu_model = "AMD EPYC";
  accept.cpu_features = "aes avx2";
  accept.kernel = "Linux 6.1.0 x86_64";
  accept.tls_versions = "TLSv1.3";
  accept.tls_ciphers = "TLS_AES_128_GCM_SHA256";
  accept.tls_groups = "X25519";
  accept.ktls = true;
  accept.tls_ulps = "mptcp";
  const TestAccept a = round_trip(accept);
  CHECK(a.tls_versions == "TLSv1.3");
  CHECK(a.tls_ciphers == "TLS_AES_128_GCM_SHA256");
  CHECK(a.tls_groups == "X25519");
  CHECK(a.ktls);
  CHECK(a.tls_ulps == "mptcp");
  CHECK(a.cpu_features == "aes avx2");
  CHECK(a.kernel == "Linux 6.1.0 x86_64");
  CHECK(a.cookie == accept.cookie);
  CHECK(a.tls_library == "OpenSSL 3.0.19");

  CHECK(round_trip(Refusal{"too big"}).reason == "too big");
}

TEST_CASE("a side result survives the field walk both ways") {
  kinds::SideResult side;
  side.role = Role::sender;
  side.bytes = 12345;
  side.elapsed_us = 678.5;
  side.cpu_user_s = 0.25;
  side.cpu_system_s = 0.5;
  side.sndbuf_bytes = 2626560;
  side.rcvbuf_bytes = 131072;
  side.mss_bytes = 1448;
  side.congestion = "bbr";
  side.ktls_send = true;
  side.intervals = {{1000.5, 12000}, {2000, 345}};
  side.error = "reset";
  side.facts.tcp = TcpInfo{};
  side.facts.tcp->total_retrans = 3;
  side.facts.tcp->bytes_retrans = 4344;
  side.facts.tcp->rtt_us = 250;
  side.facts.tcp->cwnd_max = 88;
  side.facts.tcp->busy_us = 1000;
  side.facts.tcp->rwnd_limited_us = 400;
  side.facts.tcp->sndbuf_limited_us = 0;
  side.facts.host_cpu = HostCpu{};
  side.facts.host_cpu->steal = 2.5;
  side.facts.host_cpu->ticks = 40;
  side.facts.cpu_samples = {{0, 3}, {5, 9}};
  side.facts.pinned_cpu = 5;
  const kinds::SideResult s = result_round_trip(side);
  REQUIRE(s.facts.tcp);
  CHECK(s.facts.tcp->total_retrans == 3);
  CHECK(s.facts.tcp->bytes_retrans == 4344);
  CHECK(s.facts.tcp->rtt_us == 250);
  CHECK(s.facts.tcp->cwnd_max == 88);
  CHECK(s.facts.tcp->rwnd_limited_share() == doctest::Approx(0.4));
  REQUIRE(s.facts.host_cpu);
  CHECK(s.facts.host_cpu->steal == doctest::Approx(2.5));
  CHECK(s.facts.host_cpu->ticks == 40);
  CHECK(s.facts.cpu_samples == std::map<int, std::uint32_t>{{0, 3}, {5, 9}});
  CHECK(s.facts.main_cpu() == 5);
  CHECK(s.facts.pinned_cpu == 5);
  CHECK(s.mss_bytes == 1448);
  CHECK(s.congestion == "bbr");
  CHECK(s.ktls_send);
  CHECK_FALSE(s.ktls_receive);
  REQUIRE(s.intervals.size() == 2);
  CHECK(s.intervals[0].end_us == 1000.5);
  CHECK(s.intervals[0].bytes == 12000);
  CHECK(s.intervals[1].end_us == 2000);
  CHECK(s.intervals[1].bytes == 345);
  CHECK(s.role == Role::sender);
  CHECK(s.bytes == 12345);
  CHECK(s.elapsed_us == doctest::Approx(678.5));
  CHECK(s.cpu_system_s == doctest::Approx(0.5));
  CHECK(s.sndbuf_bytes == 2626560);
  CHECK(s.error == "reset");
}

TEST_CASE("the preamble names tlscmp, the connection kind and the version") {
  const Preamble control = encode_preamble(ConnectionKind::control);
  CHECK(decode_preamble(control) == ConnectionKind::control);
  CHECK(decode_preamble(encode_preamble(ConnectionKind::data)) == ConnectionKind::data);

  Preamble other_version = control;
  other_version[7] = static_cast<std::byte>(kVersion + 1);
  const std::string other = fmt::format("protocol version {}", kVersion + 1);
  CHECK_THROWS_WITH_AS(decode_preamble(other_version), doctest::Contains(other.c_str()), ProtocolError);

  Preamble unknown_kind = control;
  unknown_kind[6] = std::byte{'X'};
  CHECK_THROWS_AS(decode_preamble(unknown_kind), ProtocolError);

  Preamble http{};
  std::memcpy(http.data(), "GET / HT", 8);
  CHECK_THROWS_WITH_AS(decode_preamble(http),
                       "not a tlscmp peer (it sent \"GET / HT\", which looks like HTTP)", ProtocolError);
}

TEST_CASE("a peer of another protocol is told from its first byte, and named where it is a known one") {
  const Preamble control = encode_preamble(ConnectionKind::control);
  for (std::size_t n = 0; n <= control.size(); ++n)
    CHECK(could_begin_preamble(std::span(control).first(n)));
  CHECK(could_begin_preamble(bytes_of("TLSCMPX\x09")));  // the kind and version are judged later
  CHECK_FALSE(could_begin_preamble(bytes_of("H")));
  CHECK_FALSE(could_begin_preamble(bytes_of("TLSX")));
  CHECK_FALSE(could_begin_preamble(bytes_of("TLSCMQ")));

  CHECK(describe_foreign_bytes(bytes_of("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n")) ==
        "\"HTTP/1.1 400 Bad Request\", which looks like HTTP");
  CHECK(describe_foreign_bytes(bytes_of("HTT")) == "\"HTT\", which looks like HTTP");
  CHECK(describe_foreign_bytes(bytes_of("HT")) == "\"HT\"");  // too little to tell
  CHECK(describe_foreign_bytes(bytes_of("SSH-2.0-OpenSSH_9.2p1\r\n")) ==
        "\"SSH-2.0-OpenSSH_9.2p1\", which looks like SSH");
  CHECK(describe_foreign_bytes(bytes_of(std::string("\x15\x03\x03\x00\x02\x02\x46", 7))) ==
        "\"\\x15\\x03\\x03\\x00\\x02\\x02F\", which looks like TLS");
  CHECK(describe_foreign_bytes(bytes_of("-ERR unknown command 'TLSCMPC'\r\n")) ==
        "\"-ERR unknown command 'TLSCMPC'\", which looks like Redis");
  CHECK(describe_foreign_bytes(bytes_of(std::string("\x00\x01", 2))) == "\"\\x00\\x01\"");
  // At most 40 bytes of a long first line.
  CHECK(describe_foreign_bytes(bytes_of(std::string(100, 'x'))) == "\"" + std::string(40, 'x') + "\"");
}

TEST_CASE("a data connection's header carries the cookie, then the stream index big-endian") {
  protocol::Cookie cookie{};
  for (std::size_t i = 0; i < cookie.size(); ++i)
    cookie[i] = static_cast<std::byte>(i + 1);
  const protocol::DataHeader header = protocol::encode_data_header(cookie, 0x0102);
  CHECK(header[0] == std::byte{1});
  CHECK(header[protocol::kCookieBytes] == std::byte{0x01});
  CHECK(header[protocol::kCookieBytes + 1] == std::byte{0x02});
  const protocol::DataHeaderInfo back = protocol::decode_data_header(header);
  CHECK(back.cookie == cookie);
  CHECK(back.stream == 0x0102);
  CHECK(
      protocol::decode_data_header(protocol::encode_data_header(cookie, protocol::kMaxStreams - 1)).stream ==
      protocol::kMaxStreams - 1);
}

TEST_CASE("frame lengths are bounded before anything is allocated") {
  CHECK(decode_frame_length(header(1)) == 1);
  CHECK(decode_frame_length(header(kMaxFrameBytes)) == kMaxFrameBytes);
  for (std::uint32_t n : {0u, static_cast<std::uint32_t>(kMaxFrameBytes + 1), 0x7fffffffu, 0xffffffffu}) {
    CAPTURE(n);
    CHECK_THROWS_AS(decode_frame_length(header(n)), ProtocolError);
  }
}

TEST_CASE("malformed bodies are refused") {
  const char* bodies[] = {
      "",
      "not json",
      "[1,2,3]",
      "\"test_request\"",
      "{}",
      R"({"type":"launch_missiles"})",
      R"({"type":7})",
      // test_request: missing, mistyped and out-of-range fields
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":1,"chunk_bytes":1,"no_delay":false})",
      R"({"type":"test_request","kind":"datagram","mode":"udp","direction":"client_to_server","bytes":1,"chunk_bytes":1,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"sideways","bytes":1,"chunk_bytes":1,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":0,"chunk_bytes":1,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":-5,"chunk_bytes":1,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":1.5,"chunk_bytes":1,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":"1","chunk_bytes":1,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":18446744073709551615,"chunk_bytes":1,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":1,"chunk_bytes":0,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":1,"chunk_bytes":4294967295,"no_delay":false,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":1,"chunk_bytes":1,"no_delay":0,"client_version":"x"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":1,"chunk_bytes":1,"no_delay":false,"client_version":"a\nb"})",
      R"({"type":"test_request","kind":"stream","mode":"tcp","direction":"client_to_server","bytes":1,"chunk_bytes":1,"no_delay":false,"client_version":"x","cipher":"AES128-SHA"})",
      R"({"type":"test_request","kind":"stream","mode":"tls","direction":"client_to_server","bytes":1,"chunk_bytes":1,"no_delay":false,"client_version":"x","cipher":7})",
      // test_accept: bad cookies
      R"({"type":"test_accept","cookie":"00","server_version":"x","tls_library":"x","cpu_model":"x"})",
      R"({"type":"test_accept","cookie":"zz000000000000000000000000000000","server_version":"x","tls_library":"x","cpu_model":"x"})",
      // side_result: negative or absurd numbers
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":-1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"error":""})",
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":1e300,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"error":""})",
      R"({"type":"side_result","role":"judge","bytes":1,"elapsed_us":1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"error":""})",
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":4294967296,"rcvbuf_bytes":0,"error":""})",
      // side_result: facts that are not facts
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"mss_bytes":0,"congestion":"","ktls_send":false,"ktls_receive":false,"tls_bytes":0,"messages":0,"payload_bytes":0,"stream":0,"offset_us":0,"intervals":[],"facts":{"tcp_info":null,"host_cpu":null,"cpu_samples":[[99999,1]],"pinned_cpu":null},"error":""})",
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"mss_bytes":0,"congestion":"","ktls_send":false,"ktls_receive":false,"tls_bytes":0,"messages":0,"payload_bytes":0,"stream":0,"offset_us":0,"intervals":[],"facts":{"tcp_info":null,"host_cpu":{"user":101,"system":0,"irq":0,"softirq":0,"steal":0,"idle":0,"ticks":1},"cpu_samples":[],"pinned_cpu":null},"error":""})",
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"mss_bytes":0,"congestion":"","ktls_send":false,"ktls_receive":false,"tls_bytes":0,"messages":0,"payload_bytes":0,"stream":0,"offset_us":0,"intervals":[],"facts":{"tcp_info":{"total_retrans":-1},"host_cpu":null,"cpu_samples":[],"pinned_cpu":null},"error":""})",
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"mss_bytes":0,"congestion":"","ktls_send":false,"ktls_receive":false,"tls_bytes":0,"messages":0,"payload_bytes":0,"stream":0,"offset_us":0,"intervals":[],"facts":[],"error":""})",
      // nesting
      R"({"type":"refusal","reason":"x","extra":[[[[[[[[[[]]]]]]]]]]})",
      "\xff\xfe{}",
  };
  // As a side takes a message: a kind's result is then read by its kind.
  const auto take = [](const char* body) {
    const Message m = decode(bytes_of(body));
    if (const auto* result = std::get_if<KindResult>(&m)) kinds::check_result(*result);
  };
  for (const char* body : bodies) {
    CAPTURE(body);
    CHECK_THROWS_AS(take(body), ProtocolError);
  }
  CHECK_THROWS_WITH_AS(take(R"({"type":"launch_result"})"), doctest::Contains("no kind has results of type"),
                       ProtocolError);
}

TEST_CASE("a test runs for a byte count or for a time, never both or neither") {
  // A well-formed request, edited: the encoder writes every field, so the test
  // only names those it is about.
  auto request = [](const std::string& bytes, const std::string& duration, const std::string& interval) {
    nlohmann::json j = with_fields(TestRequest{});
    j["bytes"] = nlohmann::json::parse(bytes);
    j["duration_ms"] = nlohmann::json::parse(duration);
    j["interval_ms"] = nlohmann::json::parse(interval);
    j["chunk_bytes"] = 1;
    return j.dump();
  };
  CHECK(std::get<TestRequest>(decode_request(bytes_of(request("5", "0", "0")))).test.stream.bytes == 5);
  CHECK(std::get<TestRequest>(decode_request(bytes_of(request("0", "2000", "100")))).test.duration_ms ==
        2000);
  CHECK_THROWS_AS(decode_request(bytes_of(request("0", "0", "0"))), ProtocolError);
  CHECK_THROWS_AS(decode_request(bytes_of(request("5", "2000", "0"))), ProtocolError);
  CHECK_THROWS_AS(decode_request(bytes_of(request("0", "86400001", "0"))), ProtocolError);  // over a day
  CHECK_THROWS_AS(decode_request(bytes_of(request("5", "0", "99"))), ProtocolError);  // interval too short
}

TEST_CASE("an rr request: sizes, a count or a time, and open loop only for a time") {
  auto request = [](auto edit) {
    TestRequest rr;
    rr.test.kind = TestKind::rr;
    nlohmann::json j = with_fields(rr);
    j["chunk_bytes"] = 1;
    j["rr_request_bytes"] = 64;
    j["rr_response_bytes"] = 16384;
    j["transactions"] = 1000;
    j["rate_tps"] = 0;
    j["duration_ms"] = 0;
    edit(j);
    return j.dump();
  };
  const auto decode_text = [](const std::string& text) { return decode_request(bytes_of(text)); };
  const auto good = std::get<TestRequest>(decode_text(request([](nlohmann::json&) {})));
  CHECK(good.test.rr.request_bytes == 64);
  CHECK(good.test.rr.response_bytes == 16384);
  CHECK(good.test.rr.transactions == 1000);
  CHECK(good.test.kind == TestKind::rr);
  const auto open = std::get<TestRequest>(decode_text(request([](nlohmann::json& j) {
    j["transactions"] = 0;
    j["duration_ms"] = 2000;
    j["rate_tps"] = 2500.5;
  })));
  CHECK(open.test.rr.rate_tps == 2500.5);
  CHECK(round_trip(open).test.rr.rate_tps == 2500.5);
  const std::vector<void (*)(nlohmann::json&)> bad{
      [](nlohmann::json& j) { j["rr_response_bytes"] = 0; },
      [](nlohmann::json& j) { j["rr_request_bytes"] = kMaxRrBytes + 1; },
      [](nlohmann::json& j) { j["duration_ms"] = 1000; },                    // and transactions
      [](nlohmann::json& j) { j["transactions"] = 0; },                      // neither
      [](nlohmann::json& j) { j["rate_tps"] = 100; },                        // open loop for a count
      [](nlohmann::json& j) { j["bytes"] = 10; },                            // a bulk field
      [](nlohmann::json& j) { j["mode"] = "udp"; },                          // datagrams
      [](nlohmann::json& j) { j["direction"] = "server_to_client"; },        // no direction
      [](nlohmann::json& j) { j["streams"] = 4, j["transactions"] = 3; },    // fewer than the connections
      [](nlohmann::json& j) { j["rate_tps"] = -1, j["duration_ms"] = 10; },  // negative
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    CAPTURE(i);
    CHECK_THROWS_AS(decode_text(request(bad[i])), ProtocolError);
  }
  // rr fields on a bulk request are refused too.
  nlohmann::json bulk = with_fields(TestRequest{});
  bulk["bytes"] = 5;
  bulk["chunk_bytes"] = 1;
  bulk["transactions"] = 5;
  CHECK_THROWS_AS(decode_request(bytes_of(bulk.dump())), ProtocolError);
}

TEST_CASE("a request names its kind, and fields of another kind are refused") {
  // A well-formed request of each kind, as the client sends it.
  auto of_kind = [](TestKind kind) {
    TestRequest r;
    r.test = kinds::slice_of(kind).example();
    r.mode = kinds::slice_of(kind).example_mode;
    return with_fields(r);
  };
  const auto decode_json = [](const nlohmann::json& j) { return decode_request(bytes_of(j.dump())); };
  for (TestKind kind : kAllKinds) {
    CAPTURE(to_string(kind));
    const nlohmann::json good = of_kind(kind);
    CHECK(good["kind"] == to_string(kind));
    CHECK(std::get<TestRequest>(decode_json(good)).test.kind == kind);
    nlohmann::json missing = good;
    missing.erase("kind");
    CHECK_THROWS_WITH_AS(decode_json(missing), doctest::Contains("kind"), ProtocolError);
  }
  nlohmann::json unknown = of_kind(TestKind::stream);
  unknown["kind"] = "quic";
  CHECK_THROWS_WITH_AS(decode_json(unknown), doctest::Contains("'kind' has an unknown value"), ProtocolError);
  // The fields decide nothing: each request, relabelled as another kind, is refused.
  const std::vector<std::pair<TestKind, TestKind>> relabelled{
      {TestKind::rr, TestKind::stream},        {TestKind::handshake, TestKind::stream},
      {TestKind::datagram, TestKind::stream},  {TestKind::stream, TestKind::rr},
      {TestKind::stream, TestKind::handshake}, {TestKind::stream, TestKind::datagram},
      {TestKind::datagram, TestKind::crr},     {TestKind::handshake, TestKind::crr}};
  for (const auto& [fields, label] : relabelled) {
    CAPTURE(to_string(fields));
    CAPTURE(to_string(label));
    nlohmann::json j = of_kind(fields);
    j["kind"] = to_string(label);
    CHECK_THROWS_AS(decode_json(j), ProtocolError);
  }
  // crr is rr's sizes on a connection each: closed loop, no --verify.
  nlohmann::json crr = of_kind(TestKind::crr);
  crr["verify"] = true;
  CHECK_THROWS_WITH_AS(decode_json(crr), doctest::Contains("--verify does not apply to --crr"),
                       ProtocolError);
}

TEST_CASE("interval lists are checked") {
  auto result = [](const std::string& intervals) {
    kinds::SideResult side;
    side.bytes = 100;
    side.elapsed_us = 10;
    nlohmann::json j = with_fields(kind_result(side));
    j["intervals"] = nlohmann::json::parse(intervals);
    return j.dump();
  };
  CHECK(side_of(result("[[5,60],[10,40]]")).intervals.size() == 2);
  for (const char* bad : {"{}", "[[5]]", "[[5,60,1]]", "[5,60]", "[[10,60],[5,40]]", "[[5,-1]]", "[[5,101]]",
                          "[[5,60],[10,41]]", R"([["5",60]])", "[[1e300,1]]"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(side_of(result(bad)), ProtocolError);
  }
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxIntervals; ++i)
    many += std::string(i ? "," : "") + "[1,0]";
  CHECK_THROWS_WITH_AS(side_of(result(many + "]")), doctest::Contains("intervals"), ProtocolError);
}

TEST_CASE("strings are bounded") {
  const std::string ok = R"({"type":"refusal","reason":")" + std::string(kMaxStringBytes, 'a') + "\"}";
  CHECK(std::get<Refusal>(decode(bytes_of(ok))).reason.size() == kMaxStringBytes);
  const std::string too_long =
      R"({"type":"refusal","reason":")" + std::string(kMaxStringBytes + 1, 'a') + "\"}";
  CHECK_THROWS_AS(decode(bytes_of(too_long)), ProtocolError);
}

TEST_CASE("deep nesting is refused without parsing") {
  const std::string deep = std::string(30000, '[') + std::string(30000, ']');
  CHECK_THROWS_WITH_AS(decode(bytes_of(deep)), doctest::Contains("nested"), ProtocolError);
  // Brackets inside strings do not count.
  CHECK(std::get<Refusal>(decode(bytes_of(R"({"type":"refusal","reason":"[[[[[[[[[[\"[["})"))).reason ==
        "[[[[[[[[[[\"[[");
}

TEST_CASE("unknown fields are ignored, so that later versions can add some") {
  const auto m = decode(bytes_of(R"({"type":"refusal","reason":"busy","retry_after_s":5})"));
  CHECK(std::get<Refusal>(m).reason == "busy");
}

TEST_CASE("cookies print as lower-case hex") {
  Cookie cookie{};
  cookie[0] = std::byte{0xab};
  cookie[15] = std::byte{0x01};
  CHECK(cookie_hex(cookie) == "ab000000000000000000000000000001");
}

TEST_CASE("a side result from a peer without facts has none, and one with them keeps them") {
  const std::string head =
      R"({"type":"side_result","role":"sender","bytes":1,"elapsed_us":1,"cpu_user_s":0,"cpu_system_s":0,"sndbuf_bytes":0,"rcvbuf_bytes":0,"mss_bytes":0,"congestion":"","ktls_send":false,"ktls_receive":false,"tls_bytes":0,"messages":0,"payload_bytes":0,"stream":0,"offset_us":0,"intervals":[],)";
  const auto without = side_of(head + R"("error":""})");
  CHECK_FALSE(without.facts.tcp);
  CHECK(without.facts.cpu_samples.empty());
  const auto with = side_of(
      head +
      R"("facts":{"tcp_info":null,"host_cpu":{"user":1,"system":2,"irq":0,"softirq":0,"steal":0,"idle":97,"ticks":100},"cpu_samples":[[1,4]],"pinned_cpu":1},"error":""})");
  CHECK(with.facts.host_cpu->idle == 97);
  CHECK(with.facts.main_cpu() == 1);
  CHECK(with.facts.pinned_cpu == 1);
}

TEST_CASE("an rr or crr side's calibration survives encoding, and one out of bounds is refused") {
  kinds::SideResult side;
  side.role = Role::receiver;
  measure::TransactionCalibration c;
  c.suite = "TLS_AES_128_GCM_SHA256";
  c.aead = "AES-128-GCM";
  c.request_bytes = 64;
  c.response_bytes = 1 << 20;
  c.record_bytes = 16384;
  c.client_crypto_us = 0.5;
  c.server_crypto_us = 0.75;
  c.client_tls_us = 2;
  c.server_tls_us = 3;
  side.transaction_calibration = c;
  const kinds::SideResult rr = result_round_trip(side);
  REQUIRE(rr.transaction_calibration);
  CHECK(rr.transaction_calibration->response_bytes == 1u << 20);
  CHECK(rr.transaction_calibration->server_crypto_us == doctest::Approx(0.75));
  CHECK_FALSE(rr.transaction_calibration->client_handshake_us);
  c.key_type = "rsa-2048";
  c.group = "X25519";
  c.resumed = true;
  c.client_handshake_us = 700;
  c.server_handshake_us = 1500;
  side.transaction_calibration = c;
  const kinds::SideResult crr = result_round_trip(side);
  REQUIRE(crr.transaction_calibration);
  CHECK(crr.transaction_calibration->resumed);
  CHECK(crr.transaction_calibration->key_type == "rsa-2048");
  CHECK(*crr.transaction_calibration->server_handshake_us == doctest::Approx(1500));
  CHECK_FALSE(result_round_trip(kinds::SideResult{}).transaction_calibration);  // TCP: none

  // A figure below zero or past a hundred seconds, or a size of 0, is refused.
  const std::vector<std::pair<const char*, nlohmann::json>> bad{
      {"client_tls_us", -1}, {"server_handshake_us", 1e9}, {"request_bytes", 0}, {"resumed", "yes"}};
  for (const auto& [key, value] : bad) {
    CAPTURE(key);
    nlohmann::json j = with_fields(kind_result(side));
    j["transaction_calibration"][key] = value;
    CHECK_THROWS_AS(side_of(j.dump()), ProtocolError);
  }
}

TEST_CASE("a flows result survives encoding and decoding, a missing memory reading as none") {
  kinds::FlowsResult flows;
  flows.role = Role::receiver;
  flows.flows = 1000;
  flows.failed = 2;
  flows.transactions = 123456;
  flows.elapsed_us = 2e6;
  flows.cpu_s = 1.5;
  flows.establish_us = 650000;
  flows.threads = 2;
  flows.memory.rss_before = 10 << 20;
  flows.memory.rss_idle = 60 << 20;
  flows.memory.tcp_pages_after = 12;
  flows.error = "flow 7: nothing moved";
  const kinds::FlowsResult f = result_round_trip(flows);
  CHECK(f.role == Role::receiver);
  CHECK(f.flows == 1000);
  CHECK(f.failed == 2);
  CHECK(f.transactions == 123456);
  CHECK(f.cpu_s == doctest::Approx(1.5));
  CHECK(f.establish_us == doctest::Approx(650000));
  CHECK(f.threads == 2);
  CHECK(f.memory.rss_before == std::uint64_t{10} << 20);
  CHECK(f.memory.rss_idle == std::uint64_t{60} << 20);
  CHECK_FALSE(f.memory.rss_after);
  CHECK_FALSE(f.memory.tcp_pages_before);
  CHECK(f.memory.tcp_pages_after == 12);
  CHECK(f.error == "flow 7: nothing moved");

  TestRequest request;
  request.mode = Mode::tls;
  request.test.kind = TestKind::flows;
  request.test.rr = {1, 1, 0, 0};
  request.test.duration_ms = 1000;
  request.test.flows = {spec::FlowWork::rr, 100, 2};
  request.release_buffers = true;
  const TestRequest r = round_trip(request);
  CHECK(r.release_buffers);
  CHECK(r.test.flows.flows == 100);
  CHECK(r.test.flows.threads == 2);
}
