// A standalone server process: certificates, verification, and surviving bad clients.

#include <signal.h>
#include <sys/stat.h>

#include <thread>

#include "e2e/e2e.hpp"
#include "protocol/messages.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

// A test request frame as a hostile client would hand-craft it.
std::string control_frame(const std::string& body) {
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string frame{char(n >> 24), char(n >> 16), char(n >> 8), char(n)};
  return frame + body;
}

const std::string kControlPreamble = preamble_text(tlscmp::protocol::ConnectionKind::control);

// A well-formed test request as JSON, for a test to spoil.
json request_json(tlscmp::Mode mode, std::uint64_t bytes) {
  tlscmp::protocol::TestRequest request;
  request.mode = mode;
  request.test.stream.bytes = bytes;
  request.test.chunk_bytes = 1024;
  const std::vector<std::byte> frame = tlscmp::protocol::encode(request);
  return json::parse(reinterpret_cast<const char*>(frame.data()) + 4,
                     reinterpret_cast<const char*>(frame.data()) + frame.size());
}

bool wait_for_fds(const ServerProcess& server, std::size_t baseline) {
  for (int i = 0; i < 100; ++i) {
    if (server.open_fds() <= baseline) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("certs writes a CA, server and client certificates, keys private") {
  TempDir dir;
  const ProcessResult r =
      run_tlscmp({"certs", "--dir", dir.path().string(), "--host", "bench.example", "--host", "10.1.2.3"});
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"ca.pem", "server.pem", "server.key", "client.pem", "client.key"}) {
    CAPTURE(name);
    CHECK(std::filesystem::exists(dir.path() / name));
  }
  struct stat st {};
  REQUIRE(::stat(dir.file("server.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0077) == 0);
  const ProcessResult sans = run_process(
      {"/usr/bin/openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", dir.file("server.pem")});
  CHECK(sans.out.find("DNS:localhost") != std::string::npos);
  CHECK(sans.out.find("IP Address:127.0.0.1") != std::string::npos);
  CHECK(sans.out.find("DNS:bench.example") != std::string::npos);
  CHECK(sans.out.find("IP Address:10.1.2.3") != std::string::npos);
  const ProcessResult verify = run_process({"/usr/bin/openssl", "verify", "-CAfile", dir.file("ca.pem"),
                                            dir.file("server.pem"), dir.file("client.pem")});
  CHECK(verify.exit_code == 0);
}

TEST_CASE("a server with a CA-signed certificate serves both modes, verified, and logs each test") {
  Certs certs;
  ServerProcess server(certs.server_args());
  const json j =
      client_json({"127.0.0.1", "-p", server.port_text(), "--ca", certs.ca(), "-n", "2M", "--repeat", "1"});
  CHECK(j["test"]["embedded_server"] == false);
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][1]["bytes"] == 2 << 20);
  CHECK(j["runs"][1]["certificate_key_type"] == "ECDSA P-256");
  const json by_name = client_json(
      {"localhost", "-p", server.port_text(), "--ca", certs.ca(), "-n", "1M", "-R", "--repeat", "1"});
  CHECK(by_name["runs"][1]["bytes"] == 1 << 20);
  REQUIRE(server.process().wait_for_log("server_to_client 1048576 bytes in"));
  CHECK(server.log().find("tls client_to_server 2097152 bytes in") != std::string::npos);
  CHECK(server.log().find("tcp client_to_server 2097152 bytes in") != std::string::npos);
}

TEST_CASE("a certificate that fails verification is refused with one line that says why, before any run") {
  Certs certs;
  Certs other;
  ServerProcess server(certs.server_args());
  // The default mode runs tcp first: the TLS preflight fails before it.
  const auto refused = [&](const std::vector<std::string>& trust) {
    std::vector<std::string> args{"client", "127.0.0.1", "-p", server.port_text(), "-n", "1M", "-J"};
    args.insert(args.end(), trust.begin(), trust.end());
    const ProcessResult r = run_tlscmp(args);
    CHECK(r.exit_code == 1);
    CHECK(is_one_line(r.err));
    CHECK(json::parse(r.out)["runs"].empty());
    return r.err;
  };
  const std::string no_ca = refused({});
  CHECK(no_ca.find("the server's chain does not lead to the system's trusted CAs (the certificate '") !=
        std::string::npos);
  CHECK(no_ca.find("' in it is issued by 'O = tlscmp, CN = tlscmp CA')") != std::string::npos);
  CHECK(no_ca.find("(trust the server's CA with --ca FILE, or skip verification with --insecure)") !=
        std::string::npos);
  // A --ca that was given, but is the wrong file: that file is named, and no
  // advice to use --ca.
  const std::string wrong_ca = refused({"--ca", other.ca()});
  CHECK(wrong_ca.find("the server's chain does not lead to the CA in " + other.ca()) != std::string::npos);
  CHECK(wrong_ca.find("trust the server's CA with --ca") == std::string::npos);
  // --insecure is the explicit way round it.
  CHECK(
      run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-n", "1M", "--mode", "tls", "--insecure"})
          .exit_code == 0);
}

TEST_CASE("a certificate for another host name is refused") {
  Certs certs;  // names localhost, 127.0.0.1 and ::1, not 127.0.0.2
  ServerProcess server(certs.server_args(), "127.0.0.2");
  const ProcessResult r = run_tlscmp(
      {"client", "127.0.0.2", "-p", server.port_text(), "--ca", certs.ca(), "-n", "1M", "--mode", "tls"});
  CHECK(r.exit_code == 1);
  CHECK(is_one_line(r.err));
  CHECK(r.err.find("mismatch") != std::string::npos);
}

TEST_CASE("without a certificate the server says so and uses a throwaway one") {
  ServerProcess server;
  CHECK(server.log().find("throwaway certificate") != std::string::npos);
  CHECK(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-n", "1M", "--insecure"}).exit_code ==
        0);
}

TEST_CASE("the server keeps serving after garbage, plaintext, absurd parameters and vanished clients") {
  Certs certs;
  std::vector<std::string> server_args = certs.server_args();
  for (const char* flag : {"--handshake-timeout", "--control-timeout"}) {
    server_args.insert(server_args.end(), {flag, "0.5"});
  }
  ServerProcess server(server_args);
  const std::vector<std::string> real_test{"127.0.0.1", "-p", server.port_text(), "--ca", certs.ca(),
                                           "-n",        "1M", "--repeat",         "1",    "--verify"};
  client_json(real_test);  // warm up: threads and TLS state the server keeps
  const std::size_t baseline = server.open_fds();
  const auto brief = std::chrono::milliseconds(2000);

  SUBCASE("random bytes") {
    RawConnection c(server.port());
    c.send(std::string("\x00\xff\x13\x37garbage\x01\x02", 13));
    c.read_all(brief);
  }
  SUBCASE("an HTTP request for no size: answered 404, logged") {
    RawConnection c(server.port());
    c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(c.read_all(brief).starts_with("HTTP/1.1 404"));
    CHECK(server.process().wait_for_log("GET /, which names no response size"));
  }
  SUBCASE("a TLS record header, then nothing") {
    RawConnection c(server.port());
    c.send(std::string("\x16\x03\x01\x00\x40\x01\x00", 7));
  }
  SUBCASE("a connection that says nothing") {
    RawConnection c(server.port());
    c.read_all(brief);  // the server hangs up at its handshake timeout
    CHECK(server.process().wait_for_log("sent nothing within 0.5 s (--handshake-timeout); closed"));
  }
  SUBCASE("half a preamble, then a stall") {
    RawConnection c(server.port());
    c.send("TLSC");
    c.read_all(brief);
    CHECK(server.process().wait_for_log("timed out"));
  }
  SUBCASE("a test request cut short, then a stall") {
    RawConnection c(server.port());
    c.send(kControlPreamble + std::string("\x00\x00\x01\x00{\"type\"", 11));
    c.read_all(brief);
    CHECK(server.process().wait_for_log("timed out"));
  }
  SUBCASE("a frame length beyond the bound") {
    RawConnection c(server.port());
    c.send(kControlPreamble + std::string("\xff\xff\xff\xff", 4));
    const std::string answer = c.read_all(brief);
    CHECK(answer.find("refusal") != std::string::npos);
  }
  SUBCASE("absurd test parameters are refused with a reason") {
    RawConnection c(server.port());
    json request = request_json(tlscmp::Mode::tcp, 1);
    request["bytes"] = 18446744073709551615ull;
    c.send(kControlPreamble + control_frame(request.dump()));
    const std::string answer = c.read_all(brief);
    CHECK(answer.find("refusal") != std::string::npos);
    CHECK(answer.find("bytes") != std::string::npos);
  }
  SUBCASE("plaintext data for a TLS test") {
    RawConnection control(server.port());
    control.send(kControlPreamble + control_frame(request_json(tlscmp::Mode::tls, 1024).dump()));
    const std::string accept = control.read_all(std::chrono::milliseconds(500));
    REQUIRE(accept.size() > 4);
    const std::string cookie_hex = json::parse(accept.substr(8 + 4))["cookie"];
    std::string cookie;
    for (std::size_t i = 0; i < cookie_hex.size(); i += 2)
      cookie += char(std::stoi(cookie_hex.substr(i, 2), nullptr, 16));
    RawConnection data(server.port());
    data.send(preamble_text(tlscmp::protocol::ConnectionKind::data) + cookie +
              std::string(2, '\0'));  // stream 0
    const std::string refusal = control.read_all(brief);
    CHECK(refusal.find("the data connection is plain TCP but the test is tls") != std::string::npos);
  }
  SUBCASE("a data connection with a made-up cookie") {
    RawConnection c(server.port());
    c.send(preamble_text(tlscmp::protocol::ConnectionKind::data) + std::string(16, 'x') +
           std::string(2, '\0'));
    c.read_all(brief);
    CHECK(server.process().wait_for_log("unknown or finished test"));
  }
  SUBCASE("a client killed in the middle of a transfer") {
    for (const char* mode : {"tcp", "tls"}) {
      TempDir dir;
      std::vector<std::string> args{
          tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(), "--mode", mode, "-n",
          "100G",          "-i",     "0.1"};
      if (mode == std::string("tls")) args.insert(args.end(), {"--ca", certs.ca()});
      BackgroundProcess doomed(args, dir.file("err"), dir.file("out"));
      // Killed once its bytes flow, whatever a sanitizer costs its start.
      const bool flowing = wait_for_file_text(dir.file("out"), "MB/s", std::chrono::seconds(30));
      const std::string err = read_file(dir.file("err"));
      CAPTURE(err);
      CHECK(flowing);
      doomed.stop(SIGKILL);
      CHECK(server.process().wait_for_log(std::string(mode) + " client_to_server round 1 failed"));
    }
  }
  SUBCASE("a receiver that vanishes while the server sends (-R)") {
    TempDir dir;
    BackgroundProcess doomed({tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(), "--ca",
                              certs.ca(), "--mode", "tls", "-n", "100G", "-R", "-i", "0.1"},
                             "/dev/null", dir.file("out"));
    CHECK(wait_for_file_text(dir.file("out"), "MB/s", std::chrono::seconds(30)));
    doomed.stop(SIGKILL);
    CHECK(server.process().wait_for_log("failed after"));
  }

  REQUIRE(server.process().running());
  const json j = client_json(real_test);
  CHECK(j["runs"][0]["bytes"] == 1 << 20);
  CHECK(j["runs"][1]["bytes"] == 1 << 20);
  CHECK(wait_for_fds(server, baseline));
}

TEST_CASE("many clients at once are all served") {
  ServerProcess server;
  std::vector<std::unique_ptr<BackgroundProcess>> clients;
  TempDir logs;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<BackgroundProcess>(
        std::vector<std::string>{tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(),
                                 "--insecure", "-n", "8M", "--repeat", "2"},
        logs.file("client" + std::to_string(i))));
  }
  for (auto& c : clients) {
    for (int i = 0; i < 600 && c->running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(c->stop(SIGKILL) == 0);
  }
}

TEST_CASE("SIGINT and SIGTERM stop the server with exit 0") {
  for (int signal : {SIGINT, SIGTERM}) {
    ServerProcess server;
    CHECK(server.process().stop(signal) == 0);
    CHECK(server.log().find("stopping") != std::string::npos);
  }
}
