// TLS in depth: versions, suites, groups, key types, mutual TLS, resumption,
// record size, kTLS fallback, and offers named on a mismatch.

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

json tls_run(std::vector<std::string> args) {
  args.insert(args.end(), {"--mode", "tls", "-n", "1M", "--repeat", "1", "--verify"});
  const json j = client_json(args);
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["bytes"] == 1 << 20);
  return j["runs"][0];
}

}  // namespace

TEST_CASE("each TLS version can be chosen and is reported") {
  CHECK(tls_run({"--tls-version", "1.2"})["tls_version"] == "TLSv1.2");
  CHECK(tls_run({"--tls-version", "1.3"})["tls_version"] == "TLSv1.3");
}

TEST_CASE("each TLS 1.3 suite can be chosen and is reported") {
  if (boringssl_build()) {
    skip_unsupported("BoringSSL picks TLS 1.3 suites itself (client_test checks that it says so)");
    return;
  }
  for (const char* suite :
       {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}) {
    CAPTURE(suite);
    const json run = tls_run({"--cipher", suite});
    CHECK(run["cipher"] == suite);
    CHECK(run["tls_version"] == "TLSv1.3");
  }
}

TEST_CASE("key exchange groups can be chosen and are reported") {
  CHECK(tls_run({"--groups", "P-384"})["group"] == "P-384");
  CHECK(tls_run({"--groups", "X25519"})["group"] == "X25519");
}

TEST_CASE("RSA and Ed25519 certificates work and are named with their size") {
  for (const auto& [type, reported] : {std::pair{"rsa-2048", "RSA 2048"}, std::pair{"ed25519", "Ed25519"},
                                       std::pair{"ecdsa-p384", "ECDSA P-384"}}) {
    CAPTURE(type);
    Certs certs(type);
    ServerProcess server({"--cert", certs.file("server.pem"), "--key", certs.file("server.key")});
    const json run = tls_run({"127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem")});
    CHECK(run["certificate_key_type"] == reported);
  }
}

TEST_CASE("mutual TLS: a trusted client certificate is accepted, a missing or untrusted one refused") {
  Certs certs;
  Certs stranger;
  ServerProcess server({"--cert", certs.file("server.pem"), "--key", certs.file("server.key"), "--ca",
                        certs.file("ca.pem"), "--require-client-cert"});
  const std::vector<std::string> base{"127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem")};

  std::vector<std::string> with_cert = base;
  with_cert.insert(with_cert.end(), {"--cert", certs.file("client.pem"), "--key", certs.file("client.key")});
  const json accepted = tls_run(with_cert);
  CHECK(accepted["client_certificate_key_type"] == "ECDSA P-256");

  std::vector<std::string> without{"client"};
  without.insert(without.end(), base.begin(), base.end());
  without.insert(without.end(), {"--mode", "tls", "-n", "1M", "--repeat", "1"});
  const ProcessResult missing = run_tlscmp(without);
  CHECK(missing.exit_code == 1);
  CHECK(is_one_line(missing.err));
  CHECK(missing.err.find("client certificate") != std::string::npos);

  std::vector<std::string> untrusted = without;
  untrusted.insert(untrusted.end(),
                   {"--cert", stranger.file("client.pem"), "--key", stranger.file("client.key")});
  const ProcessResult refused = run_tlscmp(untrusted);
  CHECK(refused.exit_code == 1);
  CHECK(is_one_line(refused.err));
  CHECK(server.process().wait_for_log("TLS handshake failed"));
  // And the server still serves a good client afterwards.
  CHECK(tls_run(with_cert)["bytes"] == 1 << 20);
}

TEST_CASE("resumed handshakes are reported as resumed, and carry fewer bytes than full ones") {
  for (const char* version : {"1.2", "1.3"}) {
    CAPTURE(version);
    const json j = client_json({"--handshakes", "5", "--tls-version", version});
    CHECK(j["runs"].empty());
    const json& h = j["handshakes"];
    CHECK(h["requested"] == 5);
    CHECK(h["tls_version"] == std::string("TLSv") + version);
    CHECK(h["full"]["count"] == 5);
    CHECK(h["full"]["resumed"] == 0);
    CHECK(h["resumed"]["count"] == 5);
    CHECK(h["resumed"]["resumed"] == 5);
    CHECK(h["full"]["per_second"].get<double>() > 0);
    // No certificate in a resumed handshake: a size, not a time, so no noise.
    CHECK(h["resumed"]["bytes_received"]["median"].get<double>() <
          h["full"]["bytes_received"]["median"].get<double>());
    // The hellos, counted by message: a resumed ClientHello carries the
    // session (a ticket, or the TLS 1.3 PSK), so it is the larger one.
    CHECK(h["full"]["client_hello_bytes"]["median"].get<double>() > 100);
    CHECK(h["full"]["server_hello_bytes"]["median"].get<double>() > 40);
    CHECK(h["resumed"]["client_hello_bytes"]["median"].get<double>() >
          h["full"]["client_hello_bytes"]["median"].get<double>());
  }
}

TEST_CASE("--record-size caps the records: more of them, more overhead on the wire") {
  const json normal = tls_run({});
  const json small = tls_run({"--record-size", "1K"});
  CHECK(small["record_size"] == 1024);
  const auto overhead = [](const json& run) {
    return run["server"]["tls_bytes"].get<double>() / run["bytes"].get<double>() - 1;
  };
  CHECK(overhead(normal) > 0);
  CHECK(overhead(small) > 5 * overhead(normal));  // 16 KiB records against 1 KiB ones
  const json reverse = tls_run({"--record-size", "2K", "-R"});
  CHECK(overhead(reverse) > overhead(normal));  // the server, sending, took the cap too
}

TEST_CASE("kTLS asked for on a kernel without it: reported as user space, said in one line") {
  std::ifstream ulp_file("/proc/sys/net/ipv4/tcp_available_ulp");
  std::string ulps;
  std::getline(ulp_file, ulps);
  if ((" " + ulps + " ").find(" tls ") != std::string::npos) {
    skip_unsupported("this kernel has a tls ULP; the fallback cannot be tested here");
    return;
  }
  const ProcessResult r =
      run_tlscmp({"client", "--ktls", "--mode", "tls", "-n", "1M", "--repeat", "1", "-J"});
  REQUIRE(r.exit_code == 0);
  CHECK(is_one_line(r.err));
  CHECK(r.err.find("no tls ULP") != std::string::npos);
  const json j = json::parse(r.out);
  CHECK(j["test"]["ktls"] == true);
  for (const char* side : {"client", "server"}) {
    CAPTURE(side);
    CHECK(j["runs"][0][side]["ktls_send"] == false);
    CHECK(j["runs"][0][side]["ktls_receive"] == false);
    CHECK(j["environment"][side]["tcp_available_ulp"] == ulps);
  }
}

TEST_CASE("a setting the peer does not share fails, naming both sides' offers") {
  // BoringSSL cannot restrict TLS 1.3 suites, so there the server limits only versions and groups.
  const bool suites = !boringssl_build();
  std::vector<std::string> server_args{"--tls-version", "1.3", "--groups", "X25519"};
  if (suites) server_args.insert(server_args.end(), {"--cipher", "TLS_AES_128_GCM_SHA256"});
  ServerProcess server(server_args);
  const std::vector<std::string> base{"client", "127.0.0.1", "-p", server.port_text(), "--insecure", "--mode",
                                      "tls",    "-n",        "1M", "--repeat",         "1"};
  std::vector<std::vector<std::string>> mismatches{{"--groups", "P-256"}, {"--tls-version", "1.2"}};
  if (suites) mismatches.push_back({"--cipher", "TLS_CHACHA20_POLY1305_SHA256"});
  for (const auto& extra : mismatches) {
    CAPTURE(extra[1]);
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = run_tlscmp(args);
    CHECK(r.exit_code == 1);
    CHECK(is_one_line(r.err));
    CHECK(r.err.find("the client offered") != std::string::npos);
    CHECK(r.err.find(
              suites ? "the server accepts versions TLSv1.3, ciphers TLS_AES_128_GCM_SHA256, groups X25519"
                     : "the server accepts versions TLSv1.3, ciphers "
                       "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                       "TLS_CHACHA20_POLY1305_SHA256, groups X25519") != std::string::npos);
  }
  // What they share works.
  std::vector<std::string> ok = base;
  ok.insert(ok.end(), {"--groups", "X25519:P-256"});
  CHECK(run_tlscmp(ok).exit_code == 0);
}

TEST_CASE("--compare-ciphers runs every suite against TCP and summarises each") {
  const json j = client_json({"--compare-ciphers", "-n", "1M", "--repeat", "2", "--verify"});
  std::vector<std::string> expected{"tcp",
                                    "TLS_AES_128_GCM_SHA256",
                                    "TLS_AES_256_GCM_SHA384",
                                    "TLS_CHACHA20_POLY1305_SHA256",
                                    "TLSv1.2 AES128-GCM",
                                    "TLSv1.2 AES256-GCM",
                                    "TLSv1.2 CHACHA20"};
  if (boringssl_build()) {
    // The library picks TLS 1.3 suites: one TLS 1.3 row, and a note per suite left out.
    expected = {"tcp", "TLSv1.2 AES128-GCM", "TLSv1.2 AES256-GCM", "TLSv1.2 CHACHA20",
                "TLSv1.3 (library's choice)"};
    CHECK(j["notes"].size() == 3);
  }
  CHECK(j["test"]["variants"].get<std::vector<std::string>>() == expected);
  REQUIRE(j["runs"].size() == 2 * expected.size());
  for (std::size_t i = 0; i < j["runs"].size(); ++i) {
    const json& run = j["runs"][i];
    CHECK(run["variant"] == expected[i % expected.size()]);
    CHECK(run["bytes"] == 1 << 20);
  }
  if (!boringssl_build()) {
    CHECK(j["runs"][1]["cipher"] == "TLS_AES_128_GCM_SHA256");
    CHECK(j["runs"][4]["tls_version"] == "TLSv1.2");
    CHECK(j["runs"][6]["cipher"] == "ECDHE-ECDSA-CHACHA20-POLY1305");
  }
  CHECK(j["summary"]["tcp"]["over_tcp_transfer_time"].is_null());
  for (std::size_t v = 1; v < expected.size(); ++v) {
    CAPTURE(expected[v]);
    CHECK(j["summary"][expected[v]]["runs"] == 2);
    CHECK(j["summary"][expected[v]]["over_tcp_transfer_time"]["count"] == 2);
  }
  CHECK(run_tlscmp({"client", "--compare-ciphers", "--cipher", "TLS_AES_128_GCM_SHA256"}).exit_code == 2);
}

namespace {

// openssl s_client against `port` with these flags: the suite it got, or "" where the handshake failed.
std::string s_client_suite(std::uint16_t port, const std::string& flags) {
  const ProcessResult r =
      run_process({"/bin/sh", "-c",
                   fmt::format("exec /usr/bin/openssl s_client -connect 127.0.0.1:{} {} -brief </dev/null",
                               port, flags)});
  const std::string key = "Ciphersuite: ";
  const auto at = r.err.find(key);
  if (r.exit_code != 0 || at == std::string::npos) return {};
  return r.err.substr(at + key.size(), r.err.find('\n', at) - at - key.size());
}

}  // namespace

TEST_CASE(
    "a server offers what a hardened one does: TLS 1.3, and TLS 1.2 with ECDHE and AEAD alone, its order") {
  Certs certs;
  ServerProcess server({"--cert", certs.file("server.pem"), "--key", certs.file("server.key")});
  const auto port = static_cast<std::uint16_t>(std::stoi(server.port_text()));
  // Every TLS 1.2 suite OpenSSL's command line knows, one at a time, as testssl.sh and sslscan try them:
  // the ECDSA certificate's three AEAD suites alone (no CBC: "LUCKY13 potentially vulnerable" before).
  const ProcessResult all = run_process({"/usr/bin/openssl", "ciphers", "-tls1_2", "ALL:@SECLEVEL=0"});
  REQUIRE(all.exit_code == 0);
  std::vector<std::string> accepted;
  std::istringstream names(all.out.substr(0, all.out.find('\n')));
  for (std::string suite; std::getline(names, suite, ':');) {
    if (suite.rfind("TLS_", 0) == 0) continue;
    if (!s_client_suite(port, "-tls1_2 -cipher " + suite).empty()) accepted.push_back(suite);
  }
  std::sort(accepted.begin(), accepted.end());
  CHECK(accepted == std::vector<std::string>{"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
                                             "ECDHE-ECDSA-CHACHA20-POLY1305"});
  // The server's order decides: OpenSSL's client puts AES-256 first, the server AES-128.
  CHECK(s_client_suite(port, "-tls1_2") == "ECDHE-ECDSA-AES128-GCM-SHA256");
  CHECK(s_client_suite(port, "-tls1_3").rfind("TLS_", 0) == 0);
}

TEST_CASE("a client's --cipher outside the server's defaults is served to its test, and the server says so") {
  Certs certs;
  ServerProcess server({"--cert", certs.file("server.pem"), "--key", certs.file("server.key")});
  const auto port = static_cast<std::uint16_t>(std::stoi(server.port_text()));
  const std::string cbc = "ECDHE-ECDSA-AES128-SHA";
  CHECK(s_client_suite(port, "-tls1_2 -cipher " + cbc).empty());  // a scanner is refused
  const std::string said =
      "serves TLS suites outside this server's defaults to this test, as its client asked "
      "(--cipher " +
      cbc + ")";
  for (const char* mode : {"tls", "both"}) {  // a TLS run alone, and after a TCP one
    CAPTURE(mode);
    const json j =
        client_json({"127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"), "--mode", mode,
                     "--tls-version", "1.2", "--cipher", cbc, "-n", "1M", "--repeat", "1", "--verify"});
    const json& run = j["runs"].back();
    CHECK(run["tls_version"] == "TLSv1.2");
    CHECK(run["cipher"] == cbc);
    CHECK(run["bytes"] == 1 << 20);
  }
  CHECK(server.process().wait_for_log(said));
  // The grant ended with the test: a scanner is refused again.
  CHECK(s_client_suite(port, "-tls1_2 -cipher " + cbc).empty());
  // A suite within the defaults needs no grant, and gets no line.
  const std::string before = server.log();
  client_json({"127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"), "--mode", "tls",
               "--cipher", "ECDHE-ECDSA-CHACHA20-POLY1305", "-n", "1M", "--repeat", "1"});
  CHECK(server.log().substr(before.size()).find("outside this server's defaults") == std::string::npos);
  if (!boringssl_build()) {
    // A TLS 1.3 suite the library leaves out by default, too.
    const json ccm =
        client_json({"127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"), "--mode", "tls",
                     "--cipher", "TLS_AES_128_CCM_SHA256", "-n", "1M", "--repeat", "1"});
    CHECK(ccm["runs"][0]["cipher"] == "TLS_AES_128_CCM_SHA256");
  }
  // A server given its own --cipher keeps to it: its operator's limit, named in the client's line.
  ServerProcess limited({"--cert", certs.file("server.pem"), "--key", certs.file("server.key"), "--cipher",
                         "ECDHE-ECDSA-AES128-GCM-SHA256"});
  const ProcessResult refused =
      run_tlscmp({"client", "127.0.0.1", "-p", limited.port_text(), "--ca", certs.file("ca.pem"), "--mode",
                  "tls", "--cipher", cbc, "-n", "1M", "--repeat", "1"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("the server accepts versions TLSv1.2, ciphers ECDHE-ECDSA-AES128-GCM-SHA256,") !=
        std::string::npos);
}
