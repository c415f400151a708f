// HTTP/3 (--http 3 over --mode quic: OpenSSL 3.5 and nghttp3 1.x, Debian
// 13): exact request counts beside HTTP/2 over tcp and tls in one run, on
// several connections with streams in flight and with POST bodies; an open
// loop; the server apart naming what it served; --http 3's mistakes
// refused in one line. Skipped where the build has no HTTP/3 (Debian 12).

#include <string>
#include <vector>

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

// Whether this build runs HTTP/3: QUIC, and nghttp3 (tlscmp --version).
bool http3_build() {
  return version_says("quic: yes") && version_says("http/3: yes");
}

constexpr const char* kNoHttp3 = "this build has no HTTP/3 (it needs OpenSSL 3.5 and nghttp3 1.x: Debian 13)";

const json& h3_run_of(const json& j, const std::string& variant) {
  for (const json& run : j["http_runs"]) {
    if (run["variant"] == variant) return run;
  }
  FAIL("no run of " << variant);
  static const json none;
  return none;
}

}  // namespace

TEST_CASE("--http 3: exact request counts over quic, beside HTTP/2 over tcp and tls") {
  if (!http3_build()) return skip_unsupported(kNoHttp3);
  SUBCASE("GETs on 2 connections, 5 streams in flight on each") {
    const json j = client_json(
        {"--http", "3", "--mode", "tcp,tls,quic", "--streams", "5", "-P", "2", "-n", "401", "--repeat", "2"});
    for (const char* variant : {"tcp", "tls", "quic"}) {
      CAPTURE(variant);
      const json& run = h3_run_of(j, variant);
      CHECK(run["requests"] == 401);
      CHECK(run["latency_us"]["p50"].get<double>() > 0);
      CHECK(run["first_byte_us"]["p50"].get<double>() <= run["latency_us"]["p50"].get<double>() + 1);
      CHECK(run["server"]["cpu_us_per_request"].get<double>() > 0);
      CHECK(run["client"]["cpu_us_per_request"].get<double>() > 0);
      // Each response's body, with its headers and (quic) its packets' and the TLS's overhead.
      CHECK(run["wire_bytes_per_request"].get<double>() > 4096);
      CHECK(run["connection_requests_per_s"].size() == 2);
    }
    CHECK(h3_run_of(j, "quic")["http_version"] == "HTTP/3");
    CHECK(h3_run_of(j, "tls")["http_version"] == "HTTP/2");
    CHECK(h3_run_of(j, "tls")["alpn"] == "h2");
    CHECK(h3_run_of(j, "quic")["tls_version"] == "QUICv1");  // the library names QUIC's TLS 1.3 so
    CHECK(j["http_summary"]["quic"]["over_tcp"]["requests_per_s"]["median"].get<double>() > 0);
    CHECK(j["http_summary"]["quic"]["runs"] == 2);
  }
  SUBCASE("POSTs of 100 KiB, each body read whole") {
    const json j = client_json({"--http", "3", "--mode", "quic", "--request", "100K", "--response", "1K",
                                "-n", "40", "--repeat", "1"});
    const json& run = h3_run_of(j, "quic");
    CHECK(run["requests"] == 40);
    CHECK(run["wire_bytes_per_request"].get<double>() > 100 * 1024 + 1024);
  }
}

TEST_CASE("--http 3 --rate: an open loop over quic, every scheduled request answered") {
  if (!http3_build()) return skip_unsupported(kNoHttp3);
  const json j =
      client_json({"--http", "3", "--mode", "quic", "--rate", "400", "-t", "1", "-P", "2", "--repeat", "1"});
  const json& run = h3_run_of(j, "quic");
  CHECK(run["requests"] == 400);
  CHECK(run["elapsed_us"].get<double>() >= 1e6);
  CHECK(run["requests_per_s"].get<double>() <= 400.0);
}

TEST_CASE("--http 3 against tlscmp's server apart: its log names what each variant carried") {
  if (!http3_build()) return skip_unsupported(kNoHttp3);
  ServerProcess server;
  const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure", "--http",
                                      "3", "--mode", "tls,quic", "-n", "300", "--repeat", "1"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("http: HTTP/3 over quic (HTTP/2 over tcp and tls), GET /4096") != std::string::npos);
  CHECK(r.out.find("quic/tls, paired by round") != std::string::npos);
  CHECK(server.process().wait_for_log("http HTTP/3 quic 0/4096 300 requests answered on 1 connection"));
  CHECK(server.process().wait_for_log("http HTTP/2 tls 0/4096 300 requests answered on 1 connection"));
}

TEST_CASE("--http 3 mistakes are refused in one line") {
  expect_failure(run_tlscmp({"client", "--http", "3", "-n", "10"}), 2,
                 "--http 3 runs over quic: add --mode quic");
  if (!http3_build()) return skip_unsupported(kNoHttp3);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--http", "2", "--mode", "tls,quic", "-n", "10"}, "HTTP over QUIC is HTTP/3; give --http 3"},
      {{"--http", "3", "--mode", "quic", "--flows", "10", "-n", "10"}, "--flows with --http 3"},
      {{"--http", "3", "--mode", "quic", "--requests-per-connection", "2", "-n", "10"},
       "--requests-per-connection with --http 3"},
      {{"--http", "3", "--mode", "tls,quic", "--url", "https://x/", "-n", "10"}, "--url with --http 3"},
  };
  for (const auto& [args, expected] : cases) {
    std::vector<std::string> full{"client"};
    full.insert(full.end(), args.begin(), args.end());
    CAPTURE(expected);
    expect_failure(run_tlscmp(full), 2, expected);
  }
}
