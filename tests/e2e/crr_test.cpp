// Connection per transaction (--crr): exact connection counts, resumed
// connections shown as resumed and refused resumptions counted as full
// handshakes, -P connectors adding up, each phase timed, TIME_WAIT counted,
// bad input refused in one line, the server's caps, and both TLS libraries.

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

json crr_json(std::vector<std::string> args) {
  args.insert(args.begin(), "--crr");
  const json j = client_json(std::move(args));
  REQUIRE(j["crr_runs"].is_array());
  return j;
}

const json& run_of(const json& j, const std::string& variant, int round = 1) {
  for (const json& run : j["crr_runs"]) {
    if (run["variant"] == variant && run["round"] == round) return run;
  }
  FAIL("no " << variant << " run in round " << round);
  static const json none;
  return none;
}

}  // namespace

TEST_CASE("--crr -n: exactly that many connections per run over tcp, tls and tls-resumed, each phase timed") {
  const json j = crr_json({"-n", "120", "--repeat", "2"});
  REQUIRE(j["crr_runs"].size() == 6);
  CHECK(j["test"]["crr"] == true);
  CHECK(j["test"]["crr_close"] == "reset");
  for (const json& run : j["crr_runs"]) {
    CAPTURE(run);
    CHECK(run["connections"] == 120);
    CHECK(run["server_connections"] == 120);
    CHECK(run["failed"] == 0);
    CHECK(run["connectors"] == 1);
    CHECK(run["connections_per_s"].get<double>() > 0);
    check_latency_order(run["connect_us"]);
    check_latency_order(run["response_us"]);
    check_latency_order(run["total_us"]);
    // The whole is at least each of its phases.
    CHECK(run["total_us"]["max"].get<double>() >= run["response_us"]["min"].get<double>());
    CHECK(run["client"]["cpu_us_per_connection"].get<double>() > 0);
    CHECK(run["server"]["cpu_us_per_connection"].get<double>() > 0);
    CHECK(run["bytes_sent_per_connection"].get<double>() > 1);
    CHECK(run["bytes_received_per_connection"].get<double>() >= 1);
    CHECK(run["time_wait_before"].is_number_unsigned());
    CHECK(run["time_wait_after"].is_number_unsigned());
  }
  const json& tcp = run_of(j, "tcp");
  CHECK(tcp["handshake_us"].is_null());
  CHECK(tcp["resumed"].is_null());
  // Plain TCP: the preamble, the cookie and the 1-byte request; the 1-byte response.
  CHECK(tcp["bytes_sent_per_connection"] == 8 + 16 + 1);
  CHECK(tcp["bytes_received_per_connection"] == 1);
  const json& full = run_of(j, "tls");
  check_latency_order(full["handshake_us"]);
  CHECK(full["resumed"] == 0);
  CHECK(full["tls_version"] == "TLSv1.3");
  // A full handshake carries the certificate: far more than the TCP bytes.
  CHECK(full["bytes_received_per_connection"].get<double>() > 300);
  for (int round : {1, 2}) {
    const json& resumed = run_of(j, "tls-resumed", round);
    CHECK(resumed["resumption"] == true);
    CHECK(resumed["resumed"] == 120);
    CHECK(resumed["server_resumed"] == 120);
    CHECK(resumed["resumption_refused"] == 0);
    CHECK(resumed["resumed_by"] == "ticket");
    // No certificate in a resumed handshake.
    CHECK(resumed["bytes_received_per_connection"].get<double>() <
          full["bytes_received_per_connection"].get<double>());
  }
  // Two rounds: each TLS variant paired with the round's TCP run.
  const json& summary = j["crr_summary"];
  for (const char* variant : {"tls", "tls-resumed"}) {
    CAPTURE(variant);
    const json& ratio = summary[variant]["over_tcp"]["connections_per_s"];
    CHECK(ratio["count"] == 2);
    CHECK(ratio["median"].get<double>() > 0);
    CHECK(ratio["ci95_low"].get<double>() <= ratio["ci95_high"].get<double>());
  }
  CHECK(summary["tls_over_tcp"] == summary["tls"]["over_tcp"]);
  CHECK(summary["tls-resumed"]["resumed"] == 240);
  CHECK(summary["tcp"]["over_tcp"].is_null());
  CHECK(j["runs"].empty());
}

TEST_CASE("--crr -P 4: the connectors' connections add up to -n") {
  const json j = crr_json({"-n", "402", "-P", "4", "--mode", "tcp", "--repeat", "1"});
  const json& run = j["crr_runs"][0];
  CHECK(run["connectors"] == 4);
  CHECK(run["connections"] == 402);
  CHECK(run["server_connections"] == 402);
  CHECK(j["test"]["streams"] == 4);
}

TEST_CASE("--crr -t: connections until the time is up, and -P 4 over TLS with resumption") {
  const json j = crr_json({"-t", "0.5", "-P", "4", "--mode", "tls", "--repeat", "1"});
  REQUIRE(j["crr_runs"].size() == 2);
  for (const json& run : j["crr_runs"]) {
    CAPTURE(run);
    CHECK(run["connections"].get<std::uint64_t>() > 4);
    CHECK(run["server_connections"] == run["connections"]);
    CHECK(run["elapsed_us"].get<double>() >= 0.5e6);
    CHECK(run["elapsed_us"].get<double>() < 5e6);
  }
  const json& resumed = run_of(j, "tls-resumed");
  CHECK(resumed["resumed"] == resumed["connections"]);
}

TEST_CASE("--crr against a server that resumes nothing: every resumption refused, counted as full") {
  ServerProcess server({"--resumption", "none"});
  const json j = crr_json(
      {"127.0.0.1", "-p", server.port_text(), "--insecure", "-n", "40", "--mode", "tls", "--repeat", "1"});
  const json& resumed = run_of(j, "tls-resumed");
  CHECK(resumed["connections"] == 40);
  CHECK(resumed["resumed"] == 0);
  CHECK(resumed["resumption_refused"] == 40);
  CHECK(resumed["server_resumed"] == 0);
  CHECK(j["crr_summary"]["tls-resumed"]["resumption_refused"] == 40);
  const ProcessResult text = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure",
                                         "--crr", "-n", "20", "--mode", "tls", "--repeat", "1"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("the server refused 20 of 20 resumptions") != std::string::npos);
}

TEST_CASE("--crr over TLS 1.2: resumed from a session ticket, and says so") {
  const json j = crr_json({"-n", "30", "--mode", "tls", "--tls-version", "1.2", "--repeat", "1"});
  const json& resumed = run_of(j, "tls-resumed");
  CHECK(resumed["tls_version"] == "TLSv1.2");
  CHECK(resumed["resumed"] == 30);
  CHECK(resumed["resumed_by"] == "ticket");
}

TEST_CASE("--crr --close fin: the client keeps each port in TIME_WAIT, and the report counts them") {
  const json j = crr_json({"-n", "200", "--mode", "tcp", "--close", "fin", "--repeat", "1"});
  CHECK(j["test"]["crr_close"] == "fin");
  const json& run = j["crr_runs"][0];
  CHECK(run["connections"] == 200);
  // The host-wide counts the report gives move with other tests' sockets
  // too (a minute after a burst, thousands expire in a run's half second):
  // this run's own are those with its server's port, which stay a minute.
  CHECK(run["time_wait_after"].is_number());
  CHECK(run["time_wait_before"].is_number());
  CHECK(tcp_sockets_at(j["test"]["port"].get<std::uint16_t>(), "06") >= 190);
}

TEST_CASE("--crr: bad input is refused in one line that says what to do") {
  expect_mistakes("client", {
                                {{"--crr", "--rate", "100", "-t", "1"}, 2, "--rate does not apply to --crr"},
                                {{"--crr", "--verify"}, 2, "--verify does not apply to --crr"},
                                {{"--crr", "-i", "1"}, 2, "-i does not apply to --crr"},
                                {{"--crr", "-R"}, 2, "-R is for bulk runs; --crr takes"},
                                {{"--crr", "-n", "2", "-P", "3"}, 2, "fewer connections than connectors"},
                                {{"--crr", "-n", "1.5"}, 2, "not a whole number of connections"},
                                {{"--crr", "--mode", "udp"}, 2, "--crr runs over tcp and tls"},
                                {{"--crr", "--rr", "0/1"}, 2, "--rr request size"},
                                {{"--crr", "--close", "slam"}, 2, "--close"},
                                {{"--close", "fin"}, 2, "--close is for --crr runs"},
                                {{"--crr", "-N"}, 2, "crr connections always set TCP_NODELAY"},
                            });
}

// The served run's 20 connections take well under the cap even on a loaded
// machine; 50 under a 0.5 s cap did not, under ctest -j4.
TEST_CASE("--crr against a server with caps: --max-duration stops a long -n, and the server serves on") {
  ServerProcess server({"--max-duration", "2"});
  const ProcessResult refused = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--crr", "-t",
                                            "5", "--mode", "tcp", "--repeat", "1"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("this server allows at most 2 s (--max-duration)") != std::string::npos);
  const ProcessResult stopped = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--crr", "-n",
                                            "100M", "--mode", "tcp", "--repeat", "1"});
  CHECK(stopped.exit_code == 1);
  CHECK(is_one_line(stopped.err));
  CHECK(stopped.err.find("--max-duration of 2 s") != std::string::npos);
  const ProcessResult served = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--crr", "-n",
                                           "20", "--mode", "tcp", "--repeat", "1"});
  INFO("stderr: " << served.err);
  CHECK(served.exit_code == 0);
  CHECK(server.log().find("crr tcp 1/1: 20 connections") != std::string::npos);
}

TEST_CASE("--crr between the two TLS libraries: full and resumed handshakes both ways") {
  const std::string peer = peer_binary();
  if (peer.empty()) {
    skip_unsupported(
        "no other library's binary in this stage (TLSCMP_TEST_PEER): scripts/test runs it against the "
        "BoringSSL build");
    return;
  }
  for (const bool peer_serves : {true, false}) {
    CAPTURE(peer_serves);
    ServerProcess server({}, "127.0.0.1", peer_serves ? peer : tlscmp_binary());
    const ProcessResult r =
        run_process({peer_serves ? tlscmp_binary() : peer, "client", "127.0.0.1", "-p", server.port_text(),
                     "--insecure", "--crr", "-n", "30", "--mode", "tls", "--repeat", "1", "-J"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["environment"]["client"]["tls_library"].get<std::string>().substr(0, 4) !=
          j["environment"]["server"]["tls_library"].get<std::string>().substr(0, 4));
    CHECK(run_of(j, "tls")["connections"] == 30);
    CHECK(run_of(j, "tls-resumed")["resumed"] == 30);
  }
}

TEST_CASE("--crr -P 16 against a server that sets up 4 connections per address: crr has its own budget") {
  // Without its own budget, a crr test's connections in their handshakes
  // would be turned away by --max-pending-per-source, as busy.
  ServerProcess server({"--max-pending-per-source", "4"});
  const json j = crr_json({"127.0.0.1", "-p", server.port_text(), "--insecure", "-n", "320", "-P", "16",
                           "--mode", "tls", "--repeat", "1"});
  for (const json& run : j["crr_runs"]) {
    CAPTURE(run);
    CHECK(run["failed"] == 0);
    CHECK(run["connections"] == 320);
  }
  // And the shared caps still hold for everything else from that address.
  CHECK(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure", "-n", "1M", "-P", "4",
                    "--repeat", "1"})
            .exit_code == 0);
}

TEST_CASE(
    "--crr --compare-key-types: a run per key type, each on a certificate of that type the server made") {
  // The server makes each key as the test asks for it: an RSA 3072 key took
  // over the 10 s control timeout under the sanitizers once, so 60 s here.
  const json j = crr_json({"--compare-key-types", "-n", "12", "--repeat", "1", "--control-timeout", "60"});
  CHECK(j["test"]["compare_key_types"] == true);
  const std::vector<std::pair<std::string, std::string>> expected{{"rsa-2048", "RSA 2048"},
                                                                  {"rsa-3072", "RSA 3072"},
                                                                  {"ecdsa-p256", "ECDSA P-256"},
                                                                  {"ecdsa-p384", "ECDSA P-384"},
                                                                  {"ed25519", "Ed25519"}};
  REQUIRE(j["crr_runs"].size() == expected.size() + 1);
  CHECK(run_of(j, "tcp")["connections"] == 12);
  for (const auto& [type, key] : expected) {
    CAPTURE(type);
    const json& run = run_of(j, "tls " + type);
    CHECK(run["key_type"] == type);
    CHECK(run["certificate_key_type"] == key);
    CHECK(run["connections"] == 12);
    CHECK(run["resumed"] == 0);
    CHECK(j["crr_summary"]["tls " + type]["over_tcp"]["connections_per_s"]["median"].get<double>() > 0);
  }
}

TEST_CASE("--compare-key-types against a server with its own certificate: signed by --issuer, or refused") {
  TempDir certs;
  REQUIRE(run_tlscmp({"certs", "--dir", certs.path().string()}).exit_code == 0);
  const std::vector<std::string> own{"--cert", certs.file("server.pem"), "--key", certs.file("server.key")};
  {
    ServerProcess server(own);
    const ProcessResult r =
        run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"), "--crr",
                    "--compare-key-types", "-n", "5", "--repeat", "1"});
    CHECK(r.exit_code == 1);
    CHECK(is_one_line(r.err));
    CHECK(r.err.find("start it with --issuer DIR") != std::string::npos);
  }
  std::vector<std::string> with_issuer = own;
  with_issuer.insert(with_issuer.end(), {"--issuer", certs.path().string()});
  ServerProcess server(with_issuer);
  // The client verifies each certificate against the CA: the server signed them with it.
  const json j = crr_json({"127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"),
                           "--compare-key-types", "-n", "5", "--repeat", "1", "--control-timeout", "60"});
  CHECK(run_of(j, "tls ed25519")["certificate_key_type"] == "Ed25519");
  CHECK(run_of(j, "tls rsa-3072")["connections"] == 5);
  CHECK(server.log().find("made a certificate with an RSA 3072 key for key type tests") != std::string::npos);
}

TEST_CASE("--crr --compare-groups: full handshakes under load with each group the library has") {
  const json j = crr_json({"--compare-groups", "-t", "0.2", "--repeat", "1"});
  REQUIRE(j["crr_runs"].size() >= 3);
  CHECK(run_of(j, "tcp")["connections"].get<std::uint64_t>() > 0);
  for (const json& run : j["crr_runs"]) {
    if (run["mode"] != "tls") continue;
    const std::string group = run["variant"].get<std::string>().substr(4);
    CAPTURE(group);
    CHECK(run["group"] == group);
    CHECK(run["connections"].get<std::uint64_t>() >= 1);
  }
  CHECK(run_tlscmp({"client", "--compare-groups", "-t", "1"}).err.find("with --crr it runs for -t") !=
        std::string::npos);
}

TEST_CASE(
    "--crr over TLS 1.2 against a server that keeps sessions but issues no tickets: resumed by session id") {
  ServerProcess server({"--resumption", "ids"});
  const json j = crr_json({"127.0.0.1", "-p", server.port_text(), "--insecure", "-n", "30", "--mode", "tls",
                           "--tls-version", "1.2", "--repeat", "1"});
  const json& resumed = run_of(j, "tls-resumed");
  CHECK(resumed["resumed"] == 30);
  CHECK(resumed["resumed_by"] == "session id");
}
