// HTTP tests (--http): exact request counts over HTTP/1.1 and HTTP/2, tcp
// and tls, every figure the kind reports present; h2load (nghttp2) against
// tlscmp's server; a malformed request and an oversized header answered in
// one line each while the server keeps serving; mistakes refused.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <tuple>

using namespace std::string_literals;

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

const json& run_of(const json& j, const std::string& variant) {
  for (const json& run : j["http_runs"]) {
    if (run["variant"] == variant) return run;
  }
  FAIL("no run of " << variant);
  static const json none;
  return none;
}

void check_counts(const json& j, std::uint64_t requests, std::uint64_t response_bytes) {
  for (const char* variant : {"tcp", "tls"}) {
    CAPTURE(variant);
    const json& run = run_of(j, variant);
    CHECK(run["requests"] == requests);
    CHECK(run["requests_per_s"].get<double>() > 0);
    CHECK(run["latency_us"]["p50"].get<double>() > 0);
    CHECK(run["latency_us"]["p999"].get<double>() >= run["latency_us"]["p99"].get<double>());
    CHECK(run["first_byte_us"]["p50"].get<double>() <= run["latency_us"]["p50"].get<double>() + 1);
    // Headers, framing and (tls) records come on top of the bodies.
    CHECK(run["wire_bytes_per_request"].get<double>() > static_cast<double>(response_bytes));
    CHECK(run["server"]["cpu_us_per_request"].get<double>() > 0);
    CHECK(run["client"]["cpu_us_per_request"].get<double>() > 0);
    CHECK(run["fairness"].get<double>() > 0);
  }
  CHECK(run_of(j, "tls")["tls_version"].is_string());
  CHECK(run_of(j, "tcp")["tls_version"].is_null());
  CHECK(j["http_summary"]["tls"]["over_tcp"]["requests_per_s"]["median"].get<double>() > 0);
  CHECK(j["rr_runs"].is_null());  // another kind's keys stay as they were
}

// h2load where Debian's nghttp2-client puts it.
bool have_h2load() {
  return ::access("/usr/bin/h2load", X_OK) == 0;
}

}  // namespace

TEST_CASE("--http 1.1 and 2: exact request counts over tcp and tls, every figure reported") {
  SUBCASE("HTTP/1.1 GETs, one connection kept alive") {
    const json j = client_json({"--http", "1.1", "-n", "300", "--repeat", "1"});
    check_counts(j, 300, 4096);
    CHECK(run_of(j, "tls")["http_version"] == "HTTP/1.1");
    CHECK(run_of(j, "tls")["alpn"] == "http/1.1");
  }
  SUBCASE("HTTP/2, 3 connections, 8 streams each, POSTs with bodies") {
    const json j = client_json({"--http", "2", "--streams", "8", "-P", "3", "--request", "1K", "--response",
                                "2K", "-n", "301", "--repeat", "2"});
    check_counts(j, 301, 2048);
    CHECK(run_of(j, "tls")["streams_per_connection"] == 8);
    CHECK(run_of(j, "tls")["alpn"] == "h2");
    CHECK(run_of(j, "tls")["connection_requests_per_s"].size() == 3);
    CHECK(j["http_summary"]["tls"]["runs"] == 2);
  }
}

TEST_CASE("--http --rate: an open loop, every scheduled request answered, its latency from its time") {
  for (const char* version : {"1.1", "2"}) {
    CAPTURE(version);
    // 400 requests a second over 2 connections for 1 s: each connection's
    // 200 on a grid 5 ms apart, the two interleaved, so 400 in all.
    const json j = client_json({"--http", version, "--rate", "400", "-t", "1", "-P", "2", "--repeat", "1"});
    for (const char* variant : {"tcp", "tls"}) {
      CAPTURE(variant);
      const json& run = run_of(j, variant);
      CHECK(run["requests"] == 400);
      CHECK(run["elapsed_us"].get<double>() >= 1e6);  // the schedule's length at least
      CHECK(run["requests_per_s"].get<double>() <= 400.0);
      CHECK(run["latency_us"]["p50"].get<double>() > 0);
      CHECK(run["connection_requests_per_s"].size() == 2);
    }
    CHECK(j["test"]["rate_tps"] == 400.0);
  }
}

TEST_CASE("--http against tlscmp's server apart, and its text and CSV") {
  ServerProcess server;
  const ProcessResult text = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure",
                                         "--http", "2", "-n", "200", "--repeat", "1"});
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("http: HTTP/2, GET /4096") != std::string::npos);
  CHECK(std::regex_search(text.out, std::regex(R"(tls/tcp, paired by round .*: requests/s \d)")));
  CHECK(server.process().wait_for_log("http HTTP/2 tls 0/4096 200 requests answered on 1 connection"));
  const ProcessResult csv = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--insecure",
                                        "--http", "1.1", "-n", "50", "--repeat", "1", "--csv"});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.starts_with("variant,round,warmup,partial,mode,http_version"));
  CHECK(csv.out.find("tls,1,0,0,tls,HTTP/1.1,0,4096,1,1,50,") != std::string::npos);
}

TEST_CASE("h2load loads tlscmp's server: HTTP/2 and HTTP/1.1, cleartext and over TLS by ALPN") {
  if (!have_h2load()) {
    skip("h2load (nghttp2-client) is not installed: scripts/install-deps installs it");
    return;
  }
  ServerProcess server;
  const std::string url = "://127.0.0.1:" + server.port_text() + "/4096";
  std::vector<std::vector<std::string>> loads;
  loads.push_back({"/usr/bin/h2load", "-n", "400", "-c", "2", "-m", "10", "http" + url});
  loads.push_back({"/usr/bin/h2load", "--h1", "-n", "400", "-c", "2", "http" + url});
  loads.push_back({"/usr/bin/h2load", "-n", "400", "-c", "2", "-m", "10", "https" + url});
  loads.push_back({"/usr/bin/h2load", "--h1", "-n", "400", "-c", "2", "https" + url});
  for (const std::vector<std::string>& args : loads) {
    CAPTURE(args.back());
    const ProcessResult r = run_process(args);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("400 succeeded, 0 failed") != std::string::npos);
    CHECK(r.out.find("status codes: 400 2xx") != std::string::npos);
    CHECK(r.out.find("(1638400) data") != std::string::npos);  // 400 bodies of 4096 bytes
    if (args.back().starts_with("https")) {  // the server agreed to what h2load asked by ALPN
      CHECK(r.out.find(args[1] == "--h1" ? "Application protocol: http/1.1" : "Application protocol: h2") !=
            std::string::npos);
    }
  }
  CHECK(server.process().wait_for_log("HTTP/2 client over tls: 200 requests answered"));
  CHECK(server.process().wait_for_log("HTTP/2 client over tcp: 200 requests answered"));
  CHECK(server.process().wait_for_log("HTTP/1.1 client over tls: 200 requests answered"));
}

TEST_CASE(
    "a malformed HTTP request and an oversized header are answered in one line, and the server serves on") {
  ServerProcess server;
  const auto brief = std::chrono::milliseconds(3000);
  {
    RawConnection c(server.port());
    c.send("GET /10 HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20 * 1024, 'a') + "\r\n\r\n");
    CHECK(c.read_all(brief).starts_with("HTTP/1.1 431"));
    CHECK(server.process().wait_for_log("request 1's headers passed 16 KiB: answered 431 and closed"));
  }
  {
    RawConnection c(server.port());
    c.send("GET /10 HTTP/1.1\r\nHost x\r\n\r\n");
    CHECK(c.read_all(brief).starts_with("HTTP/1.1 400"));
    CHECK(server.process().wait_for_log("request 1 is not HTTP/1.1"));
  }
  {
    RawConnection c(server.port());  // two pipelined requests, then the end
    c.send("GET /3 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string answer = c.read_all(brief);
    CHECK(answer.find("Content-Length: 3\r\n\r\n\0\0\0HTTP/1.1 200 OK"s) != std::string::npos);
  }
  const json j = client_json(
      {"127.0.0.1", "-p", server.port_text(), "--insecure", "--http", "1.1", "-n", "20", "--repeat", "1"});
  CHECK(run_of(j, "tls")["requests"] == 20);
}

TEST_CASE("--http mistakes are refused in one line") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--http", "4", "-n", "10"}, "--http 4: give 1.1"},
      {{"--http", "1.1", "--streams", "4", "-n", "10"}, "requests in flight on a connection are HTTP/2's"},
      {{"--rr", "1/1", "--response", "10", "-n", "10"}, "--response requires --http"},
      {{"--http", "2", "-l", "100", "-n", "10"}, "-l is for bulk runs; --http takes"},
      {{"--http", "2", "-n", "1", "-P", "2"}, "-n 1: fewer requests than connections"},
      {{"--http", "2", "--rate", "100", "-n", "100"}, "--rate needs -t"},
      {{"--http", "2", "--rate", "100", "--streams", "4", "-t", "1"}, "--streams with --rate"},
      {{"--http", "1.1", "--rate", "5000000", "-t", "1"}, "lower the rate or add connections"},
      {{"--http", "2", "--url", "ftp://x/", "-n", "10"}, "--url ftp://x/: not an http:// or https:// URL"},
      {{"127.0.0.1", "--http", "2", "--url", "http://x/", "-n", "10"}, "the URL names the server"},
      {{"--http", "2", "--url", "http://x/,http://y/", "-n", "10"}, "two http:// URLs"},
      {{"--flows", "10", "--http", "1.1", "--crr", "-n", "10"}, "a flow does one work"},
      {{"--flows", "10", "--http", "2", "--streams", "4", "-n", "10"}, "a flow makes one at a time"},
      {{"--flows", "10", "--http", "1.1", "--requests-per-connection", "2", "-n", "10"},
       "are for --http on -P connectors"},
  };
  for (const auto& [args, expected] : cases) {
    std::vector<std::string> full{"client"};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult r = run_tlscmp(full);
    CAPTURE(expected);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(expected) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

namespace {

// A port nothing listens on now, for a server of another make to take.
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool accepts(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

// Debian's nginx, started by the test with a config of its own: HTTP/1.1
// on one port, HTTP/2 cleartext on another, TLS (ALPN h2 and http/1.1) on
// a third, serving files of 4096 zero bytes.
class Nginx {
 public:
  explicit Nginx(const std::string& tlscmp_certs) {
    std::filesystem::create_directory(dir_.path() / "www");
    std::ofstream(dir_.file("www/4096")) << std::string(4096, '\0');
    for (std::uint16_t* port : {&h1_, &h2c_, &tls_})
      *port = free_port();
    std::ofstream(dir_.file("nginx.conf")) << fmt::format(
        "daemon off; master_process off; worker_processes 1; user root; pid {0}/nginx.pid;\n"
        "error_log {0}/error.log;\nevents {{ worker_connections 1024; }}\n"
        "http {{ access_log off; keepalive_requests 1000000; client_body_temp_path {0}/body;\n"
        "  proxy_temp_path {0}/proxy; fastcgi_temp_path {0}/fastcgi; uwsgi_temp_path {0}/uwsgi;\n"
        "  scgi_temp_path {0}/scgi;\n"
        "  server {{ listen 127.0.0.1:{1}; listen 127.0.0.1:{2} http2; listen 127.0.0.1:{3} ssl http2;\n"
        "    ssl_certificate {4}/server.pem; ssl_certificate_key {4}/server.key; root {0}/www; }} }}\n",
        dir_.path().string(), h1_, h2c_, tls_, tlscmp_certs);
    process_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{"/usr/sbin/nginx", "-e", dir_.file("error.log"), "-c",
                                 dir_.file("nginx.conf")},
        dir_.file("stderr.log"));
    for (int i = 0; i < 100 && !(accepts(h1_) && accepts(h2c_) && accepts(tls_)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    INFO(read_file(dir_.file("error.log")) << process_->log());
    REQUIRE(accepts(tls_));
  }
  std::string url(const char* scheme, std::uint16_t port) const {
    return fmt::format("{}://127.0.0.1:{}/4096", scheme, port);
  }
  std::uint16_t h1() const { return h1_; }
  std::uint16_t h2c() const { return h2c_; }
  std::uint16_t tls() const { return tls_; }

 private:
  TempDir dir_;
  std::uint16_t h1_ = 0, h2c_ = 0, tls_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// Debian's nginx where nginx-light puts it; skipped, with why, if not there.
bool have_nginx() {
  if (::access("/usr/sbin/nginx", X_OK) == 0) return true;
  skip("nginx (nginx-light) is not installed: scripts/install-deps installs it");
  return false;
}

// Certificates from `tlscmp certs` in `dir`, for nginx to serve.
void make_certs(const TempDir& dir) {
  REQUIRE(run_tlscmp({"certs", "--dir", dir.path().string()}).exit_code == 0);
}

}  // namespace

TEST_CASE("--url: tlscmp's client loads nginx over HTTP/1.1 and HTTP/2, tcp and tls, counts exact") {
  if (!have_nginx()) return;
  const TempDir certs;
  make_certs(certs);
  const Nginx nginx(certs.path().string());
  const std::string https = nginx.url("https", nginx.tls());
  for (const auto& [version, plain, alpn] : {std::tuple{"1.1", nginx.url("http", nginx.h1()), "http/1.1"},
                                             std::tuple{"2", nginx.url("http", nginx.h2c()), "h2"}}) {
    CAPTURE(version);
    const json j = client_json({"--http", version, "--streams", version == std::string("2") ? "4" : "1", "-P",
                                "2", "--url", plain + "," + https, "--ca", certs.file("ca.pem"), "-n", "400",
                                "--repeat", "1"});
    for (const char* variant : {"tcp", "tls"}) {
      CAPTURE(variant);
      const json& run = run_of(j, variant);
      CHECK(run["requests"] == 400);
      CHECK(run["server"].is_null());  // another make's server: its side is not measured
      CHECK(run["wire_bytes_per_request"].get<double>() > 4096);
    }
    CHECK(run_of(j, "tls")["alpn"] == alpn);
    CHECK(j["http_summary"]["tls"]["over_tcp"]["requests_per_s"]["median"].get<double>() > 0);
    CHECK(j["http_summary"]["tls"]["server_cpu_us_per_request"].is_null());
  }
  // What nginx answers with another status is named by request.
  const ProcessResult missing =
      run_tlscmp({"client", "--http", "1.1", "--url", fmt::format("http://127.0.0.1:{}/nothing", nginx.h1()),
                  "-n", "5", "--repeat", "1"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("the server answered request 1 (GET /nothing) with status 404") !=
        std::string::npos);
  // A certificate this client cannot trust: said, with what to give.
  const ProcessResult untrusted =
      run_tlscmp({"client", "--http", "1.1", "--url", https, "-n", "5", "--repeat", "1"});
  CHECK(untrusted.exit_code != 0);
  CHECK(untrusted.err.find("trust the server's CA with --ca FILE") != std::string::npos);
}

TEST_CASE(
    "--requests-per-connection against nginx: a connection per R requests, the share resumed as asked") {
  if (!have_nginx()) return;
  const TempDir certs;
  make_certs(certs);
  const Nginx nginx(certs.path().string());
  const std::string urls = nginx.url("http", nginx.h1()) + "," + nginx.url("https", nginx.tls());
  // R = 1, 80% offering the last session: every request on a connection of its own.
  const json one = client_json({"--http", "1.1", "--url", urls, "--ca", certs.file("ca.pem"), "-n", "200",
                                "--requests-per-connection", "1", "--resume-ratio", "0.8", "--repeat", "1"});
  for (const char* variant : {"tcp", "tls"}) {
    CAPTURE(variant);
    CHECK(run_of(one, variant)["requests"] == 200);
    CHECK(run_of(one, variant)["connections_opened"] == 200);
  }
  CHECK(run_of(one, "tcp")["resumed_connections"] == 0);
  const json& tls = run_of(one, "tls");
  // 80% of the 199 that had a session to offer (the first has none), spread evenly.
  CHECK(tls["resumed_connections"] == 159);
  CHECK(tls["handshake_resumed_us"]["count"] == tls["resumed_connections"]);
  CHECK(tls["handshake_full_us"]["count"].get<int>() + tls["resumed_connections"].get<int>() == 200);
  // R = 3 over HTTP/2 on two connectors: 10 requests each, so 4 connections each.
  const std::string h2_urls = nginx.url("http", nginx.h2c()) + "," + nginx.url("https", nginx.tls());
  const json three = client_json({"--http", "2", "--url", h2_urls, "--ca", certs.file("ca.pem"), "-n", "20",
                                  "-P", "2", "--requests-per-connection", "3", "--repeat", "1"});
  CHECK(run_of(three, "tls")["requests"] == 20);
  CHECK(run_of(three, "tls")["connections_opened"] == 8);
  CHECK(run_of(three, "tls")["resumed_connections"] == 0);  // no --resume-ratio: every handshake full
  CHECK(run_of(three, "tls")["alpn"] == "h2");
  // HTTP/2 at a port that speaks HTTP/1.1 alone: said so, with what to give instead.
  const ProcessResult h1_port = run_tlscmp(
      {"client", "--http", "2", "--url", nginx.url("http", nginx.h1()), "-n", "5", "--repeat", "1"});
  CHECK(h1_port.exit_code != 0);
  CHECK(h1_port.err.find("the server answered in HTTP/1.x") != std::string::npos);
}

TEST_CASE("--requests-per-connection against tlscmp's server: both sides count the connections") {
  SUBCASE("HTTP/1.1, -n: each connector's share in connections of R, half of those that could resume") {
    // Two connectors of 30 requests, 4 a connection: 8 connections each, of
    // which 7 had a session to offer and 3 offer it (50%, spread evenly).
    const json j = client_json({"--http", "1.1", "-n", "60", "-P", "2", "--requests-per-connection", "4",
                                "--resume-ratio", "0.5", "--repeat", "1"});
    for (const char* variant : {"tcp", "tls"}) {
      CAPTURE(variant);
      const json& run = run_of(j, variant);
      CHECK(run["requests"] == 60);
      CHECK(run["connections_opened"] == 16);
      // The server's side measured: its CPU over the connections it served.
      CHECK(run["server"]["cpu_us_per_request"].get<double>() > 0);
      CHECK(run["client"]["cpu_us_per_request"].get<double>() > 0);
    }
    CHECK(run_of(j, "tcp")["resumed_connections"] == 0);
    CHECK(run_of(j, "tls")["resumed_connections"] == 6);
    CHECK(run_of(j, "tls")["handshake_resumed_us"]["count"] == 6);
    CHECK(run_of(j, "tls")["handshake_full_us"]["count"] == 10);
  }
  SUBCASE("HTTP/2 in an open loop: each connection the next R requests of the schedule") {
    // 200 requests/s for 1 s over two connectors: 100 each, 5 a connection.
    const json j = client_json({"--http", "2", "--rate", "200", "-t", "1", "-P", "2",
                                "--requests-per-connection", "5", "--resume-ratio", "1", "--repeat", "1"});
    for (const char* variant : {"tcp", "tls"}) {
      CAPTURE(variant);
      const json& run = run_of(j, variant);
      CHECK(run["requests"] == 200);
      CHECK(run["connections_opened"] == 40);
      CHECK(run["server"]["cpu_us_per_request"].get<double>() > 0);
    }
    CHECK(run_of(j, "tls")["resumed_connections"] == 38);  // all but each connector's first
    CHECK(run_of(j, "tls")["alpn"] == "h2");
    // The text's header says both: the connections' turns and the schedule.
    const ProcessResult text =
        run_tlscmp({"client", "--http", "1.1", "--rate", "100", "-t", "0.5", "--requests-per-connection", "5",
                    "--mode", "tcp", "--repeat", "1"});
    CHECK(text.exit_code == 0);
    CHECK(text.out.find("each a new connection every 5 requests, requests pipelined as the schedule makes "
                        "them") != std::string::npos);
  }
}

TEST_CASE(
    "--flows with --http: many connections on event loops, every request answered, memory per connection") {
  ServerProcess server;
  SUBCASE("HTTP/1.1 GETs over 50 flows on 2 loops, tcp and tls") {
    const json j = client_json({"127.0.0.1", "-p", server.port_text(), "--insecure", "--flows", "50",
                                "--threads", "2", "--http", "1.1", "-n", "500", "--repeat", "1"});
    for (const char* variant : {"tcp", "tls"}) {
      CAPTURE(variant);
      const json& run = flows_run_of(j, variant);
      CHECK(run["work"] == "http");
      CHECK(run["flows"] == 50);
      CHECK(run["transactions"] == 500);
      CHECK(run["failed_flows"] == 0);
      CHECK(run["per_flow"]["min"] == 10);  // -n 500 over 50 flows: ten requests each
      CHECK(run["per_flow"]["max"] == 10);
      CHECK(run["server"]["cpu_us_per_transaction"].get<double>() > 0);
      CHECK(run["server"]["memory_per_connection"]["idle_rss_bytes"].is_number());
    }
    CHECK(server.process().wait_for_log("flows http tcp round 1: 50 flows on 2 loops, 500 transactions"));
    CHECK(server.process().wait_for_log("flows http tls round 1: 50 flows on 2 loops, 500 transactions"));
  }
  SUBCASE("HTTP/2 POSTs over 20 flows: each connection's session held while idle") {
    const json j =
        client_json({"127.0.0.1", "-p", server.port_text(), "--flows", "20", "--http", "2", "--request", "1K",
                     "--response", "2K", "-n", "200", "--mode", "tcp", "--repeat", "1"});
    const json& run = flows_run_of(j, "tcp");
    CHECK(run["transactions"] == 200);
    CHECK(run["failed_flows"] == 0);
    // An HTTP/2 session (nghttp2's state, its windows and tables) on each
    // idle connection, beside a socket's next to nothing; none where the
    // allocator is a sanitizer's, which glibc does not count.
    const json& heap = run["server"]["memory_per_connection"]["idle_heap_bytes"];
    if (!heap.is_null()) CHECK(heap.get<double>() > 4096);
    CHECK(server.process().wait_for_log("flows http tcp round 1: 20 flows"));
  }
}
