// Bad input of every kind: one clear line on stderr and a non-zero exit.

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "e2e/e2e.hpp"
#include "protocol/messages.hpp"

using namespace tlscmp::test;

TEST_CASE("unknown flags and bad values are usage errors (exit 2)") {
  expect_failure(run_tlscmp({"client", "--frobnicate"}), 2, "--frobnicate");
  expect_failure(run_tlscmp({"client", "-n", "lots"}), 2, "-n");
  expect_failure(run_tlscmp({"client", "--mode", "quick"}), 2, "'quick' is no transport");
  expect_failure(run_tlscmp({"server", "-p", "99999"}), 2, "99999");
  expect_failure(run_tlscmp({"server", "--bind", "not-an-address", "-p", "0"}), 2, "not-an-address");
  expect_failure(run_tlscmp({"certs", "--host", "bad,host", "--dir", "/tmp/unused-tlscmp"}), 2, "bad,host");
  expect_failure(run_tlscmp({"launch"}), 2, "launch");
}

TEST_CASE("unreadable, garbage and mismatched certificate files are named") {
  TempDir dir;
  REQUIRE(run_tlscmp({"certs", "--dir", dir.path().string()}).exit_code == 0);
  expect_failure(
      run_tlscmp({"server", "-p", "0", "--cert", dir.file("missing.pem"), "--key", dir.file("server.key")}),
      1, "cannot read certificate file");
  std::ofstream(dir.file("garbage.pem")) << "hello\n";
  expect_failure(
      run_tlscmp({"server", "-p", "0", "--cert", dir.file("garbage.pem"), "--key", dir.file("server.key")}),
      1, "holds no PEM certificate");
  expect_failure(
      run_tlscmp({"server", "-p", "0", "--cert", dir.file("server.pem"), "--key", dir.file("client.key")}), 1,
      "does not match");
  expect_failure(run_tlscmp({"client", "--ca", dir.file("missing.pem"), "-n", "1K"}), 1,
                 "cannot read CA file");
  expect_failure(run_tlscmp({"client", "--ca", dir.file("garbage.pem"), "-n", "1K", "--mode", "tls"}), 1,
                 "garbage.pem");
}

TEST_CASE("a port in use is reported") {
  ServerProcess first;
  expect_failure(run_tlscmp({"server", "--bind", "127.0.0.1", "-p", first.port_text()}), 1, "in use");
}

TEST_CASE("a host that refuses or does not exist is reported") {
  std::uint16_t closed_port = 0;
  {
    Listener probe;  // a port that was free a moment ago, and is closed now
    closed_port = probe.port();
  }
  expect_failure(run_tlscmp({"client", "127.0.0.1", "-p", std::to_string(closed_port), "-n", "1K"}), 1,
                 "Connection refused");
  expect_failure(run_tlscmp({"client", "no-such-host.invalid", "-n", "1K"}), 1, "no-such-host.invalid");
}

TEST_CASE("a server that closes early fails the run with a clear line") {
  Listener fake;
  std::thread server([&] {
    const int fd = fake.accept(std::chrono::seconds(10));
    if (fd < 0) return;
    char buf[64];
    (void)::recv(fd, buf, sizeof buf, 0);  // take the preamble, then hang up
    ::close(fd);
  });
  const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", std::to_string(fake.port()), "-n", "1K"});
  server.join();
  // A FIN or, with the request still unread, a reset: either way the line names the step.
  expect_failure(r, 1, "the server's answer");
}

namespace {

// A one-connection fake server: takes what the client sends, answers `reply`
// and keeps the connection open until the client closes it.
ProcessResult client_against(const std::string& reply, const std::vector<std::string>& extra = {}) {
  Listener fake;
  std::thread server([&] {
    const int fd = fake.accept(std::chrono::seconds(10));
    if (fd < 0) return;
    char buf[256];
    (void)::recv(fd, buf, sizeof buf, 0);
    (void)::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    // Until the client closes: a close with its bytes unread would reset the connection, losing the reply.
    while (::recv(fd, buf, sizeof buf, 0) > 0) {
    }
    ::close(fd);
  });
  std::vector<std::string> args{"client", "127.0.0.1", "-p", std::to_string(fake.port()), "-n", "1K"};
  args.insert(args.end(), extra.begin(), extra.end());
  ProcessResult r = run_tlscmp(args);
  server.join();
  return r;
}

const std::string kServerPreamble = preamble_text(tlscmp::protocol::ConnectionKind::control);

}  // namespace

TEST_CASE("a server that answers with garbage fails the run") {
  expect_failure(
      client_against(std::string("\x00\x00\x00\x05hello", 9)), 1,
      "is not a tlscmp server: it sent \"\\x00\\x00\\x00\\x05hello\"; check the host and the port");
  expect_failure(client_against(kServerPreamble + std::string("\x00\x00\x00\x05hello", 9)), 1,
                 "bad control message");
  expect_failure(client_against(kServerPreamble + std::string("\xff\xff\xff\xff", 4)), 1,
                 "bad control message");
}

TEST_CASE("a server of another protocol is named from its first bytes, at once, not after the timeout") {
  const std::pair<std::string, std::string> cases[] = {
      // An HTTP server that answers our bytes at once (many wait for a line end: see below).
      {"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
       "is not a tlscmp server: it sent \"HTTP/1.1 400 Bad Request\", which looks like HTTP; check the host "
       "and the port (-p)"},
      {"HTT", "it sent \"HTT\", which looks like HTTP"},  // three bytes, then a stall
      {"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n",
       "it sent \"SSH-2.0-OpenSSH_9.2p1 Debian-2\", which looks like SSH"},
      {std::string("\x15\x03\x01\x00\x02\x02\x46", 7), "which looks like TLS"},  // a TLS server's alert
      {"220 mail.example ESMTP\r\n", "which looks like SMTP or FTP"}};
  for (const auto& [reply, says] : cases) {
    CAPTURE(reply);
    const auto start = std::chrono::steady_clock::now();
    expect_failure(client_against(reply), 1, says);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));  // the control timeout is 10 s
  }
  expect_failure(client_against("TLSC", {"--control-timeout", "0.3"}), 1,
                 "sent 4 bytes of a tlscmp preamble, then nothing within 0.3 s (--control-timeout)");
}

TEST_CASE("a server of another protocol version is named as such") {
  // An older server: version 1's requests did not name their kind.
  expect_failure(client_against(std::string("TLSCMPC") + char(1)), 1,
                 fmt::format("the server speaks tlscmp protocol version 1, this client speaks version {}",
                             tlscmp::protocol::kVersion));
}

TEST_CASE("a host that does not answer times out with a clear line") {
  Listener silent(0);
  silent.fill_queue(3);
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_tlscmp(
      {"client", "127.0.0.1", "-p", std::to_string(silent.port()), "--connect-timeout", "0.5", "-n", "1K"});
  expect_failure(r, 1, "no answer within the connect timeout");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("a server that accepts and then says nothing times out") {
  Listener fake;
  std::thread server([&] {
    const int fd = fake.accept(std::chrono::seconds(10));
    if (fd < 0) return;
    std::this_thread::sleep_for(std::chrono::seconds(2));
    ::close(fd);
  });
  const ProcessResult r = run_tlscmp(
      {"client", "127.0.0.1", "-p", std::to_string(fake.port()), "--control-timeout", "0.3", "-n", "1K"});
  server.join();
  // As an HTTP server that waits for a line end, a silent server, or a stopped one.
  expect_failure(
      r, 1,
      fmt::format("the server at 127.0.0.1:{} accepted the connection but sent nothing within 0.3 s "
                  "(--control-timeout): is it a tlscmp server, and is it running?",
                  fake.port()));
}
