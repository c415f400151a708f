// Datagram tests (udp, dtls) over loopback: exact counts at a low rate, the
// senders' totals, datagrams that are not the test's, and loss under overload.

#include <netinet/in.h>
#include <sys/socket.h>

#include <thread>

#include "e2e/e2e.hpp"
#include "e2e/hand_started.hpp"
#include "kinds/datagram/wire.hpp"
#include "protocol/datagram.hpp"
#include "protocol/messages.hpp"
#include "session/control.hpp"
#include "support/skip.hpp"
#include "tls/dtls.hpp"
#include "transport/datagram.hpp"
#include "transport/socket.hpp"

using namespace tlscmp;
using namespace tlscmp::test;
using nlohmann::json;

namespace {

constexpr auto kShort = std::chrono::milliseconds(5000);

// A datagram test of `mode` started by hand, `packets` datagrams of `size` bytes.
protocol::TestRequest datagram_request(Mode mode, std::uint64_t packets, std::uint32_t size) {
  protocol::TestRequest request;
  request.test.kind = TestKind::datagram;
  request.mode = mode;
  request.test.datagram.packets = packets;
  request.test.chunk_bytes = size;
  request.client_version = "test";
  return request;
}

// The modes this build can run: DTLS needs OpenSSL.
std::string datagram_modes() {
  return boringssl_build() ? "udp" : "both-udp";
}

// Sent, received and lost add up, per sender and in total, and the totals are the senders' sums.
void check_accounting(const json& run) {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t reordered = 0;
  for (const json& s : run["senders"]) {
    CHECK(s["received"].get<std::uint64_t>() + s["lost"].get<std::uint64_t>() ==
          s["sent"].get<std::uint64_t>());
    sent += s["sent"].get<std::uint64_t>();
    received += s["received"].get<std::uint64_t>();
    reordered += s["reordered"].get<std::uint64_t>();
  }
  CHECK(run["sent"] == sent);
  CHECK(run["received"] == received);
  CHECK(run["reordered"] == reordered);
  CHECK(run["lost"].get<std::uint64_t>() == sent - received);
}

}  // namespace

TEST_CASE("udp and dtls at a low rate: every datagram arrives once and is counted") {
  const json j = client_json({"--mode", datagram_modes(), "-n", "300", "-l", "100", "-b", "2M"});
  REQUIRE(j["datagram_runs"].size() == (boringssl_build() ? 1u : 2u));
  for (const json& run : j["datagram_runs"]) {
    CAPTURE(run.dump());
    CHECK(run["sent"] == 300);
    CHECK(run["received"] == 300);
    CHECK(run["lost"] == 0);
    CHECK(run["duplicates"] == 0);
    CHECK(run["foreign"] == 0);
    CHECK(run["bytes_received"] == 300 * 100);
    CHECK(run["datagram_bytes"] == 100);
    // 300 datagrams of 800 bits at 2 Mbit/s: about 0.12 s of sending, not as fast as it can.
    CHECK(run["sender_us"].get<double>() > 100'000);
    CHECK(run["received_per_s"].get<double>() > 0);
    check_accounting(run);
    if (run["mode"] == "dtls") {
      CHECK(run["tls_version"] == "DTLSv1.2");
      CHECK(run["cookie_exchanged"] == true);
      CHECK(run["cookie_us"].get<double>() > 0);
      CHECK(run["handshake_us"].get<double>() > run["cookie_us"].get<double>());
      CHECK_FALSE(run["cipher"].get<std::string>().empty());
    } else {
      CHECK(run["handshake_us"].is_null());
    }
  }
  CHECK(j["test"]["packets"] == 300);
  CHECK(j["test"]["rate_bps"] == 2'000'000);
}

TEST_CASE("-i: the receiver's intervals add up to what it received, and to what was sent") {
  // 3 senders at 2 Mbit/s of 100-byte datagrams: 2500/s each, about 0.8 s.
  const json j = client_json(
      {"--mode", datagram_modes(), "-P", "3", "-n", "2000", "-l", "100", "-b", "2M", "-i", "0.2"});
  for (const json& run : j["datagram_runs"]) {
    CAPTURE(run.dump());
    REQUIRE(run["received"] == 6000);
    const json& intervals = run["intervals"];
    REQUIRE(intervals.size() >= 3);
    std::uint64_t received = 0;
    std::uint64_t expected = 0;
    double previous_end = 0;
    for (const json& i : intervals) {
      CHECK(i["start_s"].get<double>() == doctest::Approx(previous_end));
      CHECK(i["end_s"].get<double>() > i["start_s"].get<double>());
      CHECK(i["bytes"] == i["received"].get<std::uint64_t>() * 100);
      received += i["received"].get<std::uint64_t>();
      expected += i["expected"].get<std::uint64_t>();
      previous_end = i["end_s"];
    }
    CHECK(received == 6000);
    CHECK(expected == 6000);  // nothing lost: the highest numbers seen reach what was sent
    CHECK(intervals.back()["received"].get<std::uint64_t>() > 0);  // the quiet drain is left out
  }
  CHECK(j["test"]["interval_s"] == 0.2);
  // Text mode prints them after the table.
  const ProcessResult text =
      run_tlscmp({"client", "--mode", "udp", "-n", "1000", "-l", "100", "-b", "2M", "-i", "0.2"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("the receiver's intervals (-i 0.2") != std::string::npos);
  CHECK(text.out.find("[udp 1]") != std::string::npos);
}

TEST_CASE("--gso: segmented sends arrive as the same datagrams, counted exactly") {
  // 3 senders, 100-byte datagrams at 2 Mbit/s each; flat out as well, where
  // loss may come but every datagram counted is one the senders sent.
  const json j = client_json(
      {"--mode", datagram_modes(), "--gso", "-P", "3", "-n", "500", "-l", "100", "-b", "2M", "-i", "0.1"});
  CHECK(j["test"]["gso"] == true);
  for (const json& run : j["datagram_runs"]) {
    CAPTURE(run.dump());
    CHECK(run["sent"] == 1500);
    // Under other tests' load a receiver that falls behind may drop some, as
    // UDP does; each one counted is whole and one that was sent.
    CHECK(run["received"].get<std::uint64_t>() > 0);
    CHECK(run["received"].get<std::uint64_t>() <= 1500);
    CHECK(run["foreign"] == 0);
    CHECK(run["duplicates"] == 0);
    CHECK(run["bytes_received"] == run["received"].get<std::uint64_t>() * 100);
    check_accounting(run);
  }
  const json flat = client_json({"--mode", datagram_modes(), "--gso", "-n", "20000", "-l", "15"});
  for (const json& run : flat["datagram_runs"]) {
    CAPTURE(run.dump());
    CHECK(run["sent"] == 20000);
    CHECK(run["received"].get<std::uint64_t>() + run["lost"].get<std::uint64_t>() == 20000);
    CHECK(run["foreign"] == 0);
    check_accounting(run);
  }
  const ProcessResult text = run_tlscmp({"client", "--mode", "udp", "--gso", "-n", "100", "-b", "1M"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("(--gso: segmented by the kernel)") != std::string::npos);
}

TEST_CASE("three senders: each counted apart, the totals are the sums") {
  const json j = client_json({"--mode", datagram_modes(), "-P", "3", "-n", "200", "-l", "64", "-b", "1M"});
  for (const json& run : j["datagram_runs"]) {
    CAPTURE(run.dump());
    REQUIRE(run["senders"].size() == 3);
    for (const json& s : run["senders"]) {
      CHECK(s["sent"] == 200);
      CHECK(s["received"] == 200);
    }
    CHECK(run["sent"] == 600);
    CHECK(run["received"] == 600);
    check_accounting(run);
  }
}

TEST_CASE(
    "as fast as it can into a small buffer: what was lost is accounted for, and the kernel says where") {
  const json j = client_json({"--mode", "udp", "-n", "200000", "-l", "15", "--rcvbuf", "4K"});
  const json& run = j["datagram_runs"][0];
  CAPTURE(run.dump());
  check_accounting(run);
  CHECK(run["server"]["rcvbuf_bytes"].get<int>() >= 4096);  // what the kernel applied, reported
  // On loopback nothing is lost on the way: every loss is a drop for a full receive buffer.
  if (run["lost"].get<std::uint64_t>() > 0) {
    CHECK(run["kernel_drops"].get<std::uint64_t>() > 0);
    CHECK(run["kernel_drops"].get<std::uint64_t>() <= run["lost"].get<std::uint64_t>());
  }
}

TEST_CASE("text output: the seed's columns, per sender and in total") {
  const ProcessResult r =
      run_tlscmp({"client", "--mode", "udp", "-P", "2", "-n", "100", "-l", "15", "-b", "500K"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("received/s") != std::string::npos);
  CHECK(r.out.find("loss") != std::string::npos);
  CHECK(r.out.find(" all ") != std::string::npos);
  CHECK(r.out.find("datagrams of 15 bytes, 100 per sender, 2 senders") != std::string::npos);
}

TEST_CASE("datagrams that are not the test's are counted apart and do not disturb the count") {
  ServerProcess server;
  HandStartedTest test(server.port(), datagram_request(Mode::udp, 50, 40), kShort);
  TcpStream& control = test.control;
  const protocol::TestAccept& accept = test.accept;
  REQUIRE(accept.udp_ports.size() == 1);
  (void)session::receive<protocol::Ready>(control, "ready");

  UniqueFd udp = connect_udp_beside(control.native_handle(), accept.udp_ports[0]);
  const auto send = [&](const std::vector<std::byte>& datagram) {
    REQUIRE(::send(udp.get(), datagram.data(), datagram.size(), 0) == static_cast<ssize_t>(datagram.size()));
  };
  protocol::DatagramHeader header;
  std::copy_n(accept.cookie.begin(), header.tag.size(), header.tag.begin());
  const auto datagram = [&](const protocol::DatagramHeader& h, std::size_t size) {
    std::vector<std::byte> d(size);
    protocol::encode_datagram_header(h, std::span<std::byte, protocol::kDatagramHeaderBytes>(d.data(), 12));
    return d;
  };
  // Garbage first: short, the wrong magic, the wrong tag, an unknown sender, the wrong size.
  send(std::vector<std::byte>(5, std::byte{'x'}));
  send(std::vector<std::byte>(40, std::byte{0xff}));
  protocol::DatagramHeader other_test = header;
  other_test.tag[0] ^= std::byte{1};
  send(datagram(other_test, 40));
  protocol::DatagramHeader stranger = header;
  stranger.sender = 7;
  send(datagram(stranger, 40));
  send(datagram(header, 41));
  // Then the test's own, with one sent twice, one late and one never.
  for (std::uint32_t n : {0u, 1u, 2u, 2u, 4u, 3u}) {
    header.sequence = n;
    send(datagram(header, 40));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // on loopback: in this order
  }
  kinds::DatagramResult sent;
  sent.role = Role::sender;
  sent.senders = {{0, 6, 6 * 40, 0, 1, 0, 0}};
  session::send_message(control, sent, "the senders' count");
  const auto received = session::receive<kinds::DatagramResult>(control, "the receiver's count");
  REQUIRE(received.senders.size() == 1);
  CHECK(received.senders[0].packets == 5);  // 0 1 2 3 4
  CHECK(received.senders[0].duplicates == 1);
  CHECK(received.senders[0].reordered == 1);
  CHECK(received.foreign == 5);
  CHECK(received.kernel_drops == 0);
  CHECK(server.process().wait_for_log("5 foreign"));
}

TEST_CASE("a datagram client that goes quiet or away: the server logs it and serves the next") {
  ServerProcess server({"--idle-timeout", "1", "--control-timeout", "1"});
  {
    HandStartedTest quiet(server.port(), datagram_request(Mode::udp, 1000, 20), kShort);
    (void)session::receive<protocol::Ready>(quiet.control, "ready");
    CHECK(server.process().wait_for_log("no datagram and no word from the client", std::chrono::seconds(5)));
  }
  {
    HandStartedTest gone(server.port(), datagram_request(Mode::udp, 1000, 20), kShort);
  }  // closed before the senders' count
  CHECK(server.process().wait_for_log("the senders' count", std::chrono::seconds(5)));
  const json j =
      client_json({"127.0.0.1", "-p", server.port_text(), "--mode", "udp", "-n", "100", "-b", "1M"});
  CHECK(j["datagram_runs"][0]["received"] == 100);
}

TEST_CASE(
    "dtls: an untrusted server certificate fails in one line with a hint, and BoringSSL says it has no "
    "DTLS") {
  ServerProcess server;
  const ProcessResult r =
      run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--mode", "dtls", "-n", "10"});
  CHECK(r.exit_code != 0);
  CHECK(is_one_line(r.err));
  if (boringssl_build()) {
    CHECK(r.err.find("BoringSSL has no DTLS server tlscmp can use") != std::string::npos);
  } else {
    CHECK(r.err.find("certificate verify failed") != std::string::npos);
    CHECK(r.err.find("--ca") != std::string::npos);
  }
}

TEST_CASE("datagram sizes beyond what UDP or DTLS can carry are refused before anything is sent") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"client", "--mode", "udp", "-l", "65508"},
        std::vector<std::string>{"client", "--mode", "dtls", "-l", "16385"},
        std::vector<std::string>{"client", "--mode", "udp", "-l", "8"}}) {
    const ProcessResult r = run_tlscmp(args);
    CHECK(r.exit_code != 0);
    CHECK(is_one_line(r.err));
  }
}

namespace {

// A DTLS server of `library` ("": the binary's default) gets garbage before
// the handshake and amid the records, and a replay: it sets them apart.
void garbage_around_dtls(const std::string& library) {
  ServerProcess server(library.empty() ? std::vector<std::string>{}
                                       : std::vector<std::string>{"--tls-lib", library});
  HandStartedTest test(server.port(), datagram_request(Mode::dtls, 20, 100), kShort);
  TcpStream& control = test.control;
  const protocol::TestAccept& accept = test.accept;
  REQUIRE(accept.udp_ports.size() == 1);

  UniqueFd udp = connect_udp_beside(control.native_handle(), accept.udp_ports[0]);
  const auto send = [&](const std::string& bytes) {
    REQUIRE(::send(udp.get(), bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  };
  send("not a ClientHello");
  send(std::string("\x16\xfe\xfd") +
       std::string(30, '\0'));  // a DTLS handshake record header, then nothing sensible

  tls::ClientOptions config;
  config.insecure = true;
  const tls::DtlsContext dtls = tls::DtlsContext::for_client(config);
  tls::DtlsHandshake handshake;
  auto session = dtls.connect(udp.get(), "127.0.0.1", Deadline::after(kShort), handshake);
  CHECK(handshake.cookie_exchanged);
  (void)session::receive<protocol::Ready>(control, "ready");

  protocol::DatagramHeader header;
  std::copy_n(accept.cookie.begin(), header.tag.size(), header.tag.begin());
  std::vector<std::byte> plain(100);
  std::vector<std::byte> record(100 + tls::DtlsSession::kMaxOverhead);
  for (std::uint32_t n = 0; n < 20; ++n) {
    header.sequence = n;
    protocol::encode_datagram_header(header,
                                     std::span<std::byte, protocol::kDatagramHeaderBytes>(plain.data(), 12));
    const std::size_t length = session->seal(plain, record);
    REQUIRE(::send(udp.get(), record.data(), length, 0) == static_cast<ssize_t>(length));
    if (n == 10) {
      send("garbage in the middle");
      send(std::string(reinterpret_cast<const char*>(record.data()), length));  // a replay
    }
  }
  kinds::DatagramResult sent;
  sent.role = Role::sender;
  sent.senders = {{0, 20, 2000, 0, 1, 0, 0}};
  session::send_message(control, sent, "the senders' count");
  const auto received = session::receive<kinds::DatagramResult>(control, "the receiver's count");
  REQUIRE(received.senders.size() == 1);
  CHECK(received.senders[0].packets == 20);
  // The garbage is set apart; the replay too where the library's replay
  // window discards it (OpenSSL, GnuTLS, wolfSSL 5.5), else tlscmp's own
  // count finds it a duplicate (wolfSSL 5.7.2 hands it back).
  CHECK(received.foreign >= 1);
  CHECK(received.foreign + received.senders[0].duplicates == 2);
  if (library.empty() || library == "gnutls") CHECK(received.foreign == 2);
}

}  // namespace

TEST_CASE("dtls: garbage on the port before and after the handshake is set apart, and the test runs") {
  if (boringssl_build()) return skip_unsupported("BoringSSL has no DTLS server");
  garbage_around_dtls({});
  // Each other library's DTLS server, where this tlscmp holds it.
  for (const std::string& library : tls_backends_of(tlscmp_binary())) {
    if (library == "openssl" || library == "boringssl") continue;
    CAPTURE(library);
    garbage_around_dtls(library);
  }
}
