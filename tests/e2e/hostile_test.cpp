// Hostile and broken peers against a real server. Each case is followed by a
// real test that must succeed with exact bytes, and the server's open file
// descriptors must come back to where they were.

#include <signal.h>
#include <sys/socket.h>

#include <thread>

#include "e2e/e2e.hpp"
#include "e2e/hand_started.hpp"
#include "kinds/side_result.hpp"
#include "kinds/stream/transfer.hpp"
#include "protocol/messages.hpp"
#include "session/control.hpp"
#include "tls/context.hpp"
#include "transport/socket.hpp"

using namespace tlscmp;
using namespace tlscmp::test;
using nlohmann::json;

namespace {

constexpr auto kOurWait = std::chrono::milliseconds(5000);  // our own waits, longer than the server's

// A server with short timeouts, so that stalls end quickly.
std::vector<std::string> short_timeouts() {
  return {"--handshake-timeout", "0.5", "--control-timeout", "0.5",
          "--idle-timeout",      "1",   "--connect-timeout", "0.5"};
}

std::string length_header(std::uint32_t n) {
  return std::string{char(n >> 24), char(n >> 16), char(n >> 8), char(n)};
}

const std::string kControl = preamble_text(protocol::ConnectionKind::control);

protocol::TestRequest request(Mode mode, Direction direction, std::uint64_t bytes) {
  protocol::TestRequest r;
  r.mode = mode;
  r.test.stream.direction = direction;
  r.test.stream.bytes = bytes;
  r.test.chunk_bytes = 64 * 1024;
  r.client_version = "hostile";
  return r;
}

// The bytes a TLS client sends first: a real ClientHello, caught by a listener.
std::string client_hello() {
  Listener catcher;
  std::string hello;
  std::thread catch_it([&] {
    const int fd = catcher.accept(kOurWait);
    if (fd < 0) return;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) hello.assign(buf, static_cast<std::size_t>(n));
    ::close(fd);
  });
  {
    tls::ClientOptions config;
    config.insecure = true;
    const tls::Context context = tls::Context::for_client(config);
    auto stream = context.client_stream(connect_tcp("127.0.0.1", catcher.port(), Deadline::after(kOurWait)),
                                        "localhost");
    stream->set_deadline(Deadline::after(kOurWait));
    (void)stream->handshake();  // fails: the catcher hangs up
  }
  catch_it.join();
  return hello;
}

bool fds_back_to(const ServerProcess& server, std::size_t baseline) {
  for (int i = 0; i < 100; ++i) {
    if (server.open_fds() <= baseline) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void real_test_succeeds(ServerProcess& server) {
  // Where a run fails, what the server saw (evaluated only then).
  INFO("the server's log:\n" << server.log());
  for (const char* direction : {"forward", "reverse"}) {
    std::vector<std::string> args{"127.0.0.1", "-p", server.port_text(), "--insecure", "-n", "3M",
                                  "--repeat",  "1",  "--verify"};
    if (std::string(direction) == "reverse") args.push_back("-R");
    const json j = client_json(args);
    REQUIRE(j["runs"].size() == 2);
    CHECK(j["runs"][0]["bytes"] == 3 << 20);
    CHECK(j["runs"][1]["bytes"] == 3 << 20);
  }
}

// Whether a --crr --mode tls client whose server had logged `logged_before`
// bytes is past its two preflights (full and resumed handshakes, a line
// each) and into its crr test, whose connections come beside its control
// connection (two sockets on loopback): a third socket is one of them.
bool crr_test_running(ServerProcess& server, std::size_t logged_before) {
  const auto preflights_done = [&] {
    const std::string log = server.process().log().substr(logged_before);
    const std::size_t first = log.find("tls handshake test");
    return first != std::string::npos && log.find("tls handshake test", first + 1) != std::string::npos;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < give_up) {
    if (preflights_done() && tcp_sockets_at(server.port(), "01") >= 3) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("hostile and broken peers: the server survives, serves the next client, and frees what they held") {
  ServerProcess server(short_timeouts());
  real_test_succeeds(server);  // warm up what the server keeps for its life
  const std::size_t baseline = server.open_fds();
  const auto brief = std::chrono::milliseconds(3000);

  SUBCASE("plaintext HTTP to a path that names no size: answered 404, logged") {
    RawConnection c(server.port());
    c.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
    CHECK(c.read_all(brief).starts_with("HTTP/1.1 404"));
    CHECK(server.process().wait_for_log("POST /upload, which names no response size"));
  }
  SUBCASE("garbage inside a good TLS connection") {
    tls::ClientOptions config;
    config.insecure = true;
    const tls::Context context = tls::Context::for_client(config);
    auto stream =
        context.client_stream(connect_tcp("127.0.0.1", server.port(), Deadline::after(kOurWait)), "x");
    stream->set_deadline(Deadline::after(kOurWait));
    REQUIRE_FALSE(stream->handshake());
    std::error_code ec;
    const std::string garbage = "HELLO / XTP/9\r\n\r\n";
    stream->write_all({reinterpret_cast<const std::byte*>(garbage.data()), garbage.size()}, ec);
    std::byte b{};
    stream->read_exact({&b, 1}, ec);
    CHECK(ec);  // the server hangs up
    CHECK(server.process().wait_for_log("not a tlscmp peer"));
  }
  SUBCASE("control frame lengths 0, 1, the cap, cap+1, 2^31-1 and 2^32-1") {
    const auto cap = static_cast<std::uint32_t>(protocol::kMaxFrameBytes);
    for (std::uint32_t n : {0u, cap + 1, 0x7fffffffu, 0xffffffffu}) {
      CAPTURE(n);
      RawConnection c(server.port());
      c.send(kControl + length_header(n));
      const std::string answer = c.read_all(brief);
      CHECK(answer.find("refusal") != std::string::npos);
      CHECK(answer.find("outside 1..") != std::string::npos);
    }
    {
      RawConnection one(server.port());
      one.send(kControl + length_header(1) + "x");
      CHECK(one.read_all(brief).find("not valid JSON") != std::string::npos);
    }
    {
      // The cap is allowed; the body never comes: a stall the control timeout ends.
      RawConnection at_cap(server.port());
      at_cap.send(kControl + length_header(cap) + std::string(1000, ' '));
      at_cap.read_all(brief);
      CHECK(server.process().wait_for_log("timed out"));
    }
  }
  SUBCASE("a ClientHello cut at each stage, then a hang-up or a stall") {
    const std::string hello = client_hello();
    REQUIRE(hello.size() > 100);
    CHECK(hello[0] == '\x16');
    for (std::size_t cut :
         {std::size_t{1}, std::size_t{5}, std::size_t{9}, hello.size() / 2, hello.size() - 1, hello.size()}) {
      CAPTURE(cut);
      {
        RawConnection hang_up(server.port());
        hang_up.send(hello.substr(0, cut));
      }
      RawConnection stall(server.port());
      stall.send(hello.substr(0, cut));
      stall.read_all(brief);  // the server gives up at its handshake timeout
    }
    CHECK(server.process().wait_for_log("TLS handshake failed"));
  }
  SUBCASE("a stall at each stage of a test") {
    {
      RawConnection after_preamble(server.port());  // preamble, no request
      after_preamble.send(kControl);
      after_preamble.read_all(brief);
    }
    {
      HandDrivenTest no_data(server.port(), request(Mode::tcp, Direction::client_to_server, 1 << 20));
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // never opens its data connection
    }
    for (Mode mode : {Mode::tcp, Mode::tls}) {
      CAPTURE(to_string(mode));
      HandDrivenTest no_go(server.port(), request(mode, Direction::server_to_client, 1 << 20));
      no_go.open_data();  // the receiver that never says go
      CHECK(no_go.server_result().error.find("no go") != std::string::npos);

      HandDrivenTest mid(server.port(), request(mode, Direction::client_to_server, 4 << 20));
      mid.open_data();
      mid.send_payload(1 << 20);  // then nothing
      // A stall: said with the bytes moved of the total and how long nothing came.
      const std::string stalled = mid.server_result().error;
      CHECK(stalled.find("no data for ") != std::string::npos);
      CHECK(stalled.find(" s after 1.0 MB of 4.2 MB received") != std::string::npos);

      HandDrivenTest no_result(server.port(), request(mode, Direction::client_to_server, 1 << 20));
      no_result.open_data();
      no_result.send_payload(1 << 20);
      no_result.end_data();
      // The server's result comes; ours never does, until the server gives up.
      CHECK(no_result.server_result().error.empty());
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    }
    CHECK(server.process().wait_for_log("data connections arrived; the next did not come within"));
    CHECK(server.process().wait_for_log("receiving the client's result: timed out"));
  }
  SUBCASE("a reset (SO_LINGER 0) in the middle of a transfer") {
    for (Mode mode : {Mode::tcp, Mode::tls}) {
      CAPTURE(to_string(mode));
      HandDrivenTest t(server.port(), request(mode, Direction::client_to_server, 8 << 20));
      t.open_data();
      t.send_payload(2 << 20);
      t.reset_data();
      const kinds::SideResult r = t.server_result();
      CHECK_FALSE(r.error.empty());
      CHECK(r.bytes < (8u << 20));
    }
  }
  SUBCASE("a FIN at half the bytes is a failure, in TLS too (no close_notify)") {
    for (Mode mode : {Mode::tcp, Mode::tls}) {
      CAPTURE(to_string(mode));
      HandDrivenTest t(server.port(), request(mode, Direction::client_to_server, 4 << 20));
      t.open_data();
      t.send_payload(2 << 20);
      ::shutdown(t.data_fd(), SHUT_WR);  // a TCP FIN; in TLS without close_notify
      const kinds::SideResult r = t.server_result();
      CHECK(r.bytes == (2u << 20));
      CHECK(r.error.find(mode == Mode::tls
                             ? "without close_notify"
                             : "closed the data connection after 2097152") != std::string::npos);
    }
  }
  SUBCASE("a client of another protocol version is told the server's") {
    RawConnection c(server.port());
    c.send(std::string("TLSCMPC") + char(7));
    const std::string answer = c.read_all(brief);
    CHECK(answer.rfind(kControl, 0) == 0);  // the server's own preamble, version 1
    CHECK(server.process().wait_for_log("protocol version 7"));
  }
  SUBCASE("http connections (--requests-per-connection) with a cut cookie, or one of no test") {
    const auto preamble = protocol::encode_preamble(protocol::ConnectionKind::http);
    const std::string http(reinterpret_cast<const char*>(preamble.data()), preamble.size());
    {
      RawConnection c(server.port());
      c.send(http + std::string(16, 'x') + "GET /10 HTTP/1.1\r\nHost: x\r\n\r\n");
      c.read_all(brief);
      CHECK(server.process().wait_for_log("http connection for an unknown or finished test"));
    }
    {
      RawConnection c(server.port());
      c.send(http + "half");  // then a hang-up
    }
    CHECK(server.process().wait_for_log("http connection without a cookie"));
  }
  SUBCASE(
      "crr connections with no cookie, a cut one, or one of no test; and a crr test's client that vanishes") {
    const auto preamble = protocol::encode_preamble(protocol::ConnectionKind::crr);
    const std::string crr(reinterpret_cast<const char*>(preamble.data()), preamble.size());
    {
      RawConnection c(server.port());
      c.send(crr + std::string(16, 'x') + "q");  // a cookie no test has, and a request
      c.read_all(brief);
      CHECK(server.process().wait_for_log("crr connection for an unknown or finished test"));
    }
    {
      RawConnection c(server.port());
      c.send(crr + "half");  // then a hang-up
    }
    CHECK(server.process().wait_for_log("crr connection without a cookie"));
    // A crr client killed mid-run: the server's control session ends, its connections with it.
    TempDir logs;
    const std::size_t logged_before = server.process().log().size();
    BackgroundProcess client({tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(), "--insecure",
                              "--crr", "-t", "30", "--mode", "tls", "--repeat", "1"},
                             logs.file("client"));
    REQUIRE(crr_test_running(server, logged_before));
    client.stop(SIGKILL);
    // The server notices at its next look at the control connection; under
    // the sanitizers and other tests' load that can take some seconds.
    INFO(server.process().log());
    CHECK(server.process().wait_for_log("the client's connection count", std::chrono::milliseconds(20000)));
  }
  SUBCASE("100 garbage connections at once while a real test runs") {
    std::vector<std::unique_ptr<RawConnection>> garbage;
    for (int i = 0; i < 100; ++i) {
      garbage.push_back(std::make_unique<RawConnection>(server.port()));
      if (i % 2 == 0) garbage.back()->send("\x01\x02garbage");  // the others stay silent
    }
    // The garbage holds 127.0.0.1's share of the connections being set up
    // (--max-pending-per-source); a client from another address is served.
    const json j = client_json({"127.0.0.1", "-p", server.port_text(), "-B", "127.0.0.2", "--insecure", "-n",
                                "8M", "--repeat", "1", "--verify"});
    CHECK(j["runs"][0]["bytes"] == 8 << 20);
    CHECK(j["runs"][1]["bytes"] == 8 << 20);
    garbage.clear();
    // The server lets each go as it notices its close, before the next client.
    CHECK(fds_back_to(server, baseline));
  }

  REQUIRE(server.process().running());
  real_test_succeeds(server);
  CHECK(fds_back_to(server, baseline));
}

TEST_CASE(
    "a TLS library named before the ClientHello: unknown, not a name, cut short: a line each, served on") {
  ServerProcess server(short_timeouts());
  const auto brief = std::chrono::milliseconds(3000);
  // Byte strings of their own lengths: a NUL, and letters after a hex escape, stay what they are.
  const std::vector<std::string> names{std::string("\x01\x09"
                                                   "nosuchssl",
                                                   11),
                                       std::string("\x01\x04"
                                                   "a\nb\x07",
                                                   6),
                                       std::string("\x01\x00", 2),
                                       std::string("\x01\x30"
                                                   "abc",
                                                   5)};
  for (const std::string& named : names) {
    RawConnection c(server.port());
    c.send(named);
    c.read_all(brief);
  }
  CHECK(server.process().wait_for_log("this server holds no TLS library 'nosuchssl'"));
  CHECK(server.process().wait_for_log("with bytes no library's name has"));
  CHECK(server.process().wait_for_log("a connection named a TLS library of 0 bytes"));
  CHECK(server.process().wait_for_log("a connection named a TLS library of 48 bytes"));
  real_test_succeeds(server);
}

TEST_CASE("SIGTERM lets a running test finish, then the server exits 0") {
  ServerProcess server({"--shutdown-grace", "20"});
  TempDir dir;
  BackgroundProcess client({tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(), "-t", "2",
                            "--repeat", "1", "--mode", "tcp", "-J"},
                           dir.file("err"), dir.file("out"));
  REQUIRE(await_data_connection(server.port()));
  CHECK(server.process().stop(SIGTERM) == 0);
  for (int i = 0; i < 100 && client.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(client.stop(SIGKILL) == 0);
  CHECK(server.log().find("waiting up to 20 s for 1 running tests") != std::string::npos);
  CHECK(server.log().find("tcp client_to_server") != std::string::npos);
}

TEST_CASE("caps: a test over --max-bytes, --max-duration or --max-clients is refused with the reason") {
  ServerProcess server({"--max-bytes", "4M", "--max-duration", "1", "--max-clients", "1"});
  const std::vector<std::string> base{"client",     "127.0.0.1", "-p", server.port_text(),
                                      "--insecure", "--repeat",  "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_tlscmp(args);
  };
  const ProcessResult too_big = with({"-n", "5M"});
  CHECK(too_big.exit_code == 1);
  CHECK(too_big.err.find("--max-bytes") != std::string::npos);
  const ProcessResult too_long = with({"-t", "2"});
  CHECK(too_long.exit_code == 1);
  CHECK(too_long.err.find("--max-duration") != std::string::npos);
  CHECK(with({"-n", "4M"}).exit_code == 0);

  // One test at a time: a second client meanwhile hears that the server is busy.
  HandDrivenTest holder(server.port(), request(Mode::tcp, Direction::client_to_server, 1 << 20));
  const ProcessResult busy = with({"-n", "1M"});
  CHECK(busy.exit_code == 1);
  CHECK(busy.err.find("busy") != std::string::npos);
}
