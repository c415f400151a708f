// tlscmp built against one TLS library talking to tlscmp built against the
// other: an OpenSSL client against a BoringSSL server, and the reverse.

#include <algorithm>
#include <sstream>

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

TEST_CASE(
    "one tlscmp holds both libraries: --tls-lib picks each side's, a client of one against a server of the "
    "other") {
  const std::vector<std::string> names = tls_backends_of(tlscmp_binary());
  if (std::ranges::find(names, "boringssl") == names.end() ||
      std::ranges::find(names, "openssl") == names.end()) {
    skip_unsupported(
        "this binary holds one TLS backend (a build with -DTLSCMP_BORINGSSL_BINARY=ON holds both)");
    return;
  }
  CHECK(names.front() == "openssl");  // the default first
  TempDir certs;
  REQUIRE(run_tlscmp({"certs", "--dir", certs.path().string()}).exit_code == 0);
  for (const std::string server_lib : {"boringssl", "openssl"}) {
    const std::string client_lib = server_lib == "openssl" ? "boringssl" : "openssl";
    CAPTURE(server_lib);
    ServerProcess server(
        {"--cert", certs.file("server.pem"), "--key", certs.file("server.key"), "--tls-lib", server_lib});
    const ProcessResult r =
        run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"),
                    "--tls-lib", client_lib, "--crr", "-n", "20", "--repeat", "1", "-J"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    const std::string client_library = j["environment"]["client"]["tls_library"];
    const std::string server_library = j["environment"]["server"]["tls_library"];
    CHECK(client_library.rfind(client_lib == "openssl" ? "OpenSSL" : "BoringSSL", 0) == 0);
    CHECK(server_library.rfind(server_lib == "openssl" ? "OpenSSL" : "BoringSSL", 0) == 0);
    CHECK(j["crr_summary"].size() > 0);
  }
  // The embedded server runs the same library as its client; the name may
  // be spelled as the library spells itself.
  const ProcessResult embedded =
      run_tlscmp({"client", "--tls-lib", "BoringSSL", "--mode", "tls", "-n", "1M", "--repeat", "1", "-J"});
  REQUIRE(embedded.exit_code == 0);
  const json j = json::parse(embedded.out);
  CHECK(std::string(j["environment"]["server"]["tls_library"]).rfind("BoringSSL", 0) == 0);
}

TEST_CASE("--tls-lib of a library tlscmp has not, and no backend at all, are one line each") {
  const std::vector<std::string> names = tls_backends_of(tlscmp_binary());
  REQUIRE(!names.empty());
  const ProcessResult wrong = run_tlscmp({"client", "--tls-lib", "nosuchssl", "-n", "1M"});
  expect_failure(wrong, 2, "--tls-lib nosuchssl");
  CHECK(wrong.err.find("it has " + names.front()) != std::string::npos);
  const ProcessResult list =
      run_tlscmp({"client", "--tls-lib", names.front() + "," + names.front(), "-n", "1M"});
  CHECK(list.exit_code == 2);
  CHECK(list.err.find("one library a side") != std::string::npos);
  if (names.size() < 2) return;  // a binary linked with its one library loads no module
  TempDir empty;
  const ProcessResult none = run_process(
      {"/usr/bin/env", "TLSCMP_BACKEND_DIR=" + empty.path().string(), tlscmp_binary(), "--version"});
  expect_failure(none, 1, "no TLS library");
  CHECK(none.err.find("TLSCMP_BACKEND_DIR") != std::string::npos);
}
