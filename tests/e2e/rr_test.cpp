// Request/response tests (--rr): exact counts, verified sizes, -P totals,
// open-loop latency that counts a stall against every request due during it,
// bad input refused in one line, and a server that answers wrongly named by
// transaction.

#include <signal.h>
#include <unistd.h>

#include <sstream>
#include <thread>

#include "e2e/e2e.hpp"
#include "e2e/hand_started.hpp"
#include "protocol/messages.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

json rr_json(std::vector<std::string> args) {
  const json j = client_json(std::move(args));
  REQUIRE(j["rr_runs"].is_array());
  return j;
}

// The latency fields of a run or a connection, in order.
// A fake plain-TCP server for one rr test on one connection: it accepts the
// test and answers each 1-byte request with `response` (what a broken or
// hostile server might send), or stops answering.
class FakeRrServer {
 public:
  explicit FakeRrServer(std::string response) : response_(std::move(response)) {
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeRrServer() { thread_.join(); }
  FakeRrServer(const FakeRrServer&) = delete;
  FakeRrServer& operator=(const FakeRrServer&) = delete;
  std::uint16_t port() const { return listener_.port(); }

 private:
  static bool read_exact(int fd, void* data, std::size_t n) {
    auto* p = static_cast<char*>(data);
    while (n > 0) {
      const ssize_t r = ::read(fd, p, n);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }
  static void write_all(int fd, const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t r = ::write(fd, p, n);
      if (r <= 0) return;
      p += r;
      n -= static_cast<std::size_t>(r);
    }
  }

  void serve() {
    const int control = listener_.accept(std::chrono::seconds(10));
    if (control < 0) return;
    char preamble[tlscmp::protocol::kPreambleBytes];
    std::uint8_t length[4];
    std::vector<char> body;
    if (read_exact(control, preamble, sizeof preamble) && read_exact(control, length, sizeof length)) {
      body.resize((std::size_t{length[0]} << 24) | (std::size_t{length[1]} << 16) |
                  (std::size_t{length[2]} << 8) | length[3]);
      read_exact(control, body.data(), body.size());
    }
    const auto own = tlscmp::protocol::encode_preamble(tlscmp::protocol::ConnectionKind::control);
    write_all(control, own.data(), own.size());
    tlscmp::protocol::TestAccept accept;
    accept.server_version = "fake";
    const auto frame = tlscmp::protocol::encode(accept);
    write_all(control, frame.data(), frame.size());
    const int data = listener_.accept(std::chrono::seconds(10));
    if (data >= 0) {
      char header[tlscmp::protocol::kPreambleBytes + tlscmp::protocol::kDataHeaderBytes];
      if (read_exact(data, header, sizeof header)) {
        write_all(data, "R", 1);
        char request = 0;
        while (read_exact(data, &request, 1))
          write_all(data, response_.data(), response_.size());
      }
      ::close(data);
    }
    ::close(control);
  }

  std::string response_;
  Listener listener_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("--rr -n: exactly that many transactions per run, both modes, with ordered percentiles") {
  const json j = rr_json({"--rr", "1/1", "-n", "500", "--repeat", "2"});
  REQUIRE(j["rr_runs"].size() == 4);
  for (const json& run : j["rr_runs"]) {
    CAPTURE(run);
    CHECK(run["transactions"] == 500);
    CHECK(run["request_bytes"] == 1);
    CHECK(run["response_bytes"] == 1);
    CHECK(run["transactions_per_s"].get<double>() > 0);
    check_latency_order(run["latency_us"]);
    CHECK(run["client"]["cpu_us_per_transaction"].get<double>() > 0);
    CHECK(run["server"]["cpu_us_per_transaction"].get<double>() > 0);
  }
  CHECK(j["rr_runs"][1]["mode"] == "tls");
  CHECK(j["rr_runs"][1]["tls_version"] == "TLSv1.3");
  CHECK(j["rr_runs"][0]["tls_version"].is_null());
  // Two rounds: two pairs, each ratio with its interval.
  const json& ratio = j["rr_summary"]["tls_over_tcp"];
  REQUIRE(ratio.is_object());
  for (const char* field : {"transactions_per_s", "p50_us", "p99_us"}) {
    CAPTURE(field);
    CHECK(ratio[field]["count"] == 2);
    CHECK(ratio[field]["median"].get<double>() > 0);
    CHECK(ratio[field]["ci95_low"].get<double>() <= ratio[field]["ci95_high"].get<double>());
  }
  CHECK(j["rr_summary"]["tcp"]["runs"] == 2);
  CHECK(j["runs"].empty());
}

TEST_CASE("--rr with --verify: requests and responses of the asked sizes, checked byte by byte") {
  const json j = rr_json({"--rr", "100/70K", "-n", "40", "--verify", "--repeat", "1"});
  REQUIRE(j["rr_runs"].size() == 2);
  for (const json& run : j["rr_runs"]) {
    CHECK(run["transactions"] == 40);
    CHECK(run["response_bytes"] == 70 * 1024);
  }
  CHECK(j["test"]["verify"] == true);
}

TEST_CASE("--rr -P 3: each connection's count and the run's total add up") {
  const json j = rr_json({"--rr", "16/16", "-n", "301", "-P", "3", "--mode", "tcp", "--repeat", "1"});
  const json& run = j["rr_runs"][0];
  REQUIRE(run["per_connection"].size() == 3);
  std::uint64_t sum = 0;
  for (const json& c : run["per_connection"]) {
    sum += c["transactions"].get<std::uint64_t>();
    check_latency_order(c["latency_us"]);
  }
  CHECK(sum == 301);
  CHECK(run["transactions"] == 301);
  CHECK(run["per_connection"][0]["transactions"] == 101);  // 301 = 101 + 100 + 100
  // The CSV: a row per connection, then the run's.
  const ProcessResult csv = run_tlscmp(
      {"client", "--rr", "16/16", "-n", "301", "-P", "3", "--mode", "tcp", "--repeat", "1", "--csv"});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find(",16,16,3,0,0,101,") != std::string::npos);
  CHECK(csv.out.find(",16,16,3,0,2,100,") != std::string::npos);
  CHECK(csv.out.find(",16,16,3,0,all,301,") != std::string::npos);
  // Timed: the connections' counts add up to the run's too.
  const json timed =
      rr_json({"--rr", "1/1", "-t", "0.5", "-P", "3", "--mode", "tls", "--repeat", "1", "-i", "0.1"});
  const json& t = timed["rr_runs"][0];
  std::uint64_t timed_sum = 0;
  for (const json& c : t["per_connection"])
    timed_sum += c["transactions"].get<std::uint64_t>();
  CHECK(timed_sum == t["transactions"].get<std::uint64_t>());
  // The intervals hold every transaction, once.
  std::uint64_t interval_sum = 0;
  for (const json& i : t["intervals"])
    interval_sum += i["transactions"].get<std::uint64_t>();
  CHECK(t["intervals"].size() >= 5);
  CHECK(interval_sum == t["transactions"].get<std::uint64_t>());
}

TEST_CASE("--rate: a server stalled for 600 ms costs every request due during it, not just one") {
  ServerProcess server;
  for (const bool open_loop : {true, false}) {
    CAPTURE(open_loop);
    TempDir dir;
    std::vector<std::string> args{tlscmp_binary(), "client",   "127.0.0.1", "-p",  server.port_text(),
                                  "--rr",          "1/1",      "--mode",    "tcp", "-t",
                                  "2.5",           "--repeat", "1",         "-J"};
    if (open_loop) args.insert(args.end(), {"--rate", "1000"});
    BackgroundProcess client(args, dir.file("err"), dir.file("out"));
    REQUIRE(await_data_connection(server.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ::kill(server.process().pid(), SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    ::kill(server.process().pid(), SIGCONT);
    for (int i = 0; i < 200 && client.running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(client.stop(SIGKILL) == 0);
    const json j = json::parse(read_file(dir.file("out")));
    const json& l = j["rr_runs"][0]["latency_us"];
    CAPTURE(l);
    // Either way one transaction waited the whole stall.
    CHECK(l["max"].get<double>() >= 500'000);
    if (open_loop) {
      // About 600 of 2500 requests were due during the stall, waiting from
      // 0 to 600 ms: the slowest tenth waited 300 ms or more.
      CHECK(l["p90"].get<double>() >= 100'000);
      CHECK(j["rr_runs"][0]["rate_tps"] == 1000);
    } else {
      // Closed loop, no request went during the stall: only one was slow.
      CHECK(l["p99"].get<double>() < 100'000);
    }
  }
}

TEST_CASE("--rate: a server still stalled as the schedule ends has fallen behind, and a note says so") {
  // The other side of the delay lab's open loop over 200 ms, whose last
  // response comes a round trip after the schedule and is no shortfall.
  ServerProcess server;
  TempDir dir;
  BackgroundProcess client({tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(), "--rr", "1/1",
                            "--mode", "tcp", "--rate", "1000", "-t", "2", "--repeat", "1", "-J"},
                           dir.file("err"), dir.file("out"));
  // Stalled from 1 s into the 2 s schedule to 0.5 s past its end,
  // the requests of the run's last part wait past its end by more than the
  // 5% of it (0.1 s) that the note allows.
  REQUIRE(await_data_connection(server.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ::kill(server.process().pid(), SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ::kill(server.process().pid(), SIGCONT);
  for (int i = 0; i < 200 && client.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(client.stop(SIGKILL) == 0);
  const json j = json::parse(read_file(dir.file("out")));
  CAPTURE(j["notes"]);
  CHECK(j["rr_runs"][0]["transactions"] == 2000);
  bool noted = false;
  for (const json& note : j["notes"])
    noted = noted || note.get<std::string>().find("tcp round 1 made ") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("--rr: a server that answers with more bytes than agreed is named by transaction") {
  {
    FakeRrServer fake("xy");  // 2 bytes to a 1/1 test
    const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", std::to_string(fake.port()), "--rr",
                                        "1/1", "-n", "10", "--mode", "tcp", "--repeat", "1"});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(is_one_line(r.err));
    CHECK(r.err.find("tcp round 1: the response to transaction 1 is longer than 1 bytes") !=
          std::string::npos);
  }
  {
    // Open loop, responses may be in flight together: the count gives it away.
    FakeRrServer fake("xy");
    const ProcessResult r =
        run_tlscmp({"client", "127.0.0.1", "-p", std::to_string(fake.port()), "--rr", "1/1", "-t", "0.5",
                    "--rate", "100", "--mode", "tcp", "--repeat", "1"});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(is_one_line(r.err));
    CHECK(r.err.find("a response is longer than 1 bytes: the server sent more than the responses to the 1 "
                     "requests sent so far, by transaction 1") != std::string::npos);
  }
}

TEST_CASE("--rr --verify: a response that is not the pattern is named by transaction and byte") {
  FakeRrServer fake(
      "x");  // the right size, the wrong byte (the pattern's is random per run: 1 in 256 is 'x')
  const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", std::to_string(fake.port()), "--rr", "1/1",
                                      "-n", "10", "--verify", "--mode", "tcp", "--repeat", "1"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(is_one_line(r.err));
  CHECK(r.err.find("differs from the --verify pattern at its byte 0") != std::string::npos);
  CHECK(r.err.find("tcp round 1: the response to transaction ") != std::string::npos);
}

TEST_CASE("--rr: bad input is refused in one line that says what to do") {
  expect_mistakes("client",
                  {
                      {{"--rr", "0/1"}, 2, "--rr request size"},
                      {{"--rr", "1/2G"}, 2, "--rr response size"},
                      {{"--rr", "64"}, 2, "give a request and a response size"},
                      {{"--rr", "1/1", "--rate", "100"}, 2, "--rate needs -t"},
                      {{"--rr", "1/1", "-R"}, 2, "-R is for bulk runs"},
                      {{"--rr", "1/1", "--msg-size", "10"}, 2, "--msg-size is for bulk runs"},
                      {{"--rr", "1/1", "-l", "1K"}, 2, "-l is for bulk runs"},
                      {{"--rr", "1/1", "--mode", "udp"}, 2, "--rr runs over tcp and tls"},
                      {{"--rr", "1/1", "--mode", "udp", "--ca", "ca.pem"}, 2, "--rr runs over tcp and tls"},
                      {{"--rr", "1/1", "-n", "1.5"}, 2, "not a whole number of transactions"},
                      {{"--rr", "1/1", "-t", "1", "--rate", "5M"}, 2, "lower the rate or add connections"},
                      {{"--rate", "100"}, 2, "--rate is for request/response tests"},
                  });
}

TEST_CASE("--rr against a server with caps: --max-duration refuses a longer -t, and stops a long -n") {
  ServerProcess server({"--max-duration", "0.5"});
  const ProcessResult refused = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--rr", "1/1",
                                            "-t", "2", "--mode", "tcp", "--repeat", "1"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("this server allows at most 0.5 s (--max-duration)") != std::string::npos);
  const ProcessResult stopped = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--rr", "1/1",
                                            "-n", "100M", "--mode", "tcp", "--repeat", "1"});
  CHECK(stopped.exit_code == 1);
  CHECK(is_one_line(stopped.err));
  CHECK(stopped.err.find("ran past this server's --max-duration of 0.5 s") != std::string::npos);
  // And it serves the next one.
  CHECK(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--rr", "1/1", "-n", "100", "--mode",
                    "tcp", "--repeat", "1"})
            .exit_code == 0);
}

TEST_CASE("tlscmp sweep --rr: one row per size, transactions/s with p50/p99 in the table and the CSV") {
  TempDir dir;
  const ProcessResult r = run_tlscmp(
      {"sweep", "--rr", "1/1,64/1K", "-n", "200", "--repeat", "2", "--mode", "tcp", "--out", dir.file("rr")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("transactions per second (p50 / p99 latency)") != std::string::npos);
  CHECK(r.out.find("| 1/1 |") != std::string::npos);
  CHECK(r.out.find("| 64/1K |") != std::string::npos);
  const std::string csv = read_file(dir.file("rr.csv"));
  CHECK(csv.rfind("rr,variant,mode,runs,", 0) == 0);
  CHECK(csv.find("\n64/1K,tcp,tcp,2,") != std::string::npos);
  const json j = json::parse(read_file(dir.file("rr.json")));
  REQUIRE(j["points"].size() == 2);
  CHECK(j["points"][1]["comparison"]["rr_runs"][0]["response_bytes"] == 1024);
  CHECK(j["points"][1]["comparison"]["rr_runs"][0]["transactions"] == 200);
  // Both modes: a TLS/TCP column beside them.
  const ProcessResult both =
      run_tlscmp({"sweep", "--rr", "1/1,1K/4K", "-n", "100", "--repeat", "2", "--out", dir.file("both")});
  INFO(both.err);
  REQUIRE(both.exit_code == 0);
  CHECK(both.out.find("| rr | tcp | tls | tls/tcp |") != std::string::npos);
  CHECK(both.out.find("x (p50 ") != std::string::npos);
  // Bulk-only settings cannot be swept with it.
  CHECK(run_tlscmp({"sweep", "--rr", "1/1,2/2", "--msg-size", "10"}).exit_code == 2);
}

TEST_CASE("--rr -i: a line per interval as the run goes, before the report") {
  const ProcessResult r = run_tlscmp({"client", "--rr", "1/1", "-t", "0.6", "-i", "0.2", "--repeat", "1"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto first = r.out.find("[tcp 1/1]      0.00-0.20 s");
  const auto tls = r.out.find("[tls 1/1]      0.00-0.20 s");
  const auto table = r.out.find("round mode transactions");
  CHECK(first != std::string::npos);
  CHECK(tls != std::string::npos);
  CHECK(r.out.find(" tx/s p99 ", first) != std::string::npos);
  CHECK(first < tls);
  CHECK(tls < table);
  // The live lines hold every transaction of the run, once.
  std::uint64_t live = 0;
  std::istringstream lines(r.out.substr(0, tls));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("[tcp 1/1]", 0) == 0) live += std::stoull(line.substr(line.find(" s ") + 3));
  }
  const std::string row = r.out.substr(r.out.find("    1 tcp", table));
  CHECK(live == std::stoull(row.substr(std::string("    1 tcp").size())));
}

TEST_CASE("the server refuses an rr schedule no connection could keep, from a client that did not check") {
  ServerProcess server;
  tlscmp::protocol::TestRequest request;
  request.test.kind = tlscmp::TestKind::rr;
  request.mode = tlscmp::Mode::tcp;
  request.test.chunk_bytes = 1;
  request.test.rr.request_bytes = 1;
  request.test.rr.response_bytes = 1;
  request.test.duration_ms = 1000;
  request.test.rr.rate_tps = 5e6;  // a request every 0.2 us
  tlscmp::TcpStream control(
      tlscmp::connect_tcp("127.0.0.1", server.port(), tlscmp::Deadline::after(std::chrono::seconds(5))));
  control.set_deadline(tlscmp::Deadline::after(std::chrono::seconds(5)));
  tlscmp::session::send_preamble(control, tlscmp::protocol::ConnectionKind::control);
  tlscmp::session::send_message(control, request, "the request");
  tlscmp::session::receive_preamble(control, "the answer");
  const auto answer = tlscmp::session::receive_message(control, "the answer");
  const auto* refusal = std::get_if<tlscmp::protocol::Refusal>(&answer);
  REQUIRE(refusal != nullptr);
  CHECK(refusal->reason.find("this server refuses a rate of 5e+06 transactions/s over 1 connection") !=
        std::string::npos);
}

TEST_CASE("an rr peer that sends more than a request: the server logs it by transaction and serves on") {
  ServerProcess server({"--max-clients", "1"});
  tlscmp::protocol::TestRequest request;
  request.test.kind = tlscmp::TestKind::rr;
  request.mode = tlscmp::Mode::tcp;
  request.test.chunk_bytes = 1;
  request.test.rr.request_bytes = 1;
  request.test.rr.response_bytes = 1;
  request.test.rr.transactions = 10;
  const auto timeout = std::chrono::seconds(5);
  {
    HandStartedTest test(server.port(), request, timeout);
    // While it runs, --max-clients 1 turns an rr client away as busy.
    const ProcessResult busy = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--rr", "1/1",
                                           "-n", "10", "--mode", "tcp", "--repeat", "1"});
    CHECK(busy.exit_code == 1);
    CHECK(busy.err.find("server busy: 1 tests running") != std::string::npos);
    tlscmp::TcpStream data(tlscmp::connect_tcp("127.0.0.1", server.port(), tlscmp::Deadline::after(timeout)));
    data.set_deadline(tlscmp::Deadline::after(timeout));
    std::error_code ec;
    data.write_all(tlscmp::protocol::encode_preamble(tlscmp::protocol::ConnectionKind::data), ec);
    data.write_all(tlscmp::protocol::encode_data_header(test.accept.cookie, 0), ec);
    std::byte ready{};
    data.read_exact({&ready, 1}, ec);
    REQUIRE_FALSE(ec);
    const std::array<std::byte, 3> three{};  // three bytes for a 1-byte request, at once
    data.write_all(three, ec);
    REQUIRE(server.process().wait_for_log(
        "rr tcp 1/1 failed: the request of transaction 1 is longer than 1 bytes"));
  }
  CHECK(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--rr", "1/1", "-n", "10", "--mode",
                    "tcp", "--repeat", "1"})
            .exit_code == 0);
}

TEST_CASE("--rr interrupted (SIGINT): exit 130, the run so far marked partial, no server account made up") {
  TempDir dir;
  BackgroundProcess client(
      {tlscmp_binary(), "client", "--rr", "1/1", "-t", "20", "--mode", "tls", "--repeat", "1", "-J"},
      dir.file("err"), dir.file("out"));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // well into the run, even sanitized
  CHECK(client.stop(SIGINT) == 130);
  const json j = json::parse(read_file(dir.file("out")));
  CHECK(j["interrupted"] == true);
  REQUIRE(j["rr_runs"].size() == 1);
  const json& run = j["rr_runs"][0];
  CHECK(run["partial"] == true);
  CHECK(run["transactions"].get<std::uint64_t>() > 0);
  CHECK(run["server"].is_null());
  CHECK(run["client"]["cpu_us_per_transaction"].get<double>() > 0);
}
