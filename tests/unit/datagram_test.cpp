// Datagram tests (udp, dtls): the datagram header, the control messages that
// carry their counts, the client's flags and the reports.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "error.hpp"
#include "kinds/datagram/results.hpp"
#include "kinds/datagram/wire.hpp"
#include "kinds/kind.hpp"
#include "protocol/datagram.hpp"
#include "protocol/messages.hpp"
#include "report/report.hpp"
#include "spec/size.hpp"

using namespace tlscmp;
using namespace tlscmp::protocol;

namespace {

std::span<const std::byte> bytes_of(const std::string& text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

nlohmann::json body_of(const Message& message) {
  const std::vector<std::byte> frame = encode(message);
  return nlohmann::json::parse(reinterpret_cast<const char*>(frame.data()) + kFrameHeaderBytes,
                               reinterpret_cast<const char*>(frame.data()) + frame.size());
}

// As the server takes a message: a test request is then held to its kind.
Message decode_json(const nlohmann::json& j) {
  Message message = decode(bytes_of(j.dump()));
  if (const auto* request = std::get_if<TestRequest>(&message)) tlscmp::kinds::check_request(*request);
  return message;
}

// A datagram result as a side reads the other's: a kind result, through its walk.
kinds::DatagramResult result_of(const nlohmann::json& j) {
  return read_result<kinds::DatagramResult>(std::get<KindResult>(decode_json(j)));
}

TestRequest udp_request() {
  TestRequest r;
  r.test.kind = TestKind::datagram;
  r.mode = Mode::udp;
  r.test.datagram.packets = 1000;
  r.test.chunk_bytes = 15;
  r.test.streams = 3;
  r.test.datagram.rate_bps = 1'000'000;
  return r;
}

session::ClientConfig client(std::vector<std::string> args) {
  args.insert(args.begin(), {"tlscmp", "client"});
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  return std::get<cli::ClientCommand>(cli::parse_command_line(static_cast<int>(argv.size()), argv.data()))
      .config;
}

}  // namespace

TEST_CASE("the datagram header: magic, sender, tag and a big-endian sequence number") {
  std::array<std::byte, kDatagramHeaderBytes> out{};
  const DatagramHeader header{
      2, {std::byte{0xde}, std::byte{0xad}, std::byte{0xbe}, std::byte{0xef}}, 0x01020304};
  encode_datagram_header(header, out);
  CHECK(out[0] == std::byte{'u'});
  CHECK(out[1] == std::byte{'T'});
  CHECK(out[2] == std::byte{2});
  CHECK(out[8] == std::byte{1});
  CHECK(out[11] == std::byte{4});
  const auto back = decode_datagram_header(out);
  REQUIRE(back);
  CHECK(back->sender == 2);
  CHECK(back->tag == header.tag);
  CHECK(back->sequence == 0x01020304u);

  set_datagram_sequence(out, 0xfffffffe);
  CHECK(decode_datagram_header(out)->sequence == 0xfffffffeu);
  // With a payload after the header, as the senders send it.
  std::vector<std::byte> datagram(1000);
  std::copy(out.begin(), out.end(), datagram.begin());
  CHECK(decode_datagram_header(datagram)->sequence == 0xfffffffeu);
}

TEST_CASE("what is not a tlscmp datagram is told apart") {
  std::array<std::byte, kDatagramHeaderBytes> out{};
  encode_datagram_header({}, out);
  CHECK(decode_datagram_header(std::span(out).first(kDatagramHeaderBytes - 1)) == std::nullopt);  // short
  CHECK(decode_datagram_header({}) == std::nullopt);
  auto wrong_magic = out;
  wrong_magic[0] = std::byte{'x'};
  CHECK(decode_datagram_header(wrong_magic) == std::nullopt);
  auto flags = out;
  flags[3] = std::byte{1};
  CHECK(decode_datagram_header(flags) == std::nullopt);
  CHECK(decode_datagram_header(bytes_of("GET / HTTP/1.1\r\n\r\n")) == std::nullopt);
}

TEST_CASE("a datagram test request survives encoding, and its limits are checked") {
  const auto back = std::get<TestRequest>(decode_json(body_of(udp_request())));
  CHECK(back.mode == Mode::udp);
  CHECK(back.test.datagram.packets == 1000);
  CHECK(back.test.datagram.rate_bps == 1'000'000);
  CHECK(back.test.streams == 3);

  auto refused = [](auto edit) {
    nlohmann::json j = body_of(udp_request());
    edit(j);
    CAPTURE(j.dump());
    CHECK_THROWS_AS(result_of(j), ProtocolError);
  };
  refused([](auto& j) { j["chunk_bytes"] = kDatagramHeaderBytes - 1; });  // no room for the header
  refused([](auto& j) { j["chunk_bytes"] = kMaxUdpDatagramBytes + 1; });
  refused([](auto& j) {
    j["mode"] = "dtls";
    j["chunk_bytes"] = kMaxDtlsDatagramBytes + 1;  // one record per datagram
  });
  refused([](auto& j) { j["direction"] = "server_to_client"; });
  refused([](auto& j) { j["bytes"] = 100; });         // datagram tests count packets
  refused([](auto& j) { j["duration_ms"] = 1000; });  // packets and a duration
  refused([](auto& j) { j["packets"] = 0; });         // neither
  refused([](auto& j) { j["streams"] = kMaxSenders + 1; });
  refused([](auto& j) { j["verify"] = true; });
  refused([](auto& j) { j["packets"] = -1; });
  refused([](auto& j) {
    j["mode"] = "tcp";  // packets and a rate belong to datagram tests
    j["bytes"] = 0;
  });
  nlohmann::json dtls = body_of(udp_request());
  dtls["mode"] = "dtls";
  dtls["chunk_bytes"] = kMaxDtlsDatagramBytes;
  CHECK(std::get<TestRequest>(decode_json(dtls)).mode == Mode::dtls);
}

TEST_CASE("ports, ready and the counts survive encoding") {
  TestAccept accept;
  accept.udp_ports = {4000, 4001};
  CHECK(std::get<TestAccept>(decode_json(body_of(accept))).udp_ports ==
        std::vector<std::uint16_t>{4000, 4001});
  CHECK(std::holds_alternative<Ready>(decode_json(body_of(Ready{}))));

  kinds::DatagramResult result;
  result.role = Role::receiver;
  result.senders = {{0, 10, 150, 1.5, 20.5, 1, 2}, {1, 7, 105, 0, 9, 0, 0}};
  result.elapsed_us = 20.5;
  result.foreign = 3;
  result.kernel_drops = 4;
  result.rcvbuf_errors = 5;
  result.intervals = {{250'000, 6, 7}, {400'000.5, 11, 10}};
  const auto back = result_of(body_of(kind_result(result)));
  REQUIRE(back.intervals.size() == 2);
  CHECK(back.intervals[1].end_us == 400'000.5);
  CHECK(back.intervals[1].received == 11);
  CHECK(back.intervals[1].expected == 10);
  nlohmann::json without = body_of(kind_result(result));
  without.erase("intervals");  // a peer without -i support sends none
  CHECK(result_of(without).intervals.empty());
  REQUIRE(back.senders.size() == 2);
  CHECK(back.senders[0].packets == 10);
  CHECK(back.senders[0].reordered == 1);
  CHECK(back.senders[0].duplicates == 2);
  CHECK(back.senders[1].last_us == 9);
  CHECK(back.foreign == 3);
  CHECK(back.kernel_drops == 4);
  CHECK(back.rcvbuf_errors == 5);
}

TEST_CASE("malformed ports and counts are refused") {
  TestAccept accept;
  accept.udp_ports = {4000};
  for (const char* ports : {"[0]", "[65536]", "[-1]", R"(["80"])", "80"}) {
    nlohmann::json j = body_of(accept);
    j["udp_ports"] = nlohmann::json::parse(ports);
    CAPTURE(ports);
    CHECK_THROWS_AS(decode_json(j), ProtocolError);
  }
  kinds::DatagramResult result;
  result.senders = {{0, 10, 150, 1, 2, 0, 0}, {1, 10, 150, 1, 2, 0, 0}};
  auto refused = [&](auto edit) {
    nlohmann::json j = body_of(kind_result(result));
    edit(j);
    CAPTURE(j.dump());
    CHECK_THROWS_AS(result_of(j), ProtocolError);
  };
  refused([](auto& j) { j["senders"][1]["sender"] = 0; });     // out of order
  refused([](auto& j) { j["senders"][0]["last_us"] = 0.5; });  // ends before it starts
  refused([](auto& j) { j["senders"][0]["packets"] = -3; });
  refused([](auto& j) { j["senders"] = nlohmann::json::array({1, 2}); });
  refused([](auto& j) { j["foreign"] = "many"; });
  refused([](auto& j) { j["intervals"] = nlohmann::json::parse("[[1.0, 2]]"); });  // not 3 numbers
  refused([](auto& j) { j["intervals"] = nlohmann::json::parse("[[2.0, 1, 1], [1.0, 1, 1]]"); });    // order
  refused([](auto& j) { j["intervals"] = nlohmann::json::parse("[[1.0, 15, 15], [2.0, 6, 6]]"); });  // > 20
  refused([](auto& j) { j["intervals"] = nlohmann::json::parse("[[1.0, -1, 1]]"); });
  refused([](auto& j) { j["intervals"] = "none"; });
  refused([](auto& j) {
    nlohmann::json many = nlohmann::json::array();
    for (std::uint32_t i = 0; i <= kMaxSenders; ++i)
      many.push_back(j["senders"][0]);
    j["senders"] = many;
  });
}

TEST_CASE("client flags in datagram modes") {
  const session::ClientConfig udp = client({"--mode", "udp"});
  CHECK(udp.modes == std::vector<Mode>{Mode::udp});
  CHECK(udp.test.datagram.packets == 1'000'000);  // seeds/002: a million datagrams of 15 bytes
  CHECK(udp.test.chunk_bytes == 15);
  CHECK(udp.test.stream.bytes == 0);
  CHECK(udp.test.datagram.rate_bps == 0);
  CHECK(udp.rounds == 1);

  const session::ClientConfig both = client({"--mode", "both-udp", "-n", "5000", "-l", "5000", "-b", "100M",
                                             "-P", "3", "--rcvbuf", "4M", "--repeat", "3"});
  CHECK(both.modes == std::vector<Mode>{Mode::udp, Mode::dtls});
  CHECK(both.test.datagram.packets == 5000);
  CHECK(both.test.chunk_bytes == 5000);
  CHECK(both.test.datagram.rate_bps == 100'000'000);  // powers of 1000, as iperf3's -b
  CHECK(both.test.streams == 3);
  CHECK(both.test.rcvbuf_bytes == 4u << 20);
  CHECK(both.rounds == 3);

  const session::ClientConfig timed = client({"--mode", "dtls", "-t", "2"});
  CHECK(timed.test.datagram.packets == 0);
  CHECK(timed.test.duration() == std::chrono::milliseconds(2000));
  CHECK(client({"--mode", "udp", "-l", "65507"}).test.chunk_bytes == 65507);
  CHECK(client({"--mode", "udp", "-i", "0.5"}).test.interval() == std::chrono::milliseconds(500));
  CHECK(client({"--mode", "dtls", "--gso"}).test.datagram.gso);
  CHECK_FALSE(udp.test.datagram.gso);
  CHECK(client({"--mode", "tcp"}).rounds == 5);
  CHECK(client({"--mode", "tcp"}).test.chunk_bytes == 64 * 1024);
}

TEST_CASE("datagram flags out of range, or meant for streams, are refused with a reason") {
  CHECK_THROWS_WITH_AS(client({"--mode", "udp", "-l", "11"}), doctest::Contains("12-byte header"),
                       UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "udp", "-l", "65508"}), doctest::Contains("largest UDP datagram"),
                       UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "dtls", "-l", "20000"}), doctest::Contains("DTLS record"),
                       UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "both-udp", "-l", "20000"}), doctest::Contains("DTLS record"),
                       UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "udp", "-R"}), doctest::Contains("-R"), UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "tcp", "-b", "1M"}), doctest::Contains("-b"), UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "tls", "--gso"}), doctest::Contains("--gso is for datagram modes"),
                       UsageError);
  CHECK_THROWS_AS(client({"--mode", "udp", "-P", "65"}), UsageError);
  CHECK_THROWS_AS(client({"--mode", "udp", "--verify"}), UsageError);
  CHECK_THROWS_AS(client({"--mode", "udp", "--framing", "len4", "--msg-size", "10"}), UsageError);
  CHECK_THROWS_AS(client({"--mode", "udp", "-b", "fast"}), UsageError);
  CHECK_THROWS_AS(client({"--mode", "udp", "-n", "0"}), UsageError);
}

TEST_CASE("rates are powers of 1000, counts powers of 1024") {
  CHECK(spec::parse_rate("100M", "-b", 0, 1ull << 50) == 100'000'000);
  CHECK(spec::parse_rate("1.5k", "-b", 0, 1ull << 50) == 1500);
  CHECK(spec::parse_rate("0", "-b", 0, 1ull << 50) == 0);
  CHECK(spec::parse_count("1M", "-n", 1, 1ull << 40) == 1048576);
  CHECK(spec::parse_count("1000000", "-n", 1, 1ull << 40) == 1'000'000);
  CHECK_THROWS_WITH_AS(spec::parse_count("0", "-n", 1, 10), doctest::Contains("datagrams"), UsageError);
  CHECK_THROWS_WITH_AS(spec::parse_rate("-1", "-b", 0, 10), doctest::Contains("bits per second"), UsageError);
}

namespace {

measure::Comparison datagram_sample() {
  measure::Comparison c;
  c.parameters.host = "127.0.0.1";
  c.parameters.test.kind = TestKind::datagram;
  c.parameters.modes = {Mode::udp, Mode::dtls};
  c.parameters.test.chunk_bytes = 15;
  c.parameters.test.datagram.packets = 1000;
  c.parameters.test.streams = 2;
  c.parameters.rounds = 1;
  for (Mode mode : {Mode::udp, Mode::dtls}) {
    kinds::DatagramRun run;
    run.mode = mode;
    run.variant = to_string(mode);
    run.round = 1;
    run.senders = {{0, 1000, 900, 3, 1, 15000, 13500, 1e5, 1e5},
                   {1, 1000, 700, 0, 0, 15000, 10500, 1e5, 2e5}};
    run.total = {0, 2000, mode == Mode::udp ? 1600u : 800u, 3, 1, 30000, 24000, 1e5, 2e5};
    run.foreign = 4;
    run.kernel_drops = 400;
    run.rcvbuf_errors = 401;
    if (mode == Mode::dtls) {
      run.handshake_us = 1200;
      run.cookie_us = 150;
      run.cookie_exchanged = true;
      run.tls = {"DTLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384", "X25519", "", "", 0, {}, {}};
    }
    c.as<kinds::DatagramResults>().runs.push_back(run);
  }
  measure::compute_statistics(c);
  return c;
}

}  // namespace

TEST_CASE("datagram runs in JSON: totals, loss, per sender, the handshake and DTLS over UDP") {
  const auto j = nlohmann::json::parse(report::render_json(datagram_sample()));
  REQUIRE(j["datagram_runs"].size() == 2);
  const auto& udp = j["datagram_runs"][0];
  CHECK(udp["mode"] == "udp");
  CHECK(udp["sent"] == 2000);
  CHECK(udp["received"] == 1600);
  CHECK(udp["lost"] == 400);
  CHECK(udp["loss_percent"] == doctest::Approx(20.0));
  CHECK(udp["received_per_s"] == doctest::Approx(8000.0));  // 1600 over 0.2 s
  CHECK(udp["kernel_drops"] == 400);
  CHECK(udp["foreign"] == 4);
  CHECK(udp["handshake_us"].is_null());
  REQUIRE(udp["senders"].size() == 2);
  CHECK(udp["senders"][1]["lost"] == 300);
  CHECK(udp["senders"][0]["reordered"] == 3);
  const auto& dtls = j["datagram_runs"][1];
  CHECK(dtls["cookie_us"] == 150.0);
  CHECK(dtls["tls_version"] == "DTLSv1.2");
  CHECK(j["datagram_summary"]["dtls_over_udp_received_per_s"] == doctest::Approx(0.5));
  CHECK(j["test"]["packets"] == 1000);
  CHECK(j["runs"].empty());
}

TEST_CASE("datagram intervals in JSON and text: loss per interval from sequence numbers, never below 0") {
  measure::Comparison c = datagram_sample();
  c.parameters.test.interval_ms = 100;
  // 800 of 1000 came in the first interval; 300 late ones and no new numbers in the second.
  c.as<kinds::DatagramResults>().runs[0].intervals = {{0, 0.1, 800, 1000, 80'000},
                                                      {0.1, 0.15, 300, 0, 30'000}};
  const auto j = nlohmann::json::parse(report::render_json(c));
  const auto& intervals = j["datagram_runs"][0]["intervals"];
  REQUIRE(intervals.size() == 2);
  CHECK(intervals[0]["lost"] == 200);
  CHECK(intervals[0]["loss_percent"] == doctest::Approx(20.0));
  CHECK(intervals[0]["received_per_s"] == doctest::Approx(8000.0));
  CHECK(intervals[1]["lost"] == 0);
  CHECK(intervals[1]["loss_percent"] == 0);
  CHECK(intervals[1]["expected"] == 0);
  CHECK(intervals[1]["received_per_s"] == doctest::Approx(6000.0));
  CHECK(j["datagram_runs"][1]["intervals"].empty());
  const std::string text = report::render_text(c);
  CHECK(text.find("the receiver's intervals (-i 0.1") != std::string::npos);
  CHECK(text.find("0.00-0.10 s        800 received       8000/s       200 lost  20.00%") !=
        std::string::npos);
}

TEST_CASE("datagram runs in text and CSV") {
  const measure::Comparison c = datagram_sample();
  const std::string text = report::render_text(c);
  CHECK(text.find("20.00%") != std::string::npos);
  CHECK(text.find("cookie exchange 150 us") != std::string::npos);
  CHECK(text.find("DTLS/UDP datagrams received per second: 0.50x") != std::string::npos);
  const std::string csv = report::render_csv(c);
  std::size_t lines = 0;
  std::size_t header_fields = 0;
  for (std::size_t start = 0; start < csv.size();) {
    const std::size_t end = csv.find('\n', start);
    const std::string line = csv.substr(start, end - start);
    const auto fields = static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1;
    if (lines == 0) header_fields = fields;
    CHECK(fields == header_fields);
    ++lines;
    start = end + 1;
  }
  CHECK(lines == 1 + 2 * 3);  // a header; per run two senders and the total
}
