// wolfSSL's backend (src/tls/wolfssl/): what it cannot do is refused in one
// line naming it, its certificates verify under the other libraries, and
// each kind runs on it beside the first library.

#include <algorithm>

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

bool holds_wolfssl() {
  const std::vector<std::string> names = tls_backends_of(tlscmp_binary());
  if (std::ranges::find(names, "wolfssl") != names.end()) return true;
  skip_unsupported("this binary holds no wolfSSL backend (libwolfssl-dev was not there at build time)");
  return false;
}

std::vector<json> wolfssl_runs_of(const json& runs, const std::string& label) {
  std::vector<json> out;
  for (const json& run : runs) {
    if (run["variant"] == label) out.push_back(run);
  }
  return out;
}

}  // namespace

TEST_CASE("wolfSSL: what it cannot do is refused in one line naming it") {
  if (!holds_wolfssl()) return;
  struct Mistake {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Mistake> mistakes{
      {{"--ktls"}, "--ktls: tlscmp's wolfSSL backend has no kernel TLS"},
      {{"--groups", "X25519MLKEM768"}, "wolfSSL 5."},
      {{"--cipher", "NO-SUCH-SUITE"}, "--cipher NO-SUCH-SUITE: wolfSSL 5."},
      {{"--record-size", "4096"}, "--record-size 4096: wolfSSL caps its records only by negotiating"},
  };
  for (const Mistake& m : mistakes) {
    CAPTURE(m.says);
    std::vector<std::string> args{"client", "--tls-lib", "wolfssl",  "--mode", "tls",
                                  "-n",     "1M",        "--repeat", "1"};
    args.insert(args.end(), m.args.begin(), m.args.end());
    const ProcessResult r = run_tlscmp(args);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(m.says) != std::string::npos);
    CHECK(std::ranges::count(r.err, '\n') <= 2);
  }
  // Debian's wolfSSL seals a DTLS datagram of its MTU at most: said before anything is sent.
  const ProcessResult large =
      run_tlscmp({"client", "--tls-lib", "wolfssl", "--mode", "dtls", "-n", "100", "-l", "16000"});
  CHECK(large.exit_code != 0);
  CHECK(is_one_line(large.err));
  CHECK(large.err.find("-l 16000: wolfSSL 5.") != std::string::npos);
  CHECK(large.err.find("bytes in one DTLS datagram; give -l") != std::string::npos);
}

TEST_CASE("wolfSSL first: its certificates verify under OpenSSL, and each kind runs on it") {
  if (!holds_wolfssl()) return;
  // The embedded server's CA and certificate are wolfSSL's making: OpenSSL's
  // client (the second variant) verifies them as wolfSSL's does; both resume.
  const ProcessResult r = run_tlscmp({"client", "--tls-lib", "wolfssl,openssl", "--mode", "tls", "--crr",
                                      "-n", "20", "--repeat", "1", "-J"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  const std::vector<json> full = wolfssl_runs_of(j["crr_runs"], "tls");
  REQUIRE(full.size() == 1);
  CHECK(full.front()["tls_library"] == "wolfssl");
  CHECK(full.front()["certificate_key_type"] == "ECDSA P-256");
  CHECK(wolfssl_runs_of(j["crr_runs"], "tls-resumed").front()["resumed"].get<int>() >= 19);
  CHECK(wolfssl_runs_of(j["crr_runs"], "tls-resumed openssl").front()["resumed"].get<int>() >= 19);
  // Bulk with its calibration (wolfSSL's memory pair), rr, and flows with memory per connection.
  const ProcessResult bulk =
      run_tlscmp({"client", "--tls-lib", "wolfssl", "--mode", "both", "-n", "8M", "--repeat", "1", "-J"});
  INFO("stderr: " << bulk.err);
  REQUIRE(bulk.exit_code == 0);
  const json b = json::parse(bulk.out);
  const std::vector<json> tls_runs = wolfssl_runs_of(b["runs"], "tls");
  REQUIRE(tls_runs.size() == 1);
  CHECK(tls_runs.front()["bytes"] == 8 << 20);
  CHECK(tls_runs.front()["client"]["calibration"]["suite"] == tls_runs.front()["cipher"]);
  CHECK(tls_runs.front()["server"]["calibration"]["writer_s_per_gib"].get<double>() > 0);
  // Its system calls are counted as OpenSSL's are (read and write, as its socket BIO makes them).
  CHECK(tls_runs.front()["server"]["read_calls"].get<double>() > 0);
  CHECK(tls_runs.front()["client"]["write_calls"].get<double>() > 0);
  const ProcessResult flows = run_tlscmp({"client", "--tls-lib", "openssl,wolfssl", "--flows", "20", "--rr",
                                          "1/1", "-n", "400", "--repeat", "1", "-J"});
  INFO("stderr: " << flows.err);
  REQUIRE(flows.exit_code == 0);
  const json f = json::parse(flows.out);
  const std::vector<json> wolf = wolfssl_runs_of(f["flows_runs"], "tls wolfssl");
  REQUIRE(wolf.size() == 1);
  CHECK(wolf.front()["transactions"] == 400);
}

TEST_CASE(
    "wolfSSL: a server of another library's certificates, mutual TLS, and a client that trusts nothing of "
    "it") {
  if (!holds_wolfssl()) return;
  TempDir certs;
  REQUIRE(run_tlscmp({"certs", "--dir", certs.path().string(), "--key-type", "rsa-2048"}).exit_code == 0);
  ServerProcess server({"--cert", certs.file("server.pem"), "--key", certs.file("server.key"), "--ca",
                        certs.file("ca.pem"), "--require-client-cert", "--tls-lib", "wolfssl"});
  const ProcessResult ok =
      run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"), "--cert",
                  certs.file("client.pem"), "--key", certs.file("client.key"), "--tls-lib", "wolfssl",
                  "--mode", "tls", "-n", "1M", "--repeat", "1", "-J"});
  INFO("stderr: " << ok.err);
  REQUIRE(ok.exit_code == 0);
  const json j = json::parse(ok.out);
  CHECK(j["runs"][0]["certificate_key_type"] == "RSA 2048");
  CHECK(j["runs"][0]["client_certificate_key_type"] == "RSA 2048");
  // No client certificate: refused, with the hint to give one.
  const ProcessResult none =
      run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"), "--tls-lib",
                  "wolfssl", "--mode", "tls", "-n", "1M", "--repeat", "1"});
  CHECK(none.exit_code != 0);
  // A CA that did not sign the server's certificate: the chain does not lead to it.
  TempDir other;
  REQUIRE(run_tlscmp({"certs", "--dir", other.path().string()}).exit_code == 0);
  const ProcessResult untrusted =
      run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--ca", other.file("ca.pem"), "--cert",
                  certs.file("client.pem"), "--key", certs.file("client.key"), "--tls-lib", "wolfssl",
                  "--mode", "tls", "-n", "1M", "--repeat", "1"});
  CHECK(untrusted.exit_code != 0);
  CHECK(untrusted.err.find("does not lead to the CA in") != std::string::npos);
}
