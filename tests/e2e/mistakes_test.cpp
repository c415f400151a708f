// What a user who makes a mistake is told: TLS settings that cannot work
// (found by the preflight handshake, before any run), certificates that are
// out of date or do not fit the cipher, `tlscmp certs` run twice, and flags
// that cannot apply. Each message is one line that says what to change.

#include <fmt/format.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e/e2e.hpp"
#include "support/certificates.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

struct CertDir {
  TempDir dir;
  CertDir() { REQUIRE(run_tlscmp({"certs", "--dir", dir.path().string()}).exit_code == 0); }
  std::string file(const char* name) const { return dir.file(name); }
  std::vector<std::string> server_args() const {
    return {"--cert", file("server.pem"), "--key", file("server.key")};
  }
};

// A client in the default mode (tcp, then tls) against `server`; it must fail
// in one line, before any run.
std::string refused_before_any_run(const ServerProcess& server, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"client", "127.0.0.1", "-p", server.port_text(), "-n", "1M", "-J"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessResult r = run_tlscmp(args);
  CHECK(r.exit_code == 1);
  CHECK(is_one_line(r.err));
  CHECK(json::parse(r.out)["runs"].empty());
  return r.err;
}

}  // namespace

TEST_CASE(
    "an expired server certificate: the dates, no advice about --ca, and a warning in the server's log") {
  CertDir certs;
  reissue_server_certificate(certs.dir.path(), -10 * 86400, -86400);
  ServerProcess server(certs.server_args());
  CHECK(server.process().wait_for_log("warning: the certificate in " + certs.file("server.pem") +
                                      " expired on "));
  CHECK(server.log().find("names localhost, 127.0.0.1, ::1") != std::string::npos);
  const std::string err = refused_before_any_run(server, {"--ca", certs.file("ca.pem")});
  CHECK(err.find("the server's certificate expired on ") != std::string::npos);
  CHECK(err.find("(it was valid from ") != std::string::npos);
  CHECK(err.find("--ca") == std::string::npos);
}

TEST_CASE("a server certificate not valid yet: its start date, and a check of the clocks") {
  CertDir certs;
  reissue_server_certificate(certs.dir.path(), 2 * 86400, 10 * 86400);
  ServerProcess server(certs.server_args());
  CHECK(server.process().wait_for_log("is not valid until"));
  const std::string err = refused_before_any_run(server, {"--ca", certs.file("ca.pem")});
  CHECK(err.find("the server's certificate is not valid until ") != std::string::npos);
  CHECK(err.find("check the clocks of both hosts") != std::string::npos);
}

TEST_CASE("a certificate that expires within 7 days is a warning at the server's start") {
  CertDir certs;
  reissue_server_certificate(certs.dir.path(), -86400, 3 * 86400 - 60);
  ServerProcess server(certs.server_args());
  CHECK(server.process().wait_for_log("expires in 2 days, on "));
  // Still valid: a client is served.
  const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--ca",
                                      certs.file("ca.pem"), "-n", "1M", "--repeat", "1"});
  CHECK(r.exit_code == 0);
}

TEST_CASE("a TLS 1.2 cipher the server's certificate cannot serve is named with the certificate") {
  CertDir certs;  // ECDSA P-256
  ServerProcess server(certs.server_args());
  const std::string err = refused_before_any_run(
      server, {"--ca", certs.file("ca.pem"), "--cipher", "ECDHE-RSA-AES128-GCM-SHA256"});
  CHECK(
      err.find("the server's certificate is ECDSA P-256; TLS 1.2 cipher ECDHE-RSA-AES128-GCM-SHA256 needs an "
               "RSA certificate") != std::string::npos);
}

TEST_CASE("tlscmp certs run again reuses the CA, so that copies of ca.pem keep working") {
  TempDir dir;
  const std::string d = dir.path().string();
  REQUIRE(run_tlscmp({"certs", "--dir", d}).exit_code == 0);
  const std::string ca = read_file(dir.file("ca.pem"));
  CHECK((std::filesystem::status(dir.file("ca.key")).permissions() & std::filesystem::perms::others_read) ==
        std::filesystem::perms::none);
  const ProcessResult again = run_tlscmp({"certs", "--dir", d, "--host", "bench.example"});
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("reusing the CA in " + dir.file("ca.pem")) != std::string::npos);
  CHECK(again.out.find("replaced the keys server.key, client.key with new ones") != std::string::npos);
  CHECK(read_file(dir.file("ca.pem")) == ca);
  // The new server certificate, with its new name, is trusted by the old ca.pem.
  const ProcessResult verify = run_process({"/usr/bin/openssl", "verify", "-CAfile", dir.file("ca.pem"),
                                            dir.file("server.pem"), dir.file("client.pem")});
  CHECK(verify.exit_code == 0);
  const ProcessResult names = run_process(
      {"/usr/bin/openssl", "x509", "-in", dir.file("server.pem"), "-noout", "-ext", "subjectAltName"});
  CHECK(names.out.find("DNS:bench.example") != std::string::npos);

  // --new-ca starts over, and says what that breaks.
  const ProcessResult fresh = run_tlscmp({"certs", "--dir", d, "--new-ca"});
  REQUIRE(fresh.exit_code == 0);
  CHECK(fresh.out.find("the old ca.pem copies on clients no longer work") != std::string::npos);
  CHECK(fresh.out.find("ca.key") != std::string::npos);  // the CA's key is replaced too, and says so
  CHECK(read_file(dir.file("ca.pem")) != ca);

  // A ca.pem without its key (an older tlscmp kept none): refused, not replaced.
  std::filesystem::remove(dir.file("ca.key"));
  const std::string before = read_file(dir.file("ca.pem"));
  const ProcessResult keyless = run_tlscmp({"certs", "--dir", d});
  CHECK(keyless.exit_code == 1);
  CHECK(is_one_line(keyless.err));
  CHECK(keyless.err.find("--new-ca") != std::string::npos);
  CHECK(read_file(dir.file("ca.pem")) == before);
}

TEST_CASE("tlscmp certs --host names each name once, however it is spelt") {
  TempDir dir;
  // 127.0.0.1 was listed twice before, in the output and in the certificate.
  const ProcessResult r = run_tlscmp({"certs", "--dir", dir.path().string(), "--host", "127.0.0.1", "--host",
                                      "bench.example", "--host", "LOCALHOST", "--host", "::0001", "--host",
                                      "Bench.Example", "--host", "10.0.0.1", "--host", "127.0.0.1"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("server certificate names: localhost, 127.0.0.1, ::1, bench.example, 10.0.0.1\n") !=
        std::string::npos);
  const ProcessResult names = run_process(
      {"/usr/bin/openssl", "x509", "-in", dir.file("server.pem"), "-noout", "-ext", "subjectAltName"});
  CHECK(names.out.find("DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:bench.example, "
                       "IP Address:10.0.0.1\n") != std::string::npos);
}

TEST_CASE("TLS flags where no TLS runs are refused in one line, as -b is without datagrams") {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--cipher", "TLS_AES_128_GCM_SHA256"},
        {"--groups", "X25519"},
        {"--ca", "ca.pem"},
        {"--insecure"},
        {"--tls-version", "1.3"},
        {"--cert", "c.pem", "--key", "c.key"},
        {"--record-size", "1K"},
        {"--ktls"},
        {"--handshakes", "5"},
        {"--compare-groups"},
        {"--compare-ciphers"}}) {
    CAPTURE(flags.front());
    std::vector<std::string> args{"client", "--mode", "tcp", "-n", "1M"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult r = run_tlscmp(args);
    CHECK(r.exit_code == 2);
    CHECK(is_one_line(r.err));
    CHECK(r.err.find(flags.front() + " is for TLS, and --mode tcp runs none: use --mode tls or both") !=
          std::string::npos);
  }
  const ProcessResult udp =
      run_tlscmp({"client", "--mode", "udp", "--cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"});
  CHECK(udp.exit_code == 2);
  CHECK(udp.err.find("use --mode dtls or both-udp") != std::string::npos);
}

TEST_CASE("smaller mistakes: repeated flags, -w, sizes up to 1P, each said plainly") {
  const ProcessResult repeated = run_tlscmp({"client", "-p", "1", "-p", "2"});
  CHECK(repeated.exit_code == 2);
  CHECK(repeated.err == "tlscmp: --port was given 2 times; give it once\n");
  {
    // The server's flags come in layers (the unit's, then /etc/default's): the last one given counts.
    ServerProcess layered({"--max-bytes", "1M", "--max-bytes", "64M"});
    const ProcessResult r = run_tlscmp(
        {"client", "127.0.0.1", "-p", layered.port_text(), "-n", "4M", "--repeat", "1", "--mode", "tcp"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
  const ProcessResult window = run_tlscmp({"client", "-w", "1", "--mode", "tcp"});
  CHECK(window.exit_code == 2);
  CHECK(window.err == "tlscmp: -w '1': must be between 1K and 1G bytes\n");
  // -w 1K runs, at a crawl (1 MiB took 75 s): a warning says so before the run, which still goes.
  const ProcessResult tiny =
      run_tlscmp({"client", "-w", "1K", "--mode", "tcp", "-n", "16K", "--repeat", "1"});
  CHECK(tiny.exit_code == 0);
  CHECK(tiny.err.rfind(
            "tlscmp: warning: -w 1K: socket buffers below 32K hold fewer than a few TCP segments, so "
            "the run may crawl",
            0) == 0);
  CHECK(is_one_line(tiny.err));
  // -n 1P runs (with the embedded server, whose caps are the client's): Ctrl-C after it starts.
  TempDir dir;
  BackgroundProcess big({tlscmp_binary(), "client", "--mode", "tcp", "-n", "1P", "-J"}, dir.file("err"),
                        dir.file("out"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK(big.stop(SIGINT) == 130);
  const json j = json::parse(read_file(dir.file("out")));
  CHECK(j["test"]["bytes"] == std::uint64_t{1} << 50);
  CHECK(j["runs"][0]["partial"] == true);
  CHECK(j["runs"][0]["bytes"].get<std::uint64_t>() > 0);
}

TEST_CASE("an error is printed once, and the header comes before the -i lines") {
  Listener nothing;  // accepts, never answers: the control message times out
  const ProcessResult failed = run_tlscmp({"client", "127.0.0.1", "-p", std::to_string(nothing.port()),
                                           "--mode", "tcp", "--control-timeout", "0.5", "--repeat", "1"});
  CHECK(failed.exit_code == 1);
  const std::string all = failed.out + failed.err;
  const auto first = all.find("sent nothing within 0.5 s");
  REQUIRE(first != std::string::npos);
  CHECK(all.find("sent nothing within", first + 1) == std::string::npos);

  const ProcessResult live =
      run_tlscmp({"client", "--mode", "tcp", "-t", "0.5", "-i", "0.2", "--repeat", "1"});
  REQUIRE(live.exit_code == 0);
  CHECK(live.out.rfind("tlscmp ", 0) == 0);  // the header first
  const auto header = live.out.find("payload 0.5 s of sending");
  const auto line = live.out.find("[tcp 1/1]");
  REQUIRE(header != std::string::npos);
  REQUIRE(line != std::string::npos);
  CHECK(header < line);
  CHECK(live.out.find("payload 0.5 s of sending", header + 1) == std::string::npos);  // and once
}

TEST_CASE("IPv6 hosts in brackets, with or without a port, and printed in brackets") {
  ServerProcess server({}, "::1");
  for (const std::vector<std::string>& where :
       {std::vector<std::string>{"[::1]", "-p", server.port_text()}, {"[::1]:" + server.port_text()}}) {
    std::vector<std::string> args{"client"};
    args.insert(args.end(), where.begin(), where.end());
    args.insert(args.end(), {"--insecure", "-n", "1M", "--repeat", "1"});
    const ProcessResult r = run_tlscmp(args);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("tlscmp ", 0) == 0);
    CHECK(r.out.find("[::1]:" + server.port_text()) != std::string::npos);
  }
  const ProcessResult two_ports = run_tlscmp({"client", "[::1]:5000", "-p", "6000"});
  CHECK(two_ports.exit_code == 2);
  CHECK(two_ports.err.find("name two ports") != std::string::npos);
  const ProcessResult unclosed = run_tlscmp({"client", "[::1"});
  CHECK(unclosed.exit_code == 2);
  CHECK(unclosed.err.find("[ADDRESS]:PORT") != std::string::npos);
}

TEST_CASE("a report that cannot be written fails in one line that says why") {
  // Text is short enough to sit in stdio's buffer until the exit; it passed with exit 0 before.
  for (const char* flags : {"-n 1M", "-n 1M -J", "-n 1M --csv", "-t 0.5 -i 0.2"}) {
    CAPTURE(flags);
    const ProcessResult r = run_process(
        {"/bin/sh", "-c",
         fmt::format("exec '{}' client --mode tcp --repeat 1 {} > /dev/full", tlscmp_binary(), flags)});
    expect_failure(r, 1, "tlscmp: error: cannot write to standard output: No space left on device");
  }
  const ProcessResult page =
      run_tlscmp({"client", "--mode", "tcp", "--repeat", "1", "-n", "1M", "--html", "/dev/full"});
  expect_failure(page, 1, "tlscmp: error: cannot write '/dev/full': No space left on device");
}
