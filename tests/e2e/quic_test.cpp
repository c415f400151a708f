// QUIC beside tcp and tls (--mode quic): exact bytes and transaction counts,
// both directions and several connections, the flags QUIC cannot take, a
// server without QUIC, and hostile datagrams at the server's UDP port. A
// build without QUIC (OpenSSL before 3.5, BoringSSL) must say so and refuse.
// scripts/test-distro runs these on Debian 13, whose OpenSSL has QUIC.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp;
using namespace tlscmp::test;
using nlohmann::json;

namespace {

bool quic_build() {
  return version_says("quic: yes");
}

// Sends each datagram to 127.0.0.1:port from one socket.
void send_datagrams(std::uint16_t port, const std::vector<std::string>& datagrams) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (const std::string& d : datagrams) {
    (void)::sendto(fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }
  ::close(fd);
}

// The start of a QUIC v1 Initial packet (long header, version 1, connection
// ids of 8 bytes), cut off after `keep` bytes, padded to `size` with `fill`.
std::string initial_packet(std::size_t keep, std::size_t size, char fill) {
  std::string p{'\xc3', '\x00', '\x00', '\x00', '\x01', '\x08'};
  p += std::string(8, '\x11');
  p += '\x08';
  p += std::string(8, '\x22');
  p += '\x00';      // no token
  p += "\x44\xd0";  // length 1232
  p.resize(std::min(keep, p.size()));
  p.resize(size, fill);
  return p;
}

}  // namespace

TEST_CASE("quic: --version says whether this build has it, and why not") {
  const ProcessResult r = run_tlscmp({"--version"});
  REQUIRE(r.exit_code == 0);
  if (quic_build()) {
    CHECK(r.out.find("quic (QUIC v1, TLS 1.3)") != std::string::npos);
  } else {
    CHECK(r.out.find("quic: no (needs OpenSSL 3.5 or newer; this build has ") != std::string::npos);
    expect_failure(run_tlscmp({"client", "--mode", "tcp,quic", "-n", "1M"}), 2, "this tlscmp has no QUIC");
  }
}

TEST_CASE("quic bulk: every byte arrives, each way and on each connection, beside tcp and tls") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  const json j = client_json({"--mode", "tcp,tls,quic", "-n", "4M", "--repeat", "2"});
  REQUIRE(j["runs"].size() == 6);
  for (const json& run : j["runs"]) {
    CAPTURE(run.dump());
    CHECK(run["bytes"] == 4 * 1024 * 1024);
    if (run["mode"] == "quic") {
      CHECK(run["tls_version"] == "QUICv1");
      CHECK(run["cipher"].get<std::string>().rfind("TLS_", 0) == 0);
      CHECK(run["handshake_us"].get<double>() > 0);
      CHECK(run["server"]["cpu_s_per_gib"].get<double>() > 0);
      // The client's datagrams, counted as the library sent them: the
      // payload and QUIC's overhead, in datagrams of at least QUIC's 1,200.
      const json& path = run["client"]["facts"]["udp"]["path"];
      CHECK(path["bytes_sent"].get<std::uint64_t>() > 4 * 1024 * 1024);
      CHECK(path["largest_datagram_sent_bytes"].get<int>() >= 1200);
      CHECK(path["datagrams_sent"].get<std::uint64_t>() >=
            4 * 1024 * 1024 / path["largest_datagram_sent_bytes"].get<std::uint64_t>());
      CHECK(path["datagrams_received"].get<std::uint64_t>() > 0);  // acknowledgements
      CHECK(path["send_calls"].get<std::uint64_t>() > 0);
      CHECK(path["send_calls"].get<std::uint64_t>() <= path["datagrams_sent"].get<std::uint64_t>());
      // Each host's UDP counters over the run: here one host, which sent them all.
      for (const char* side : {"client", "server"}) {
        const json& host = run[side]["facts"]["udp"]["host"];
        CHECK(host["out_datagrams"].get<std::uint64_t>() >= path["datagrams_sent"].get<std::uint64_t>());
        CHECK(host["rcvbuf_errors"].get<std::uint64_t>() <= host["in_errors"].get<std::uint64_t>());
      }
      // The server's port over its run: nearly all of the client's datagrams
      // (its handshake's and any that came before the server's threads began
      // are not in it), with the one connection it held, and at most the
      // round before's still closing (seen once in a loaded trixie chroot).
      const json& port = run["server"]["facts"]["udp"]["path"];
      CHECK(port["datagrams_received"].get<std::uint64_t>() <= path["datagrams_sent"].get<std::uint64_t>());
      CHECK(port["datagrams_received"].get<std::uint64_t>() * 4 >=
            path["datagrams_sent"].get<std::uint64_t>() * 3);
      CHECK(port["bytes_received"].get<std::uint64_t>() * 4 >= 3 * 4 * 1024 * 1024);
      CHECK(port["datagrams_sent"].get<std::uint64_t>() > 0);  // acknowledgements
      CHECK(port["port_connections"].get<int>() >= 1);
      CHECK(port["port_connections"].get<int>() <= 2);
      CHECK(path["port_connections"].is_null());  // the client's own connection
    } else {
      CHECK(run["client"]["facts"]["udp"].is_null());
    }
  }
  // Against tcp, as every mode is, and against tls too: both paired by round.
  CHECK(j["summary"]["quic"]["over_tcp_transfer_time"]["count"] == 2);
  CHECK(j["summary"]["quic"]["over_twin"]["transfer_time"]["count"] == 2);
  CHECK(j["summary"]["quic"]["over_twin"]["transfer_time"]["median"].get<double>() > 0);
  CHECK(j["summary"]["tls"]["over_twin"].is_null());

  const json back = client_json({"--mode", "quic", "-n", "1M", "-P", "3", "-R", "--verify", "--repeat", "1"});
  REQUIRE(back["runs"].size() == 1);
  const json& run = back["runs"][0];
  CHECK(run["direction"] == "server_to_client");
  CHECK(run["bytes"] == 3 * 1024 * 1024);
  REQUIRE(run["streams"].size() == 3);
  for (const json& stream : run["streams"])
    CHECK(stream["bytes"] == 1024 * 1024);
  const json& path = run["client"]["facts"]["udp"]["path"];
  CHECK(path["bytes_received"].get<std::uint64_t>() > 3 * 1024 * 1024);  // three connections' bytes
  // The server's port sent them (and any it sent again): counted once, over
  // the three connections.
  const json& port = run["server"]["facts"]["udp"]["path"];
  CHECK(port["bytes_sent"].get<std::uint64_t>() * 4 >= 3 * 3 * 1024 * 1024);
  CHECK(port["port_connections"] == 3);

  // The text says what was sent, in what datagrams, and what the hosts dropped.
  const ProcessResult text = run_tlscmp({"client", "--mode", "quic", "-n", "1M", "--repeat", "1"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find(" datagrams sent (largest ") != std::string::npos);
  CHECK(text.out.find("; server port ") != std::string::npos);
  CHECK(text.out.find("UDP drops: ") != std::string::npos);
}

TEST_CASE("quic rr: every transaction is counted, on one connection and on several") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  const json j =
      client_json({"--mode", "tcp,quic", "--rr", "100/2000", "-n", "400", "-P", "2", "--repeat", "1"});
  REQUIRE(j["rr_runs"].size() == 2);
  for (const json& run : j["rr_runs"]) {
    CAPTURE(run.dump());
    CHECK(run["transactions"] == 400);
  }
  CHECK(j["rr_runs"][1]["mode"] == "quic");
  CHECK(j["rr_summary"]["quic"]["over_tcp"]["transactions_per_s"]["count"] == 1);
  CHECK(j["rr_summary"]["quic"]["over_twin"].is_null());  // no tls run to pair with
  CHECK(j["rr_runs"][1]["tls_version"] == "QUICv1");
  // A datagram a request at least: 400 transactions of 100 bytes.
  CHECK(j["rr_runs"][1]["client"]["facts"]["udp"]["path"]["datagrams_sent"].get<std::uint64_t>() >= 400);
  // The server's port took them (a request or two may come before its
  // threads begin) and answered each: 2,000 bytes at least a response.
  const json& port = j["rr_runs"][1]["server"]["facts"]["udp"]["path"];
  CHECK(port["datagrams_received"].get<std::uint64_t>() >= 300);
  CHECK(port["bytes_sent"].get<std::uint64_t>() >= 300 * 2000);
  CHECK(port["port_connections"] == 2);
  CHECK(j["rr_runs"][0]["client"]["facts"]["udp"].is_null());
  check_latency_order(j["rr_runs"][1]["latency_us"]);
}

TEST_CASE("quic rr --stream-per-tx: a stream each transaction, as HTTP/3, every byte checked") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  const json j = client_json({"--mode", "tcp,quic", "--rr", "100/20000", "-n", "300", "-P", "3", "--repeat",
                              "1", "--stream-per-tx", "--verify"});
  CHECK(j["test"]["stream_per_tx"] == true);
  REQUIRE(j["rr_runs"].size() == 2);
  for (const json& run : j["rr_runs"]) {
    CAPTURE(run.dump());
    CHECK(run["transactions"] == 300);
  }
  // A stream per transaction, opened by the client and taken by the server;
  // tcp's transactions share their connection.
  const json& quic = j["rr_runs"][1];
  CHECK(quic["client"]["facts"]["udp"]["transaction_streams"] == 300);
  CHECK(quic["server"]["facts"]["udp"]["transaction_streams"] == 300);
  CHECK(j["rr_runs"][0]["client"]["facts"]["udp"].is_null());
  const json one = client_json({"--mode", "quic", "--rr", "1/1", "-n", "50", "--repeat", "1"});
  CHECK(one["rr_runs"][0]["client"]["facts"]["udp"]["transaction_streams"].is_null());

  // Against a separate server, a timed run, and the note says so.
  ServerProcess server;
  const ProcessResult text =
      run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure", "--mode", "quic", "--rr",
                  "1/1", "-t", "1", "--repeat", "1", "--stream-per-tx"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find(" transaction streams; server port ") != std::string::npos);
  CHECK(text.out.find("1 connection (quic: a stream per transaction, as HTTP/3)") != std::string::npos);
  CHECK(server.process().wait_for_log(", a stream per transaction"));
}

TEST_CASE("quic crr: a QUIC connection per transaction, each counted, its handshake timed apart") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  const json j = client_json({"--mode", "tcp,quic", "--crr", "-n", "60", "-P", "2", "--repeat", "1"});
  REQUIRE(j["crr_runs"].size() == 3);  // tcp, quic and quic-resumed
  for (const json& run : j["crr_runs"]) {
    CAPTURE(run.dump());
    CHECK(run["connections"] == 60);
    CHECK(run["failed"] == 0);
  }
  const json& quic = j["crr_runs"][1];
  CHECK(quic["mode"] == "quic");
  CHECK(quic["tls_version"] == "QUICv1");
  CHECK(quic["handshake_us"]["p50"].get<double>() > 0);
  CHECK(quic["response_us"]["p50"].get<double>() > 0);
  CHECK(quic["resumed"] == 0);
  // The server's port's datagrams over the run: each connection's handshake
  // (a client's Initial is padded to 1,200 bytes), request and response.
  const json& port = quic["server"]["facts"]["udp"]["path"];
  CHECK(port["datagrams_received"].get<std::uint64_t>() >= 60 * 2);
  CHECK(port["bytes_received"].get<std::uint64_t>() >= 60 * 1200);
  CHECK(port["datagrams_sent"].get<std::uint64_t>() >= 60);
  CHECK(j["crr_runs"][0]["server"]["facts"]["udp"].is_null());
  // Each connector's later connections offer the session its first one got.
  const json& resumed = j["crr_runs"][2];
  CHECK(resumed["variant"] == "quic-resumed");
  CHECK(resumed["mode"] == "quic");
  // Every connection offered its connector's last ticket. The library's
  // QUIC server refuses one now and then on a loaded host (OpenSSL 3.5: 5 of
  // 25 runs under two busy loops refused 1 or 2 of 60, each with a fresh
  // ticket); the counts add up either way.
  CHECK(resumed["resumed"].get<int>() + resumed["resumption_refused"].get<int>() == 60);
  CHECK(resumed["resumed"].get<int>() >= 50);
  CHECK(resumed["resumed_by"] == "ticket");
  CHECK(j["crr_summary"]["quic-resumed"].is_object());
}

TEST_CASE("quic: what it cannot take is refused in one line, before anything runs") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  expect_mistakes("client",
                  {
                      {{"--mode", "quic", "-N"}, 2, "QUIC has no TCP"},
                      {{"--mode", "tcp,quic", "-w", "1M"}, 2, "share one UDP socket"},
                      {{"--mode", "quic", "--msg-size", "100"}, 2, "--msg-size and --framing"},
                      {{"--mode", "quic", "--record-size", "1024"}, 2, "--record-size"},
                      {{"--mode", "quic", "--ktls"}, 2, "--ktls"},
                      {{"--mode", "quic", "--tls-version", "1.2"}, 2, "QUIC runs TLS 1.3 alone"},
                      {{"--mode", "quic", "--flows", "10", "--crr", "--close", "fin"}, 2, "CONNECTION_CLOSE"},
                      {{"--mode", "quic", "--flows", "10", "-w", "64K"}, 2, "share one UDP socket"},
                      {{"--mode", "quic", "--crr", "--close", "fin"}, 2, "CONNECTION_CLOSE"},
                      {{"--mode", "quic,udp"}, 2, "one test runs one or the other"},
                      {{"--mode", "quick"}, 2, "'quick' is no transport"},
                      {{"--streams", "4"}, 2, "--mode has no quic"},
                      {{"--mode", "quic", "--crr", "--streams", "2"}, 2, "a QUIC connection a transaction"},
                      {{"--mode", "quic", "-P", "64", "--streams", "4"}, 2, "256 streams in all"},
                      {{"--mode", "quic", "--streams", "101"}, 2, "--streams"},
                      {{"--mode", "tcp,tls", "--rr", "1/1", "--stream-per-tx"}, 2, "--mode has no quic"},
                      {{"--mode", "quic", "--rr", "1/1", "--stream-per-tx", "--streams", "2"}, 2, "use -P"},
                      {{"--mode", "quic", "--rr", "1/1", "-t", "1", "--rate", "100", "--stream-per-tx"},
                       2,
                       "closed loops alone"},
                      {{"--mode", "quic", "--stream-per-tx"}, 2, "--stream-per-tx"},
                      {{"--mode", "quic", "--handshakes", "10"}, 2, "time those with --crr --mode quic"},
                      {{"--mode", "tls,quic", "--compare-groups"}, 2, "--compare-groups without --crr"},
                  });
}

TEST_CASE("quic --flows: QUIC connections on the event loops, every transaction and byte counted") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  const json rr = client_json(
      {"--mode", "tcp,quic", "--flows", "60", "--threads", "2", "--rr", "1/1", "-n", "600", "--repeat", "1"});
  REQUIRE(rr["flows_runs"].size() == 2);
  for (const char* variant : {"tcp", "quic"}) {
    CAPTURE(variant);
    const json& run = flows_run_of(rr, variant);
    CHECK(run["flows"] == 60);
    CHECK(run["transactions"] == 600);
    CHECK(run["failed_flows"] == 0);
    CHECK(run["per_flow"]["min"] == 10);
    CHECK(run["per_flow"]["max"] == 10);
    // One server loop runs the rounds of the port's listeners.
    CHECK(run["server"]["threads"] == (std::string(variant) == "quic" ? 1 : 2));
    CHECK(run["server"]["cpu_us_per_transaction"].get<double>() > 0);
  }
  CHECK(flows_run_of(rr, "quic")["tls_version"] == "QUICv1");
  // The datagrams: the client's over its 60 connections, the server's
  // port's over the test; a request and a response a datagram at least.
  const json& quic_run = flows_run_of(rr, "quic");
  const json& client_path = quic_run["client"]["facts"]["udp"]["path"];
  const json& server_path = quic_run["server"]["facts"]["udp"]["path"];
  CHECK(client_path["datagrams_sent"].get<std::uint64_t>() >= 600);
  CHECK(client_path["datagrams_received"].get<std::uint64_t>() >= 600);
  CHECK(server_path["datagrams_received"].get<std::uint64_t>() >= 600);
  CHECK(server_path["datagrams_sent"].get<std::uint64_t>() >= 600);
  CHECK(server_path["port_connections"].get<std::uint64_t>() >= 60);
  CHECK(flows_run_of(rr, "tcp")["server"]["facts"]["udp"].is_null());
  // A QUIC connection's state is the library's, in user space on both
  // sides; a TCP socket's is the kernel's.
  CHECK(flows_run_of(rr, "quic")["client"]["memory_per_connection"]["idle_rss_bytes"].get<double>() >
        flows_run_of(rr, "tcp")["client"]["memory_per_connection"]["idle_rss_bytes"].get<double>());

  // Bulk over the flows, each way: the bytes exact, however the library
  // paces and acknowledges them.
  for (const bool reverse : {false, true}) {
    CAPTURE(reverse);
    std::vector<std::string> args{"--mode", "quic", "--flows", "8", "-n", "8M", "--repeat", "1"};
    if (reverse) args.push_back("-R");
    const json bulk = client_json(args);
    const json& run = flows_run_of(bulk, "quic");
    CHECK(run["flows"] == 8);
    CHECK(run["failed_flows"] == 0);
    CHECK(run["bytes"] == 8 * 1024 * 1024);
  }

  // A QUIC connection a transaction: each counted, its handshake timed.
  const json crr = client_json({"--mode", "quic", "--flows", "4", "--crr", "-n", "40", "--repeat", "1"});
  const json& run = flows_run_of(crr, "quic");
  CHECK(run["connections"] == 40);
  CHECK(run["failed_flows"] == 0);
  CHECK(run["handshake_us"]["p50"].get<double>() > 0);
  // Each connection's datagrams, its handshake's among them, closed or not.
  CHECK(run["client"]["facts"]["udp"]["path"]["datagrams_sent"].get<std::uint64_t>() >= 40 * 3);
  CHECK(run["server"]["facts"]["udp"]["path"]["datagrams_received"].get<std::uint64_t>() >= 40 * 3);
}

TEST_CASE("quic --flows 1000: every connection established within the handshake timeout, each served") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  // The server's connections spread over the port's listeners; its loop
  // runs a round of each with work and looks at their streams. One
  // listener polled a stream at a time passed the 10 s --handshake-timeout
  // here with some of 1,000 handshakes still to run.
  const json j =
      client_json({"--mode", "quic", "--flows", "1000", "--rr", "1/1", "-n", "3000", "--repeat", "1"});
  const json& run = flows_run_of(j, "quic");
  CHECK(run["flows"] == 1000);
  CHECK(run["failed_flows"] == 0);
  CHECK(run["transactions"] == 3000);
  CHECK(run["per_flow"]["min"] == 3);
  CHECK(run["per_flow"]["max"] == 3);
  CHECK(run["server"]["threads"] == 1);
  CHECK(run["flows_per_s"].get<double>() > 0);
}

TEST_CASE("quic --streams: S streams on each QUIC connection against -P x S tcp and tls connections") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  const json j = client_json({"--mode", "tcp,tls,quic", "--streams", "4", "-n", "1M", "--repeat", "1", "-R"});
  CHECK(j["test"]["quic_streams"] == 4);
  REQUIRE(j["runs"].size() == 3);
  for (const json& run : j["runs"]) {
    CAPTURE(run.dump());
    CHECK(run["bytes"] == 4 * 1024 * 1024);
    REQUIRE(run["streams"].size() == 4);
    for (const json& stream : run["streams"])
      CHECK(stream["bytes"] == 1024 * 1024);
  }
  // One QUIC connection: its datagrams counted once, on its first stream.
  const json& path = j["runs"][2]["client"]["facts"]["udp"]["path"];
  CHECK(path["bytes_received"].get<std::uint64_t>() > 4 * 1024 * 1024);
  CHECK(path["bytes_received"].get<std::uint64_t>() < 5 * 1024 * 1024);

  const ProcessResult text =
      run_tlscmp({"client", "--mode", "tcp,quic", "--streams", "2", "-n", "1M", "--repeat", "1"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find(
            "(--streams 2: tcp and tls open a connection a stream, quic 1 connection of 2 streams)") !=
        std::string::npos);

  const json rr = client_json(
      {"--mode", "quic", "--streams", "3", "-P", "2", "--rr", "100/200", "-n", "300", "--repeat", "1"});
  REQUIRE(rr["rr_runs"].size() == 1);
  CHECK(rr["rr_runs"][0]["transactions"] == 300);
  CHECK(rr["rr_runs"][0]["connections"] == 6);
}

TEST_CASE("quic against a server without it: the test is refused with why") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  // A server held to TLS 1.2 serves no QUIC, which runs TLS 1.3.
  ServerProcess server({"--tls-version", "1.2"});
  CHECK(server.log().find("quic") == std::string::npos);
  const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure", "--mode",
                                      "quic", "-n", "1M", "--repeat", "1"});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("this server has no QUIC") != std::string::npos);
  CHECK(r.err.find("--tls-version 1.2") != std::string::npos);
  // Asked before anything runs: the tcp run that comes first never starts.
  const ProcessResult both = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure",
                                         "--mode", "tcp,quic", "-n", "1M", "--repeat", "1", "-J"});
  CHECK(both.exit_code != 0);
  const json j = json::parse(both.out);
  CHECK(j["runs"].empty());
  CHECK(j["error"].get<std::string>().rfind("quic: refused: this server has no QUIC", 0) == 0);
  CHECK(server.log().find("tcp client_to_server") == std::string::npos);
}

TEST_CASE("quic: hostile datagrams at the server's port take nothing down, and a real client is served") {
  if (!quic_build()) return skip_unsupported("this build has no QUIC (it needs OpenSSL 3.5 or newer)");
  ServerProcess server;
  std::mt19937 random(7);
  std::vector<std::string> garbage;
  for (int i = 0; i < 200; ++i) {  // random bytes, of every size up to a full datagram
    std::string d(1 + random() % 1500, '\0');
    for (char& c : d)
      c = static_cast<char>(random());
    garbage.push_back(d);
  }
  for (const std::size_t keep :
       std::vector<std::size_t>{1, 5, 6, 14, 23, 26}) {  // Initials cut short, at every field
    garbage.push_back(initial_packet(keep, keep, '\0'));
    garbage.push_back(initial_packet(keep, 1200, '\x5a'));
  }
  send_datagrams(server.port(), garbage);
  // A flood of well-formed-looking Initials from one address: the listener
  // answers with Retry and keeps no state for them.
  send_datagrams(server.port(), std::vector<std::string>(3000, initial_packet(26, 1200, '\x00')));
  const json j = client_json(
      {"127.0.0.1", "-p", server.port_text(), "--insecure", "--mode", "quic", "-n", "2M", "--repeat", "1"});
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["bytes"] == 2 * 1024 * 1024);
  CHECK(server.process().running());
}
