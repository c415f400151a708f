// Key exchange groups: what --version lists, --groups with a group the
// library lacks, and --compare-groups (post-quantum groups where the library
// has them, as OpenSSL 3.5 in Debian 13 does).

#include <set>
#include <sstream>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

// The groups `tlscmp --version` says this build's library has.
std::vector<std::string> available_groups() {
  const ProcessResult r = run_tlscmp({"--version"});
  REQUIRE(r.exit_code == 0);
  const std::string key = "key exchange groups: ";
  const auto at = r.out.find(key);
  REQUIRE(at != std::string::npos);
  std::istringstream words(r.out.substr(at + key.size(), r.out.find('\n', at) - at - key.size()));
  std::vector<std::string> groups;
  for (std::string w; words >> w;)
    groups.push_back(w);
  return groups;
}

bool has(const std::vector<std::string>& groups, const std::string& group) {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

const json& row(const json& j, const std::string& group) {
  for (const json& r : j["groups"]) {
    if (r["group"] == group) return r;
  }
  FAIL("no row for " << group);
  static const json none;
  return none;
}

double median(const json& kind, const char* field) {
  return kind[field]["median"].get<double>();
}

}  // namespace

TEST_CASE("a group the library lacks is named in one line, with the ones it has") {
  const ProcessResult r =
      run_tlscmp({"client", "--mode", "tls", "-n", "1M", "--repeat", "1", "--groups", "X25519:NoSuchGroup"});
  CHECK(r.exit_code == 1);
  CHECK(is_one_line(r.err));
  CHECK(r.err.find("no key exchange group named NoSuchGroup; it has X25519, P-256") != std::string::npos);
}

TEST_CASE("--groups picks the group and the result names it, post-quantum ones where the library has them") {
  const std::vector<std::string> groups = available_groups();
  REQUIRE(has(groups, "X25519"));
  for (const std::string group : {"P-384", "X25519MLKEM768", "SecP256r1MLKEM768", "MLKEM768"}) {
    if (!has(groups, group)) {
      MESSAGE(group << ": not in this library");
      continue;
    }
    CAPTURE(group);
    const json j = client_json({"--mode", "tls", "-n", "1M", "--repeat", "1", "--groups", group, "--verify"});
    CHECK(j["runs"][0]["group"] == group);
    CHECK(j["test"]["groups"] == group);
  }
}

TEST_CASE("--compare-groups: a row per group the library has, hello sizes, ratios to X25519") {
  const std::vector<std::string> groups = available_groups();
  const json j = client_json({"--compare-groups", "--handshakes", "2", "--repeat", "1"});
  CHECK(j["runs"].empty());
  CHECK(j["test"]["compare_groups"] == true);
  std::set<std::string> rows;
  for (const json& r : j["groups"]) {
    CAPTURE(r.dump());
    rows.insert(r["group"].get<std::string>());
    CHECK(r["error"].is_null());
    CHECK(r["full"]["count"].get<int>() >= 1);
    CHECK(r["full"]["count"].get<int>() <= 2);
    CHECK(r["resumed"]["resumed"] == r["resumed"]["count"]);
    CHECK(median(r["full"], "client_hello_bytes") > 100);
    CHECK(median(r["full"], "tls_us") > 0);
    CHECK(r["full"]["tls_us"]["p99"].get<double>() >= median(r["full"], "tls_us"));
    CHECK(r["vs_x25519"]["full_per_second"].get<double>() > 0);
  }
  CHECK(rows == std::set<std::string>(groups.begin(), groups.end()));
  const json& x25519 = row(j, "X25519");
  CHECK(x25519["vs_x25519"]["client_hello_bytes"] == 1.0);
  CHECK(x25519["group"] == "X25519");
  // Key shares differ in size by their public keys: P-256's 65 bytes against X25519's 32.
  CHECK(median(row(j, "P-256")["full"], "client_hello_bytes") ==
        median(x25519["full"], "client_hello_bytes") + 33);
  if (has(groups, "X25519MLKEM768")) {
    // An ML-KEM-768 public key (1184 bytes) rides along X25519's in the
    // ClientHello, and its ciphertext (1088 bytes) in the ServerHello. With
    // no elliptic-curve group offered, OpenSSL 3.5 leaves out the 8-byte
    // ec_point_formats extension, so the ClientHello grows by 1176 there.
    const json& hybrid = row(j, "X25519MLKEM768");
    const double grown =
        median(hybrid["full"], "client_hello_bytes") - median(x25519["full"], "client_hello_bytes");
    CHECK(grown >= 1184 - 8);
    CHECK(grown <= 1184);
    CHECK(median(hybrid["full"], "server_hello_bytes") ==
          median(x25519["full"], "server_hello_bytes") + 1088);
    CHECK(hybrid["tls_version"] == "TLSv1.3");
  } else {
    bool noted = false;
    for (const json& note : j["notes"])
      noted = noted || (note.get<std::string>().find(" has no ") != std::string::npos &&
                        note.get<std::string>().find("X25519MLKEM768") != std::string::npos);
    CHECK(noted);
  }
}

TEST_CASE("--compare-groups against a server that lacks some groups: those rows say why, the rest run") {
  ServerProcess server({"--groups", "X25519:P-256"});
  const json j = client_json({"127.0.0.1", "-p", server.port_text(), "--insecure", "--compare-groups",
                              "--handshakes", "2", "--repeat", "2"});
  CHECK(row(j, "X25519")["error"].is_null());
  CHECK(row(j, "X25519")["full"]["count"] == 4);  // 2 per round
  CHECK(row(j, "P-256")["error"].is_null());
  const json& refused = row(j, "P-384");
  CHECK_FALSE(refused.contains("full"));
  CHECK(refused["error"].get<std::string>().find("TLS handshake 1 with 127.0.0.1") != std::string::npos);
  // And the server is still there for the next client.
  CHECK(client_json({"127.0.0.1", "-p", server.port_text(), "--insecure", "--mode", "tls", "-n", "1M",
                     "--repeat", "1"})["runs"][0]["bytes"] == 1 << 20);
}
