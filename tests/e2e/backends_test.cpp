// tlscmp built against one TLS library talking to tlscmp built against the
// other: an OpenSSL client against a BoringSSL server, and the reverse.

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

TEST_CASE("a client of one TLS library against a server of the other") {
  const std::string peer = peer_binary();
  if (peer.empty()) {
    skip_unsupported(
        "no other library's binary in this stage (TLSCMP_TEST_PEER): scripts/test runs it against the "
        "BoringSSL build");
    return;
  }
  TempDir certs;
  REQUIRE(run_tlscmp({"certs", "--dir", certs.path().string()}).exit_code == 0);
  const std::vector<std::string> server_args{"--cert", certs.file("server.pem"), "--key",
                                             certs.file("server.key")};
  for (const bool peer_serves : {true, false}) {
    CAPTURE(peer_serves);
    ServerProcess server(server_args, "127.0.0.1", peer_serves ? peer : tlscmp_binary());
    const ProcessResult r =
        run_process({peer_serves ? tlscmp_binary() : peer, "client", "127.0.0.1", "-p", server.port_text(),
                     "--ca", certs.file("ca.pem"), "-n", "2M", "--repeat", "1", "--verify", "-J"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    const std::string client_library = j["environment"]["client"]["tls_library"];
    const std::string server_library = j["environment"]["server"]["tls_library"];
    CHECK(client_library.substr(0, 4) != server_library.substr(0, 4));  // one OpenSSL, one BoringSSL
    for (const json& run : j["runs"])
      CHECK(run["bytes"] == 2 << 20);
    CHECK(j["runs"][1]["tls_version"] == "TLSv1.3");
  }
}

TEST_CASE("a TLS 1.2 suite outside the server's defaults, granted across the two libraries") {
  const std::string peer = peer_binary();
  if (peer.empty()) {
    skip_unsupported(
        "no other library's binary in this stage (TLSCMP_TEST_PEER): scripts/test runs it against the "
        "BoringSSL build");
    return;
  }
  TempDir certs;
  REQUIRE(run_tlscmp({"certs", "--dir", certs.path().string()}).exit_code == 0);
  for (const bool peer_serves : {true, false}) {
    CAPTURE(peer_serves);
    ServerProcess server({"--cert", certs.file("server.pem"), "--key", certs.file("server.key")}, "127.0.0.1",
                         peer_serves ? peer : tlscmp_binary());
    const ProcessResult r =
        run_process({peer_serves ? tlscmp_binary() : peer, "client", "127.0.0.1", "-p", server.port_text(),
                     "--ca", certs.file("ca.pem"), "--mode", "tls", "--cipher", "ECDHE-ECDSA-AES128-SHA",
                     "-n", "1M", "--repeat", "1", "--verify", "-J"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["runs"][0]["cipher"] == "ECDHE-ECDSA-AES128-SHA");
    CHECK(server.process().wait_for_log("serves TLS suites outside this server's defaults to this test"));
  }
}
