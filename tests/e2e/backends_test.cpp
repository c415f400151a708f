// tlscmp built against one TLS library talking to tlscmp built against the
// other: an OpenSSL client against a BoringSSL server, and the reverse.

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
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

namespace {

// The binary's backends, or none (a skip said) where it lacks OpenSSL or BoringSSL.
bool holds_both_libraries() {
  const std::vector<std::string> names = tls_backends_of(tlscmp_binary());
  if (std::ranges::find(names, "boringssl") != names.end() &&
      std::ranges::find(names, "openssl") != names.end())
    return true;
  skip_unsupported(
      "this binary holds one TLS backend (a build with -DTLSCMP_BORINGSSL_BINARY=ON holds both)");
  return false;
}

// The runs of one variant.
std::vector<json> runs_of(const json& runs, const std::string& variant) {
  std::vector<json> out;
  for (const json& run : runs) {
    if (run["variant"] == variant) out.push_back(run);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "one tlscmp holds both libraries: --server-tls-lib sets the server's apart from the client's, a client "
    "of "
    "one against a server of the other") {
  if (!holds_both_libraries()) return;
  CHECK(tls_backends_of(tlscmp_binary()).front() == "openssl");  // the default first
  TempDir certs;
  REQUIRE(run_tlscmp({"certs", "--dir", certs.path().string()}).exit_code == 0);
  for (const std::string server_lib : {"boringssl", "openssl"}) {
    const std::string client_lib = server_lib == "openssl" ? "boringssl" : "openssl";
    CAPTURE(server_lib);
    // The server's own default is the other library: the request's name wins.
    ServerProcess server(
        {"--cert", certs.file("server.pem"), "--key", certs.file("server.key"), "--tls-lib", client_lib});
    const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--ca",
                                        certs.file("ca.pem"), "--tls-lib", client_lib, "--server-tls-lib",
                                        server_lib, "--crr", "-n", "20", "--repeat", "1", "-J"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    const std::string client_library = j["environment"]["client"]["tls_library"];
    const std::string server_library = j["environment"]["server"]["tls_library"];
    CHECK(client_library.rfind(client_lib == "openssl" ? "OpenSSL" : "BoringSSL", 0) == 0);
    CHECK(server_library.rfind(server_lib == "openssl" ? "OpenSSL" : "BoringSSL", 0) == 0);
    for (const json& run : runs_of(j["crr_runs"], "tls-resumed")) {
      CHECK(run["tls_library"] == client_lib);
      CHECK(run["server_tls_library"] == server_lib);
      CHECK(run["resumed"].get<int>() > 0);
    }
    CHECK(server.process().wait_for_log("(TLS by " + server_lib + ")"));
  }
  // The embedded server runs the same library as its client; the name may
  // be spelled as the library spells itself.
  const ProcessResult embedded =
      run_tlscmp({"client", "--tls-lib", "BoringSSL", "--mode", "tls", "-n", "1M", "--repeat", "1", "-J"});
  REQUIRE(embedded.exit_code == 0);
  const json j = json::parse(embedded.out);
  CHECK(std::string(j["environment"]["server"]["tls_library"]).rfind("BoringSSL", 0) == 0);
}

TEST_CASE("--tls-lib all: each kind runs each library's TLS variants beside tcp, in one run") {
  if (!holds_both_libraries()) return;
  const std::vector<std::string> libraries = tls_backends_of(tlscmp_binary());  // the default first
  TempDir certs;
  REQUIRE(run_tlscmp({"certs", "--dir", certs.path().string()}).exit_code == 0);
  ServerProcess server({"--cert", certs.file("server.pem"), "--key", certs.file("server.key")});
  // Its first line names every library it serves to a client that names one.
  std::string held;
  for (const std::string& library : libraries)
    held += (held.empty() ? "" : ", ") + library;
  CHECK(server.process().wait_for_log("TLS libraries for clients that name one: " + held));
  const std::vector<std::string> base{
      "client",   "127.0.0.1", "-p", server.port_text(), "--ca", certs.file("ca.pem"), "--tls-lib", "all",
      "--repeat", "2",         "-J"};
  struct Kind {
    std::vector<std::string> args;
    const char* runs;
    std::vector<std::string> tls_variants;
  };
  const std::vector<Kind> kinds{
      {{"-n", "2M", "--verify"}, "runs", {"tls"}},
      {{"--rr", "512/2K", "-n", "300"}, "rr_runs", {"tls"}},
      {{"--crr", "-n", "30"}, "crr_runs", {"tls", "tls-resumed"}},
      {{"--flows", "20", "--rr", "1/1", "-n", "400"}, "flows_runs", {"tls", "tls-release"}},
  };
  for (const Kind& kind : kinds) {
    std::vector<std::string> args = base;
    args.insert(args.end(), kind.args.begin(), kind.args.end());
    CAPTURE(kind.runs);
    const ProcessResult r = run_tlscmp(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["test"]["tls_libraries"] == json(libraries));
    CHECK(runs_of(j[kind.runs], "tcp").size() == 2);
    for (std::size_t i = 0; i < libraries.size(); ++i) {
      for (const std::string& base_variant : kind.tls_variants) {
        // The first library's variants keep their labels; the others' carry the library's name.
        const std::string variant = i == 0 ? base_variant : base_variant + " " + libraries[i];
        CAPTURE(variant);
        const std::vector<json> runs = runs_of(j[kind.runs], variant);
        CHECK(runs.size() == 2);
        for (const json& run : runs) {
          CHECK(run["tls_library"] == libraries[i]);
          CHECK(run["server_tls_library"] == libraries[i]);
          CHECK(run["tls_version"] == "TLSv1.3");
        }
      }
      // One server serves every library, each named in its log.
      CHECK(server.process().wait_for_log("(TLS by " + libraries[i] + ")"));
    }
  }
}

TEST_CASE("--tls-lib: every kind's summary holds each other library to the first") {
  if (!holds_both_libraries()) return;
  const ProcessResult r =
      run_tlscmp({"client", "--tls-lib", "boringssl,openssl", "--mode", "both", "-n", "2M", "--repeat", "2"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("tls openssl/tls transfer time, paired by round") != std::string::npos);
  CHECK(r.out.find("--tls-lib: boringssl (the variants without a suffix): BoringSSL") != std::string::npos);
  CHECK(r.out.find("; openssl: OpenSSL") != std::string::npos);
  // Each other library's line in words: its figures over the first's.
  CHECK(r.out.find("\nopenssl: ") != std::string::npos);
  CHECK(r.out.find("x boringssl's bulk rate (MB/s); ") != std::string::npos);
  CHECK(r.out.find("x its server CPU per GiB") != std::string::npos);
  const ProcessResult json_run = run_tlscmp(
      {"client", "--tls-lib", "boringssl,openssl", "--rr", "1K/1K", "-n", "200", "--repeat", "2", "-J"});
  REQUIRE(json_run.exit_code == 0);
  const json j = json::parse(json_run.out);
  CHECK(j["rr_summary"]["tls openssl"]["over_twin"]["transactions_per_s"]["median"].get<double>() > 0);
  CHECK(j["rr_summary"]["tls"]["over_twin"].is_null());
  // crr and flows: each variant of the other library over the first's of the same label.
  const ProcessResult crr =
      run_tlscmp({"client", "--tls-lib", "boringssl,openssl", "--crr", "-n", "30", "--repeat", "2", "-J"});
  REQUIRE(crr.exit_code == 0);
  const json c = json::parse(crr.out);
  for (const char* variant : {"tls openssl", "tls-resumed openssl"}) {
    CHECK(c["crr_summary"][variant]["over_twin"]["connections_per_s"]["count"] == 2);
    CHECK(c["crr_summary"][variant]["over_twin"]["variant"] ==
          std::string(variant).substr(0, std::string(variant).find(' ')));
  }
  CHECK(c["crr_summary"]["tls-resumed"]["over_twin"].is_null());
  // CSV: each row names its library, and the one it asked the server for.
  const ProcessResult csv =
      run_tlscmp({"client", "--tls-lib", "boringssl,openssl", "--crr", "-n", "10", "--repeat", "1", "--csv"});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find(",tls_library,server_tls_library,") != std::string::npos);
  CHECK(csv.out.find(",openssl,openssl,") != std::string::npos);
  CHECK(csv.out.find(",boringssl,boringssl,") != std::string::npos);
  const ProcessResult crr_text =
      run_tlscmp({"client", "--tls-lib", "boringssl,openssl", "--crr", "-n", "10", "--repeat", "1"});
  REQUIRE(crr_text.exit_code == 0);
  CHECK(crr_text.out.find("\nopenssl: ") != std::string::npos);
  CHECK(crr_text.out.find("x boringssl's connections/s (tls-resumed); ") != std::string::npos);
  const ProcessResult flows = run_tlscmp({"client", "--tls-lib", "boringssl,openssl", "--flows", "10", "--rr",
                                          "1/1", "-n", "200", "--repeat", "2", "-J"});
  REQUIRE(flows.exit_code == 0);
  const json f = json::parse(flows.out);
  for (const char* variant : {"tls openssl", "tls-release openssl"})
    CHECK(f["flows_summary"][variant]["over_twin"]["transactions_per_s"]["count"] == 2);
}

TEST_CASE("--tls-lib: --handshakes and --compare-groups run each library, each other over the first") {
  if (!holds_both_libraries()) return;
  const ProcessResult r =
      run_tlscmp({"client", "--tls-lib", "openssl,boringssl", "--handshakes", "10", "-J"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["handshakes"]["tls_library"] == "openssl");
  REQUIRE(j["handshakes_libraries"].size() == 2);
  const json& other = j["handshakes_libraries"][1];
  CHECK(other["tls_library"] == "boringssl");
  CHECK(other["full"]["count"] == 10);  // in parts, library after library, all of N
  CHECK(other["resumed"]["resumed"] == 10);
  CHECK(other["over_first_library"]["full_per_second"].get<double>() > 0);
  CHECK(j["handshakes_libraries"][0]["over_first_library"].is_null());
  TempDir dir;
  const ProcessResult text = run_tlscmp(
      {"client", "--tls-lib", "openssl,boringssl", "--handshakes", "4", "--html", dir.file("page.html")});
  REQUIRE(text.exit_code == 0);
  {
    // The page's handshake chart has each library's full and resumed handshakes.
    std::ifstream in(dir.file("page.html"));
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(page.find(">full boringssl<") != std::string::npos);
    CHECK(page.find(">resumed boringssl<") != std::string::npos);
  }
  CHECK(text.out.find("boringssl: 4 full and 4 resumed handshakes") != std::string::npos);
  CHECK(text.out.find("boringssl: ") != std::string::npos);
  CHECK(text.out.find("x openssl's full handshakes a second") != std::string::npos);
  // --compare-groups: each library's groups, each row over its own library's X25519.
  const ProcessResult groups = run_tlscmp({"client", "--tls-lib", "openssl,boringssl", "--compare-groups",
                                           "--handshakes", "2", "--repeat", "1", "-J"});
  INFO("stderr: " << groups.err);
  REQUIRE(groups.exit_code == 0);
  const json g = json::parse(groups.out);
  int boringssl_rows = 0;
  for (const json& row : g["groups"]) {
    if (row["tls_library"] != "boringssl") continue;
    ++boringssl_rows;
    if (row["group"] == "X25519") CHECK(row["vs_x25519"]["full_per_second"].get<double>() == 1.0);
  }
  CHECK(boringssl_rows >= 3);  // X25519 and P-256/384/521 at least
}

TEST_CASE("--tls-lib on the report page: a colour per library on every chart, a marker per variant kind") {
  if (!holds_both_libraries()) return;
  TempDir dir;
  const ProcessResult r = run_tlscmp({"client", "--tls-lib", "openssl,boringssl", "--crr", "-n", "10",
                                      "--repeat", "2", "--html", dir.file("page.html")});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(dir.file("page.html"));
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Each legend entry: its marker's colour, and the series' name.
  std::map<std::string, std::set<std::string>> colours;
  const std::regex entry(R"re(<li><svg[^>]*><[a-z]+ [^>]*fill="(#[0-9A-Fa-f]{6})"/></svg> ([^<]+)</li>)re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), entry); it != std::sregex_iterator(); ++it)
    colours[(*it)[2]].insert((*it)[1]);
  REQUIRE(colours.count("tls boringssl") == 1);
  REQUIRE(colours.count("tls-resumed boringssl") == 1);
  REQUIRE(colours.count("tls") == 1);
  CHECK(colours["tls boringssl"].size() == 1);  // the same on every chart
  CHECK(colours["tls boringssl"] == colours["tls-resumed boringssl"]);
  CHECK(colours["tls"] == colours["tls-resumed"]);
  CHECK(colours["tls"] != colours["tls boringssl"]);
  CHECK(colours["tcp"] != colours["tls"]);
}

TEST_CASE(
    "--tls-lib all with datagrams: a dtls variant per library with DTLS, each over the first, and across") {
  if (!holds_both_libraries()) return;
  const std::vector<std::string> libraries = tls_backends_of(tlscmp_binary());  // the default first
  const auto has_dtls = [](const std::string& library) { return library != "boringssl"; };
  REQUIRE(has_dtls(libraries.front()));
  const ProcessResult r = run_tlscmp({"client", "--tls-lib", "all", "--mode", "udp,dtls", "-n", "300", "-l",
                                      "1000", "-b", "20M", "--repeat", "2", "-J"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(runs_of(j["datagram_runs"], "udp").size() == 2);
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    const std::string variant = i == 0 ? "dtls" : "dtls " + libraries[i];
    CAPTURE(variant);
    const std::vector<json> runs = runs_of(j["datagram_runs"], variant);
    if (!has_dtls(libraries[i])) {
      CHECK(runs.empty());
      CHECK(j["notes"].dump().find(variant + " left out: BoringSSL has no DTLS server") != std::string::npos);
      continue;
    }
    REQUIRE(runs.size() == 2);
    for (const json& run : runs) {
      CHECK(run["tls_library"] == libraries[i]);
      CHECK(run["server_tls_library"] == libraries[i]);
      CHECK(run["tls_version"] == "DTLSv1.2");
      CHECK(run["cookie_exchanged"] == true);
      CHECK(run["received"].get<int>() > 0);
    }
    const json& over = j["datagram_summary"][variant]["over_twin"];
    if (i == 0) {
      CHECK(over.is_null());
    } else {
      CHECK(over["variant"] == "dtls");
      CHECK(over["received_per_s"]["count"] == 2);
    }
  }
  // Every client library's DTLS against every server library's, and a
  // server library without DTLS refused in one line.
  for (const std::string& client_lib : libraries) {
    for (const std::string& server_lib : libraries) {
      CAPTURE(client_lib);
      CAPTURE(server_lib);
      if (!has_dtls(client_lib)) continue;
      const ProcessResult one =
          run_tlscmp({"client", "--tls-lib", client_lib, "--server-tls-lib", server_lib, "--mode", "dtls",
                      "-n", "100", "-l", "1000", "-b", "10M", "--repeat", "1", "-J"});
      INFO("stderr: " << one.err);
      if (!has_dtls(server_lib)) {
        CHECK(one.exit_code != 0);
        CHECK(is_one_line(one.err));
        CHECK(one.err.find("BoringSSL has no DTLS server") != std::string::npos);
        continue;
      }
      REQUIRE(one.exit_code == 0);
      const std::vector<json> runs = runs_of(json::parse(one.out)["datagram_runs"], "dtls");
      REQUIRE(runs.size() == 1);
      CHECK(runs.front()["tls_library"] == client_lib);
      CHECK(runs.front()["server_tls_library"] == server_lib);
      CHECK(runs.front()["tls_version"] == "DTLSv1.2");
      CHECK(runs.front()["received"].get<int>() > 0);
    }
  }
}

TEST_CASE("the interop matrix: every client library against every server library, TLS 1.2 and 1.3, resumed") {
  if (!holds_both_libraries()) return;
  const std::vector<std::string> libraries = tls_backends_of(tlscmp_binary());
  for (const std::string& client_lib : libraries) {
    for (const std::string& server_lib : libraries) {
      for (const std::string version : {"1.2", "1.3"}) {
        CAPTURE(client_lib);
        CAPTURE(server_lib);
        CAPTURE(version);
        const ProcessResult r =
            run_tlscmp({"client", "--tls-lib", client_lib, "--server-tls-lib", server_lib, "--tls-version",
                        version, "--mode", "tls", "--crr", "-n", "10", "--repeat", "1", "-J"});
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        const json j = json::parse(r.out);
        const std::vector<json> resumed = runs_of(j["crr_runs"], "tls-resumed");
        REQUIRE(resumed.size() == 1);
        CHECK(resumed.front()["tls_version"] == "TLSv" + version);
        CHECK(resumed.front()["tls_library"] == client_lib);
        CHECK(resumed.front()["server_tls_library"] == server_lib);
        const int count = resumed.front()["resumed"].get<int>();
        if (client_lib == "openssl" && server_lib == "wolfssl" && version == "1.2" &&
            j["environment"]["server"]["tls_library"].get<std::string>().find("wolfSSL 5.7") !=
                std::string::npos) {
          // Debian 13's OpenSSL 3.5 client against its wolfSSL 5.7.2 server resumes
          // every other TLS 1.2 session (docs/tls.md); every other client resumes all.
          CHECK(count >= 4);
          CHECK(resumed.front()["resumption_refused"].get<int>() + count == 10);
        } else {
          CHECK(count >= 9);  // all but the first
        }
        CHECK(resumed.front()["resumed_by"] == "ticket");
      }
    }
  }
}

TEST_CASE(
    "GnuTLS: what it cannot do is refused in one line naming it, and its certificates verify across "
    "libraries") {
  const std::vector<std::string> names = tls_backends_of(tlscmp_binary());
  if (std::ranges::find(names, "gnutls") == names.end()) {
    skip_unsupported("this binary holds no GnuTLS backend (libgnutls28-dev was not there at build time)");
    return;
  }
  struct Mistake {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Mistake> mistakes{
      {{"--cipher", "ECDHE-ECDSA-AES128-SHA"}, "GnuTLS (tlscmp's gnutls backend) takes the TLS 1.3 suites"},
      {{"--ktls"}, "--ktls: GnuTLS turns kernel TLS on in its system configuration"},
      {{"--groups", "X25519MLKEM768"}, "GnuTLS 3."},
  };
  for (const Mistake& m : mistakes) {
    std::vector<std::string> args{"client", "--tls-lib", "gnutls",   "--mode", "tls",
                                  "-n",     "1M",        "--repeat", "1"};
    args.insert(args.end(), m.args.begin(), m.args.end());
    const ProcessResult r = run_tlscmp(args);
    if (std::string(m.says) == "GnuTLS 3." && r.exit_code == 0)
      continue;  // a GnuTLS with ML-KEM (Debian 13's)
    expect_failure(r, 1, m.says);
  }
  // With GnuTLS first, the embedded server's throwaway CA and certificate are GnuTLS's
  // making: OpenSSL's client (the second variant) verifies them as GnuTLS's does.
  const ProcessResult r = run_tlscmp(
      {"client", "--tls-lib", "gnutls,openssl", "--mode", "tls", "--crr", "-n", "20", "--repeat", "1", "-J"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(runs_of(j["crr_runs"], "tls openssl").size() == 1);
  CHECK(runs_of(j["crr_runs"], "tls-resumed openssl").front()["resumed"].get<int>() >= 19);
  CHECK(runs_of(j["crr_runs"], "tls").front()["certificate_key_type"] == "ECDSA P-256");
  // Each side's calibration is GnuTLS's own (its memory pair): a bulk run has its split.
  const ProcessResult bulk =
      run_tlscmp({"client", "--tls-lib", "gnutls", "--mode", "both", "-n", "8M", "--repeat", "1", "-J"});
  REQUIRE(bulk.exit_code == 0);
  const json b = json::parse(bulk.out);
  const std::vector<json> tls_runs = runs_of(b["runs"], "tls");
  REQUIRE(tls_runs.size() == 1);
  CHECK(tls_runs.front()["tls_library"] == "gnutls");
  CHECK(tls_runs.front()["client"]["calibration"]["suite"] == tls_runs.front()["cipher"]);
  CHECK(tls_runs.front()["server"]["calibration"]["writer_s_per_gib"].get<double>() > 0);
  // Its system calls are counted as OpenSSL's are (writev and read, as /proc/thread-self/io sees them).
  CHECK(tls_runs.front()["server"]["read_calls"].get<double>() > 0);
  CHECK(tls_runs.front()["client"]["write_calls"].get<double>() > 0);
}

TEST_CASE("--tls-lib and --server-tls-lib mistakes are one line each") {
  const std::vector<std::string> names = tls_backends_of(tlscmp_binary());
  REQUIRE(!names.empty());
  const ProcessResult wrong = run_tlscmp({"client", "--tls-lib", "nosuchssl", "-n", "1M"});
  expect_failure(wrong, 2, "--tls-lib nosuchssl");
  CHECK(wrong.err.find("give some of " + names.front()) != std::string::npos);
  const ProcessResult server_wrong = run_tlscmp({"client", "--tls-lib", names.front(), "--server-tls-lib",
                                                 "nosuchssl", "--mode", "tls", "-n", "1M", "--repeat", "1"});
  expect_failure(server_wrong, 1, "this server holds no TLS library 'nosuchssl'");
  CHECK(server_wrong.err.find("it has " + names.front()) != std::string::npos);
  const ProcessResult malformed = run_tlscmp({"client", "--server-tls-lib", "open ssl", "-n", "1M"});
  expect_failure(malformed, 2, "--server-tls-lib open ssl");
  if (names.size() < 2) return;  // a binary linked with its one library loads no module
  TempDir empty;
  const ProcessResult none = run_process(
      {"/usr/bin/env", "TLSCMP_BACKEND_DIR=" + empty.path().string(), tlscmp_binary(), "--version"});
  expect_failure(none, 1, "no TLS library");
  CHECK(none.err.find("TLSCMP_BACKEND_DIR") != std::string::npos);
}
