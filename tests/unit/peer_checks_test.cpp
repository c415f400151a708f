// The checks of a peer's figures (kinds/peer_checks.hpp and each kind's
// checks.cpp): what an honest peer reports passes, clock slack included;
// each lie fails with the one line that names its figure.

#include <doctest/doctest.h>

#include <string>

#include "kinds/crr/crr.hpp"
#include "kinds/datagram/datagram.hpp"
#include "kinds/handshake/handshake.hpp"
#include "kinds/peer_checks.hpp"
#include "kinds/rr/rr.hpp"
#include "kinds/stream/stream.hpp"

using namespace tlscmp;
using namespace tlscmp::kinds;

namespace {

constexpr double kWallUs = 5e6;  // the run took 5 s on the judging side
constexpr std::uint64_t kBytes = 8 << 20;

bool has(const std::string& line, const std::string& part) {
  return line.find(part) != std::string::npos;
}

SideResult stream_side(Role role, std::uint64_t bytes, double elapsed_us) {
  SideResult r;
  r.role = role;
  r.bytes = bytes;
  r.elapsed_us = elapsed_us;
  r.cpu_user_s = 0.5;
  r.cpu_system_s = 1.0;
  return r;
}

protocol::TestRequest rr_request(double rate_tps, std::uint64_t duration_ms) {
  protocol::TestRequest r;
  r.test.kind = TestKind::rr;
  r.test.rr.request_bytes = 100;
  r.test.rr.response_bytes = 200;
  r.test.rr.rate_tps = rate_tps;
  r.test.duration_ms = duration_ms;
  return r;
}

SideResult rr_side(Role role, std::uint64_t transactions, std::uint64_t size, double elapsed_us) {
  SideResult r;
  r.role = role;
  r.messages = transactions;
  r.bytes = transactions * size;
  r.elapsed_us = elapsed_us;
  return r;
}

SideResult crr_count(std::uint64_t connections, std::uint64_t failed, std::uint64_t bytes = 0,
                     std::uint64_t sent = 0) {
  SideResult r;
  r.connections = connections;
  r.failed = failed;
  r.bytes = bytes;
  r.wire_bytes_sent = sent;
  r.elapsed_us = 1e6;
  return r;
}

DatagramResult datagram_count(Role role, std::uint64_t packets, std::uint32_t size) {
  DatagramResult r;
  r.role = role;
  r.senders = {{0, packets, packets * size, 0, 1000, 0, 0}};
  r.elapsed_us = 1000;
  return r;
}

}  // namespace

TEST_CASE("a peer's window: not 0 where bytes moved, within this side's clock and its slack") {
  const PeerJudge judge(Peer::server, kWallUs);
  CHECK(judge.check_window("receiving 1 bytes in 0 us", 0, 0, true, "elapsed_us") ==
        "the server reports receiving 1 bytes in 0 us, but nothing moves in no time: the peer's figures "
        "disagree (server_results elapsed_us)");
  CHECK(judge.check_window("nothing", 0, 0, false, "elapsed_us").empty());
  // 1% and 10 ms of slack: two hosts' clock rates and CPU accounting's granularity.
  const double allowed = kWallUs * 1.01 + 10'000;
  CHECK(judge.check_window("x", allowed, allowed, true, "elapsed_us").empty());
  CHECK(judge.check_window("receiving 1 bytes in 1000000000000 us", 1e12, 1e12, true, "elapsed_us") ==
        "the server reports receiving 1 bytes in 1000000000000 us, but the whole run took 5000000 us on this "
        "client: the peer's figures disagree (server_results elapsed_us)");
  // A window that fits, but starts too late to end within the run.
  CHECK(has(judge.check_window("x", 1000, allowed + 1, true, "elapsed_us"), "ending at"));
  // A window the peer keeps by design (open-loop rr's -t) may outlast this side's clock.
  CHECK(judge.check_window("x", 2 * kWallUs, 2 * kWallUs, true, "elapsed_us", 0, 2 * kWallUs).empty());
  // Several streams: the figure names its index, as server --results lists them.
  const PeerJudge of_three(Peer::client, kWallUs, 3);
  CHECK(has(of_three.check_window("x", 0, 0, true, "elapsed_us", 2), "(client_results[2] elapsed_us)"));
  CHECK(has(of_three.check_window("x", 0, 0, true, "elapsed_us", 2), "the client reports x"));
}

TEST_CASE("a peer's CPU: no more than wall time per thread") {
  const PeerJudge judge(Peer::client, kWallUs);
  CHECK(judge.check_cpu(2.5, 2.5, 1, "on one data thread").empty());
  CHECK(judge.check_cpu(3.0, 2.1, 1, "on one data thread") ==
        "the client reports 5.100 s of CPU on one data thread, but the whole run took 5.000 s on this "
        "server, and a thread uses no more CPU than wall time: the peer's figures disagree (client_results "
        "cpu_user_s + cpu_system_s)");
  CHECK(judge.check_cpu(10.0, 10.0, 4, "on its 4 sender threads").empty());
  CHECK_FALSE(judge.check_cpu(-1.0, 0, 1, "x").empty());
}

TEST_CASE("stream: the sender's bytes, messages and payload are the receiver's, and times fit the run") {
  const PeerJudge server(Peer::server, kWallUs);
  const PeerJudge client(Peer::client, kWallUs);
  const SideResult sender = stream_side(Role::sender, kBytes, 1e6);
  const SideResult receiver = stream_side(Role::receiver, kBytes, 1.1e6);
  CHECK(check_peer_stream(server, sender, receiver).empty());
  CHECK(check_peer_stream(client, receiver, sender).empty());
  CHECK(check_peer_stream(server, sender, stream_side(Role::receiver, 0, 0)) ==
        "the server reports receiving 0 bytes in 0 us, but this client sent 8388608: the peer's figures "
        "disagree (server_results bytes)");
  CHECK(check_peer_stream(client, receiver, stream_side(Role::sender, 999, 812)) ==
        "the client reports sending 999 bytes in 812 us, but this server received 8388608: the peer's "
        "figures disagree (client_results bytes)");
  CHECK(has(check_peer_stream(server, sender, stream_side(Role::receiver, kBytes, 0)),
            "nothing moves in no time: the peer's figures disagree (server_results elapsed_us)"));
  CHECK(has(check_peer_stream(server, sender, stream_side(Role::receiver, kBytes, 1e12)),
            "(server_results elapsed_us)"));
  SideResult busy = receiver;
  busy.cpu_user_s = 6;
  CHECK(has(check_peer_stream(server, sender, busy), "(server_results cpu_user_s + cpu_system_s)"));

  // Messages (--msg-size): counted alike on both ends.
  SideResult framed_sender = sender;
  framed_sender.messages = 8192;
  framed_sender.payload_bytes = kBytes - 8192 * 4;
  SideResult framed_receiver = receiver;
  framed_receiver.messages = 8192;
  framed_receiver.payload_bytes = framed_sender.payload_bytes;
  CHECK(check_peer_stream(client, framed_receiver, framed_sender).empty());
  framed_sender.messages = 8191;
  CHECK(has(check_peer_stream(client, framed_receiver, framed_sender),
            "the client reports sending 8191 messages, but this server received 8192"));
  framed_sender.messages = 8192;
  framed_sender.payload_bytes -= 1;
  CHECK(has(check_peer_stream(client, framed_receiver, framed_sender), "(client_results payload_bytes)"));

  // -i: a receiver's intervals add up to its bytes.
  SideResult with_intervals = receiver;
  with_intervals.intervals = {{5e5, kBytes / 2}, {1.1e6, kBytes / 2}};
  CHECK(check_peer_stream(server, sender, with_intervals).empty());
  with_intervals.intervals.back().bytes -= 1;
  CHECK(has(check_peer_stream(server, sender, with_intervals), "(server_results intervals)"));
}

TEST_CASE("rr: both sides count the same transactions, bytes are transactions times the size") {
  const protocol::TestRequest closed = rr_request(0, 0);
  const PeerJudge server(Peer::server, kWallUs, 2);
  const PeerJudge client(Peer::client, kWallUs, 2);
  SideResult client_side = rr_side(Role::sender, 10, 200, 1e6);
  SideResult server_side = rr_side(Role::receiver, 10, 100, 1e6);
  client_side.stream = server_side.stream = 1;
  CHECK(check_peer_connection(server, closed, client_side, server_side).empty());
  CHECK(check_peer_connection(client, closed, server_side, client_side).empty());
  SideResult lying = rr_side(Role::sender, 11, 200, 1e6);
  lying.stream = 1;
  CHECK(check_peer_connection(client, closed, server_side, lying) ==
        "the client reports taking 11 responses, but this server answered 10 requests: the peer's figures "
        "disagree (client_results[1] messages)");
  server_side.bytes += 1;
  CHECK(has(check_peer_connection(server, closed, client_side, server_side),
            "the server reports receiving 1001 bytes in 10 requests, but this client sent 10 requests of 100 "
            "bytes"));

  // Open loop, the client's window lasts -t at least, even if the run was quicker here.
  const protocol::TestRequest open = rr_request(1, 10'000);
  const SideResult scheduled = rr_side(Role::sender, 1, 200, 1e7);
  const SideResult answered = rr_side(Role::receiver, 1, 100, 1e3);
  CHECK(check_peer_connection(PeerJudge(Peer::client, 1e4), open, answered, scheduled).empty());
  CHECK(has(check_peer_connection(PeerJudge(Peer::client, 1e4), closed, answered, scheduled),
            "(client_results elapsed_us)"));
}

TEST_CASE("crr: counts bounded both ways, failures allowed for, and exact bytes over TCP without failures") {
  protocol::TestRequest tcp;
  tcp.test.kind = TestKind::crr;
  tcp.mode = Mode::tcp;
  tcp.test.rr.request_bytes = 10;
  tcp.test.rr.response_bytes = 20;
  tcp.test.streams = 1;
  const PeerJudge server(Peer::server, kWallUs);
  const PeerJudge client(Peer::client, kWallUs);
  // One connection the client gave up on that the server served, one that failed on both.
  CHECK(check_peer_count(server, tcp, crr_count(10, 2), crr_count(11, 1)).empty());
  CHECK(check_peer_count(client, tcp, crr_count(11, 1), crr_count(10, 2)).empty());
  CHECK(check_peer_count(server, tcp, crr_count(10, 0, 200), crr_count(9, 0, 9 * 34, 9 * 20)) ==
        "the server reports serving 9 connections, but this client completed 10: the peer's figures "
        "disagree (server_results connections)");
  CHECK(check_peer_count(client, tcp, crr_count(10, 0, 10 * 34, 200), crr_count(11, 0, 220)) ==
        "the client reports completing 11 connections, but this server served only 10: the peer's figures "
        "disagree (client_results connections)");
  CHECK(has(check_peer_count(server, tcp, crr_count(10, 1), crr_count(10, 2)),
            "the server reports 12 connections (10 served, 2 failed) for this test, but this client tried "
            "only 11 connections (10 completed, 1 failed)"));
  // TCP with no failure: each request (24 bytes of preamble and cookie, then 10) and response once.
  CHECK(check_peer_count(server, tcp, crr_count(10, 0, 200), crr_count(10, 0, 340, 200)).empty());
  CHECK(has(check_peer_count(server, tcp, crr_count(10, 0, 200), crr_count(10, 0, 341, 200)),
            "(server_results bytes)"));
  CHECK(has(check_peer_count(server, tcp, crr_count(10, 0, 200), crr_count(10, 0, 340, 0)),
            "(server_results wire_bytes_sent)"));
  CHECK(has(check_peer_count(client, tcp, crr_count(10, 0, 340, 200), crr_count(10, 0, 199)),
            "(client_results bytes)"));
  // TLS counts records (and kTLS none): no exact bytes there.
  protocol::TestRequest tls = tcp;
  tls.mode = Mode::tls;
  CHECK(check_peer_count(server, tls, crr_count(10, 0, 200), crr_count(10, 0, 341, 0)).empty());
  SideResult resumed = crr_count(10, 0);
  resumed.resumed = 5;
  CHECK(has(check_peer_count(server, tls, resumed, crr_count(10, 0)), "(server_results resumed)"));
}

TEST_CASE("datagrams: distinct ones received are at most those sent, duplicates counted apart") {
  protocol::TestRequest udp;
  udp.test.kind = TestKind::datagram;
  udp.mode = Mode::udp;
  udp.test.chunk_bytes = 40;
  udp.test.streams = 1;
  const PeerJudge server(Peer::server, kWallUs);
  const PeerJudge client(Peer::client, kWallUs);
  const DatagramResult sent = datagram_count(Role::sender, 20, 40);
  DatagramResult received = datagram_count(Role::receiver, 20, 40);
  received.senders[0].duplicates = 7;
  received.senders[0].reordered = 3;
  CHECK(check_peer_datagrams(server, udp, sent, received).empty());
  CHECK(check_peer_datagrams(client, udp, received, sent).empty());
  CHECK(check_peer_datagrams(client, udp, received, datagram_count(Role::sender, 19, 40)) ==
        "the client reports sending 19 datagrams from sender 0, but this server received 20 distinct ones: "
        "the peer's figures disagree (client_results senders[0].packets)");
  CHECK(has(check_peer_datagrams(server, udp, sent, datagram_count(Role::receiver, 21, 40)),
            "(server_results senders[0].packets)"));
  DatagramResult odd = received;
  odd.senders[0].bytes += 1;
  CHECK(has(check_peer_datagrams(server, udp, sent, odd), "(server_results senders[0].bytes)"));
  odd = received;
  odd.senders[0].last_us = 1e12;
  CHECK(has(check_peer_datagrams(server, udp, sent, odd), "(server_results senders[0].last_us)"));
  odd = received;
  odd.elapsed_us = 1e12;
  CHECK(has(check_peer_datagrams(server, udp, sent, odd), "(server_results elapsed_us)"));
  odd = received;
  odd.intervals = {{1000, 19, 20}};
  CHECK(has(check_peer_datagrams(server, udp, sent, odd), "(server_results intervals)"));
  odd.intervals = {{500, 12, 12}, {1000, 8, 8}};
  CHECK(check_peer_datagrams(server, udp, sent, odd).empty());
}

TEST_CASE("handshakes: both sides count the same connections") {
  SideResult made;
  made.bytes = 10;
  SideResult served;
  served.bytes = 10;
  CHECK(check_peer_handshakes(PeerJudge(Peer::server, 0), made, served).empty());
  served.bytes = 9;
  CHECK(check_peer_handshakes(PeerJudge(Peer::server, 0), made, served) ==
        "the server reports serving 9 handshake connections, but this client made 10: the peer's figures "
        "disagree (server_results bytes)");
}
