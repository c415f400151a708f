// Peers that lie about their results. A client driven by hand claims what a
// real server did not see: the server logs the test as failed, naming the
// figure, records the disagreement as its own result's error, and serves
// the next client. Fake servers report to the real client what it did not
// see: the run fails in one line that names the figure, and the client
// exits 1.

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <thread>

#include "e2e/e2e.hpp"
#include "e2e/hand_started.hpp"
#include "kinds/datagram/wire.hpp"
#include "kinds/side_result.hpp"
#include "protocol/datagram.hpp"
#include "protocol/messages.hpp"
#include "session/control.hpp"
#include "tls/context.hpp"
#include "tls/identity.hpp"
#include "transport/datagram.hpp"
#include "transport/socket.hpp"

using namespace tlscmp;
using namespace tlscmp::test;
using kinds::SideResult;
using nlohmann::json;

namespace {

constexpr auto kWait = std::chrono::milliseconds(5000);
constexpr std::uint64_t kBytes = 8 << 20;

// What a lying peer reports of one stream or connection.
SideResult claim(Role role, std::uint64_t bytes, double elapsed_us, double cpu_s = 0) {
  SideResult r;
  r.role = role;
  r.bytes = bytes;
  r.elapsed_us = elapsed_us;
  r.cpu_user_s = cpu_s;
  return r;
}

protocol::TestRequest base_request(Mode mode) {
  protocol::TestRequest r;
  r.mode = mode;
  r.test.chunk_bytes = 64 * 1024;
  r.client_version = "liar";
  return r;
}

protocol::TestRequest rr_request(bool crr, std::uint64_t transactions) {
  protocol::TestRequest r = base_request(Mode::tcp);
  r.test.chunk_bytes = 1;
  r.test.rr.request_bytes = 1;
  r.test.rr.response_bytes = 1;
  r.test.rr.transactions = transactions;
  r.test.kind = crr ? TestKind::crr : TestKind::rr;
  return r;
}

// The server's --results lines, the last first.
std::vector<json> recorded(const std::string& file) {
  std::vector<json> lines;
  const std::string text = read_file(file);
  // Whole lines only: a line the server is writing as this reads has no end yet.
  std::istringstream in(text.substr(0, text.rfind('\n') + 1));
  for (std::string line; std::getline(in, line);)
    lines.insert(lines.begin(), json::parse(line));
  return lines;
}

// --- lying clients, against a real server ---

// 8 MiB sent, then the client's result, which may lie.
void stream_then_claim(std::uint16_t port, const SideResult& lie) {
  protocol::TestRequest request = base_request(Mode::tcp);
  request.test.stream.bytes = kBytes;
  HandDrivenTest t(port, request);
  t.open_data();
  t.send_payload(kBytes);
  t.end_data();
  const SideResult theirs = t.server_result();
  CHECK(theirs.error.empty());
  CHECK(theirs.bytes == kBytes);
  session::send_message(t.control(), lie, "the client's result");
  session::await_close(t.control(), kWait);
}

// Ten 1/1 transactions, then a claim of eleven.
void rr_then_claim(std::uint16_t port) {
  HandDrivenTest t(port, rr_request(false, 10));
  Stream& data = t.open_data();
  std::error_code ec;
  for (int i = 0; i < 10 && !ec; ++i) {
    std::byte b{'q'};
    data.write_all({&b, 1}, ec);
    data.read_exact({&b, 1}, ec);
  }
  REQUIRE_FALSE(ec);
  t.end_data();
  const SideResult theirs = t.server_result();
  CHECK(theirs.messages == 10);
  SideResult lie = claim(Role::sender, 11, 1000);
  lie.messages = 11;
  session::send_message(t.control(), lie, "the client's result");
  session::await_close(t.control(), kWait);
}

// Ten crr connections, then a count of eleven; the server's answer carries its error.
std::string crr_then_claim(std::uint16_t port) {
  HandStartedTest t(port, rr_request(true, 10), kWait);
  const auto preamble = protocol::encode_preamble(protocol::ConnectionKind::crr);
  std::string head(reinterpret_cast<const char*>(preamble.data()), preamble.size());
  head.append(reinterpret_cast<const char*>(t.accept.cookie.data()), 16);
  head += 'q';
  for (int i = 0; i < 10; ++i) {
    RawConnection c(port);
    c.send(head);
    CHECK(c.read_all(kWait).size() == 1);  // the response, then the server's close
  }
  SideResult lie = claim(Role::sender, 10, 1000);
  lie.connections = 11;
  t.control.set_deadline(Deadline::after(kWait));
  session::send_message(t.control, lie, "the client's connection count");
  return session::receive<SideResult>(t.control, "the server's count").error;
}

// Four handshake connections, then a count of five.
std::string handshakes_then_claim(std::uint16_t port) {
  protocol::TestRequest request = base_request(Mode::tls);
  request.test.kind = TestKind::handshake;
  request.test.chunk_bytes = 1;
  request.test.handshake.handshakes = 4;
  HandStartedTest t(port, request, kWait);
  tls::ClientOptions config;
  config.insecure = true;
  const tls::Context context = tls::Context::for_client(config);
  for (int i = 0; i < 4; ++i) {
    auto stream = context.client_stream(connect_tcp("127.0.0.1", port, Deadline::after(kWait)), "127.0.0.1");
    stream->set_deadline(Deadline::after(kWait));
    REQUIRE_FALSE(stream->handshake());
    std::error_code ec;
    stream->write_all(protocol::encode_preamble(protocol::ConnectionKind::handshake), ec);
    stream->write_all(t.accept.cookie, ec);
    std::byte served{};
    stream->read_exact({&served, 1}, ec);
    REQUIRE_FALSE(ec);
    stream->shutdown_send(ec);
  }
  t.control.set_deadline(Deadline::after(kWait));
  session::send_message(t.control, claim(Role::sender, 5, 0), "the handshake count");
  return session::receive<SideResult>(t.control, "the server's count").error;
}

// Twenty datagrams, then a count of nineteen sent.
std::string datagrams_then_claim(std::uint16_t port) {
  protocol::TestRequest request = base_request(Mode::udp);
  request.test.kind = TestKind::datagram;
  request.test.datagram.packets = 20;
  request.test.chunk_bytes = 40;
  HandStartedTest t(port, request, kWait);
  REQUIRE(t.accept.udp_ports.size() == 1);
  (void)session::receive<protocol::Ready>(t.control, "ready");
  const UniqueFd udp = connect_udp_beside(t.control.native_handle(), t.accept.udp_ports[0]);
  protocol::DatagramHeader header;
  std::copy_n(t.accept.cookie.begin(), header.tag.size(), header.tag.begin());
  for (std::uint32_t n = 0; n < 20; ++n) {
    std::vector<std::byte> datagram(40);
    header.sequence = n;
    protocol::encode_datagram_header(
        header, std::span<std::byte, protocol::kDatagramHeaderBytes>(datagram.data(), 12));
    REQUIRE(::send(udp.get(), datagram.data(), datagram.size(), 0) == 40);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all taken in before the count
  kinds::DatagramResult lie;
  lie.role = Role::sender;
  lie.senders = {{0, 19, 19 * 40, 0, 100, 0, 0}};
  lie.elapsed_us = 100;
  t.control.set_deadline(Deadline::after(kWait));
  session::send_message(t.control, lie, "the senders' count");
  return session::receive<kinds::DatagramResult>(t.control, "the receiver's count").error;
}

// --- fake servers, against the real client ---

// A fake server for one test, on a thread: it takes the control connection
// and the request, accepts the test and plays the rest as `play` says. A
// failure there ends it quietly: the client's line says what it saw.
class FakeServer {
 public:
  using Play = std::function<void(FakeServer&, TcpStream& control)>;

  explicit FakeServer(Play play, bool tls = false) : play_(std::move(play)) {
    if (tls) {
      tls::ServerOptions config;
      config.identity = tls::generate_certificates({}, 1).server;
      tls_.emplace(tls::Context::for_server(config));
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() { thread_.join(); }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::string port_text() const { return std::to_string(listener_.port()); }
  std::uint16_t port() const { return listener_.port(); }

  // The next connection within `wait` (TLS: its handshake done), or null.
  std::unique_ptr<Stream> next_connection(std::chrono::milliseconds wait = kWait) {
    const int fd = listener_.accept(wait);
    if (fd < 0) return nullptr;
    std::unique_ptr<Stream> stream;
    if (tls_) {
      auto s = tls_->server_stream(UniqueFd(fd));
      s->set_deadline(Deadline::after(kWait));
      if (s->handshake()) return nullptr;
      stream = std::move(s);
    } else {
      stream = std::make_unique<TcpStream>(UniqueFd(fd));
    }
    stream->set_deadline(Deadline::after(kWait));
    return stream;
  }

 private:
  void serve() {
    try {
      const int fd = listener_.accept(kWait);
      if (fd < 0) return;
      TcpStream control{UniqueFd(fd)};
      control.set_deadline(Deadline::after(kWait));
      session::receive_preamble(control);
      session::send_preamble(control, protocol::ConnectionKind::control);
      (void)session::receive<protocol::TestRequest>(control, "the request");
      protocol::TestAccept accept;
      accept.server_version = "fake";
      // A UDP port for datagram tests, open (and never read) until the test is over.
      std::uint16_t port = 0;
      udp_ = bind_udp_beside(control.native_handle(), port);
      accept.udp_ports = {port};
      session::send_message(control, accept, "the acceptance");
      play_(*this, control);
    } catch (const std::exception&) {
    }
  }

  Play play_;
  Listener listener_;
  std::optional<tls::Context> tls_;
  UniqueFd udp_;
  std::thread thread_;
};

// A data connection's preamble and header, then the ready byte.
std::unique_ptr<Stream> ready_data(FakeServer& fake) {
  std::unique_ptr<Stream> data = fake.next_connection();
  if (data == nullptr) throw Error("no data connection");
  std::array<std::byte, protocol::kPreambleBytes + protocol::kDataHeaderBytes> header{};
  std::error_code ec;
  data->read_exact(header, ec);
  const std::byte ready{'R'};
  if (!ec) data->write_all({&ready, 1}, ec);
  if (ec) throw Error("the data connection broke");
  return data;
}

// The receiving server of a one-stream test: says go, takes all, reports `lie`.
FakeServer::Play stream_receiver(const SideResult& lie) {
  return [lie](FakeServer& fake, TcpStream& control) {
    const std::unique_ptr<Stream> data = ready_data(fake);
    std::error_code ec;
    const std::byte go{'G'};
    data->write_all({&go, 1}, ec);
    std::vector<std::byte> buffer(64 * 1024);
    while (!ec)
      data->read_some(buffer, ec);
    control.set_deadline(Deadline::after(kWait));
    (void)session::receive<SideResult>(control, "the client's result");
    session::send_message(control, lie, "the server's result");
  };
}

// The sending server of a -R test: sends `bytes` on go, reports `lie`.
FakeServer::Play stream_sender(std::uint64_t bytes, const SideResult& lie) {
  return [bytes, lie](FakeServer& fake, TcpStream& control) {
    const std::unique_ptr<Stream> data = ready_data(fake);
    std::error_code ec;
    std::byte go{};
    data->read_exact({&go, 1}, ec);
    const std::vector<std::byte> chunk(64 * 1024);
    for (std::uint64_t sent = 0; sent < bytes && !ec; sent += chunk.size())
      data->write_all({chunk.data(), std::min<std::size_t>(chunk.size(), bytes - sent)}, ec);
    data->shutdown_send(ec);
    control.set_deadline(Deadline::after(kWait));
    (void)session::receive<SideResult>(control, "the client's result");
    session::send_message(control, lie, "the server's result");
  };
}

// An rr server of one connection: a byte for each byte until the client's end, then `lie`.
FakeServer::Play rr_server(const SideResult& lie) {
  return [lie](FakeServer& fake, TcpStream& control) {
    const std::unique_ptr<Stream> data = ready_data(fake);
    std::error_code ec;
    std::byte b{};
    while (data->read_some({&b, 1}, ec) == 1 && !ec)
      data->write_all({&b, 1}, ec);
    data->shutdown_send(ec);
    control.set_deadline(Deadline::after(kWait));
    (void)session::receive<SideResult>(control, "the client's result");
    session::send_message(control, lie, "the server's result");
  };
}

// Whether `fd` has something to read (or its peer is gone), now.
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

// Serves connections, each as `one` says, until the client's count comes
// (kWait at most); then reports `lie`.
template <typename Result>
FakeServer::Play until_count(std::function<void(Stream&)> one, const Result& lie) {
  return [one, lie](FakeServer& fake, TcpStream& control) {
    const Deadline give_up = Deadline::after(kWait);
    while (!readable(control.native_handle()) && !give_up.expired()) {
      if (const std::unique_ptr<Stream> connection = fake.next_connection(std::chrono::milliseconds(20)))
        one(*connection);
    }
    control.set_deadline(Deadline::after(kWait));
    (void)session::receive<Result>(control, "the client's count");
    session::send_message(control, lie, "the server's count");
  };
}

// A crr connection of a 1/1 test: preamble, cookie and request; the response.
void crr_connection(Stream& connection) {
  std::array<std::byte, protocol::kPreambleBytes + protocol::kCookieBytes + 1> request{};
  std::error_code ec;
  connection.read_exact(request, ec);
  const std::byte response{'r'};
  if (!ec) connection.write_all({&response, 1}, ec);
}

// A handshake connection (the TLS handshake done): preamble and cookie; one byte, a clean end.
void handshake_connection(Stream& connection) {
  std::array<std::byte, protocol::kPreambleBytes + protocol::kCookieBytes> hello{};
  std::error_code ec;
  connection.read_exact(hello, ec);
  const std::byte served{'R'};
  if (!ec) connection.write_all({&served, 1}, ec);
  if (!ec) connection.shutdown_send(ec);
}

// The datagram receiver's start: ready at once, the datagrams left unread.
FakeServer::Play datagram_receiver(const kinds::DatagramResult& lie) {
  const auto count = until_count<kinds::DatagramResult>([](Stream&) {}, lie);
  return [count](FakeServer& fake, TcpStream& control) {
    session::send_message(control, protocol::Ready{}, "ready");
    count(fake, control);
  };
}

// The real client against `fake`: it must fail in one line that says `says`.
void client_fails(const FakeServer& fake, std::vector<std::string> args, const std::string& says) {
  args.insert(args.begin(), {"client", "127.0.0.1", "-p", fake.port_text(), "--repeat", "1"});
  const ProcessResult r = run_tlscmp(args);
  CAPTURE(says);
  expect_failure(r, 1, says);
  CHECK(r.err.find(": the peer's figures disagree (server_results ") != std::string::npos);
}

}  // namespace

TEST_CASE("a client that lies about its results: the server logs the test failed, naming the figure") {
  TempDir dir;
  const std::string results = dir.file("results.jsonl");
  ServerProcess server({"--results", results});
  // The log has `line`, and the results file the disagreement as the error
  // of the server's own result, so that the test shows as failed.
  const auto logged = [&](const std::string& line) {
    CAPTURE(line);
    CHECK(server.process().wait_for_log(line));
    const std::string said = line.substr(line.find("failed: ") + 8);
    std::vector<json> lines;
    for (int i = 0; i < 100; ++i) {
      lines = recorded(results);
      if (!lines.empty() && lines.front()["log"].get<std::string>().find(said) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_FALSE(lines.empty());
    bool found = false;
    for (const json& r : lines.front()["server_results"])
      found = found || r["error"].get<std::string>().rfind(said, 0) == 0;
    CHECK(found);
  };

  stream_then_claim(server.port(), claim(Role::sender, 999, 5000));
  logged(
      "tcp client_to_server failed: the client reports sending 999 bytes in 5000 us, but this server "
      "received "
      "8388608: the peer's figures disagree (client_results bytes)");
  stream_then_claim(server.port(), claim(Role::sender, kBytes, 1e12));
  logged(
      "tcp client_to_server failed: the client reports sending 8388608 bytes in 1000000000000 us, but the "
      "whole run took ");
  stream_then_claim(server.port(), claim(Role::sender, kBytes, 5000, 3000));
  logged(
      "tcp client_to_server failed: the client reports 3000.000 s of CPU on one data thread, but the whole "
      "run took ");
  CHECK(server.log().find("(client_results cpu_user_s + cpu_system_s)") != std::string::npos);

  rr_then_claim(server.port());
  logged(
      "rr tcp 1/1 failed: the client reports taking 11 responses, but this server answered 10 requests: the "
      "peer's figures disagree (client_results messages)");

  const std::string crr_line =
      "the client reports completing 11 connections, but this server served only 10: the peer's figures "
      "disagree (client_results connections)";
  CHECK(crr_then_claim(server.port()) == crr_line);
  logged("crr tcp 1/1 failed: " + crr_line);

  const std::string handshake_line =
      "the client reports making 5 handshake connections, but this server served 4: the peer's figures "
      "disagree (client_results bytes)";
  CHECK(handshakes_then_claim(server.port()) == handshake_line);
  logged("tls handshake test failed: " + handshake_line);

  const std::string datagram_line =
      "the client reports sending 19 datagrams from sender 0, but this server received 20 distinct ones: the "
      "peer's figures disagree (client_results senders[0].packets)";
  CHECK(datagrams_then_claim(server.port()) == datagram_line);
  logged("udp datagram test failed: " + datagram_line);

  // It serves on, and honest clients of every kind pass the same checks.
  REQUIRE(server.process().running());
  const std::vector<std::string> to{"127.0.0.1", "-p", server.port_text(), "--repeat", "1"};
  for (const std::vector<std::string>& kind :
       {std::vector<std::string>{"--insecure", "-n", "3M", "-P", "2", "--bidir"},
        {"--insecure", "--rr", "1/1", "-n", "100"},
        {"--insecure", "--crr", "--rr", "1/1", "-n", "20"},
        {"--mode", "udp", "-n", "50", "-b", "1M"},
        {"--insecure", "--handshakes", "2"}}) {
    std::vector<std::string> args = to;
    args.insert(args.end(), kind.begin(), kind.end());
    CAPTURE(kind.back());
    (void)client_json(args);
  }
}

TEST_CASE("a server that lies about its results: the client fails the run in one line naming the figure") {
  SUBCASE("stream: 0 bytes in 0 us, 0 us, 10^12 us, a byte short, CPU above the wall clock") {
    const std::vector<std::string> args{"--mode", "tcp", "-n", "8M"};
    {
      FakeServer fake(stream_receiver(claim(Role::receiver, 0, 0)));
      client_fails(
          fake, args,
          "tlscmp: error: tcp round 1: the server reports receiving 0 bytes in 0 us, but this client sent "
          "8388608: the peer's figures disagree (server_results bytes)");
    }
    {
      FakeServer fake(stream_receiver(claim(Role::receiver, kBytes, 0)));
      client_fails(fake, args,
                   "tcp round 1: the server reports receiving 8388608 bytes in 0 us, but nothing moves in no "
                   "time: the peer's figures disagree (server_results elapsed_us)");
    }
    {
      FakeServer fake(stream_receiver(claim(Role::receiver, kBytes, 1e12)));
      client_fails(
          fake, args,
          "tcp round 1: the server reports receiving 8388608 bytes in 1000000000000 us, but the whole "
          "run took ");
    }
    {
      FakeServer fake(stream_receiver(claim(Role::receiver, kBytes - 1, 5000)));
      client_fails(fake, args,
                   "tcp round 1: the server reports receiving 8388607 bytes in 5000 us, but this client sent "
                   "8388608: the peer's figures disagree (server_results bytes)");
    }
    {
      FakeServer fake(stream_receiver(claim(Role::receiver, kBytes, 5000, 3000)));
      client_fails(
          fake, args,
          "tcp round 1: the server reports 3000.000 s of CPU on one data thread, but the whole run took ");
    }
  }
  SUBCASE("stream -R: the server claims to have sent 999 bytes") {
    FakeServer fake(stream_sender(kBytes, claim(Role::sender, 999, 5000)));
    client_fails(
        fake, {"--mode", "tcp", "-n", "8M", "-R"},
        "tcp round 1: the server reports sending 999 bytes in 5000 us, but this client received 8388608: "
        "the peer's figures disagree (server_results bytes)");
  }
  SUBCASE("rr: a transaction short, and 10^12 us") {
    SideResult short_one = claim(Role::receiver, 9, 5000);
    short_one.messages = 9;
    {
      FakeServer fake(rr_server(short_one));
      client_fails(
          fake, {"--mode", "tcp", "--rr", "1/1", "-n", "10"},
          "tcp round 1: the server reports answering 9 requests, but this client took 10 responses: the "
          "peer's figures disagree (server_results messages)");
    }
    SideResult slow = claim(Role::receiver, 10, 1e12);
    slow.messages = 10;
    FakeServer fake(rr_server(slow));
    client_fails(
        fake, {"--mode", "tcp", "--rr", "1/1", "-n", "10"},
        "tcp round 1: the server reports answering 10 requests in 1000000000000 us, but the whole run "
        "took ");
  }
  SUBCASE("crr: a connection short") {
    SideResult lie = claim(Role::receiver, 9 * 25, 5000);
    lie.connections = 9;
    lie.wire_bytes_sent = 9;
    FakeServer fake(until_count<SideResult>(crr_connection, lie));
    client_fails(
        fake, {"--mode", "tcp", "--crr", "--rr", "1/1", "-n", "10"},
        "tcp round 1: the server reports serving 9 connections, but this client completed 10: the peer's "
        "figures disagree (server_results connections)");
  }
  SUBCASE("datagrams: one more received than sent") {
    kinds::DatagramResult lie;
    lie.role = Role::receiver;
    lie.senders = {{0, 51, 51 * 100, 0, 1000, 0, 0}};
    FakeServer fake(datagram_receiver(lie));
    client_fails(
        fake, {"--mode", "udp", "-n", "50", "-l", "100", "-b", "1M"},
        "udp round 1: the server reports receiving 51 datagrams from sender 0, but this client sent 50: "
        "the peer's figures disagree (server_results senders[0].packets)");
  }
  SUBCASE("handshakes: a connection short") {
    FakeServer fake(until_count<SideResult>(handshake_connection, claim(Role::receiver, 5, 0)), /*tls=*/true);
    client_fails(
        fake, {"--handshakes", "3", "--insecure"},
        "tlscmp: error: the server reports serving 5 handshake connections, but this client made 6: the "
        "peer's figures disagree (server_results bytes)");
  }
}
