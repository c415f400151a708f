// Many clients as one: --start-at with its clock check, and merge.

#include <chrono>
#include <fstream>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

double wall_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("--start-at waits for its time, once this host's clock agrees with the server's") {
  ServerProcess server;
  const double start = wall_s() + 1.5;
  const std::string at = fmt::format("@{:.3f}", start);
  const ProcessResult r = run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-n", "1M", "--repeat",
                                      "1", "--mode", "tcp", "--start-at", at, "-J"});
  const double ended = wall_s();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(ended >= start);  // the run came after the time
  // Said before the wait, so that it is not taken for a hang: UTC, this host's time, and how far off.
  CHECK(r.err.rfind("tlscmp: the first run starts at ", 0) == 0);
  CHECK(r.err.find(" UTC (") != std::string::npos);
  CHECK((r.err.find(" here), in 1 s\n") != std::string::npos ||
         r.err.find(" here), in 2 s\n") != std::string::npos));
  CHECK(is_one_line(r.err));
  const json j = json::parse(r.out);
  CHECK(std::abs(j["clock_offset_s"].get<double>()) < 0.1);  // one clock: the same host
  CHECK(j["test"]["start_at_ns"].get<double>() == doctest::Approx(start * 1e9).epsilon(1e-9));
  CHECK(j["test"]["max_skew_s"] == 0.1);
}

TEST_CASE("--start-at mistakes get one line that says what to do") {
  expect_mistakes(
      "client",
      {
          {{"--start-at", "2020-01-01T00:00:00Z", "-n", "1M"}, 1, "--start-at passed"},
          {{"--start-at", "tomorrow"}, 2, "--start-at tomorrow: write a UTC time as 2026-12-01T09:30:00Z"},
          {{"--start-at", "2026-13-01T00:00:00Z"}, 2, "write a UTC time"},
          {{"--start-at", "2026-12-01T00:00:00+01:00"}, 2, "write a UTC time"},
          {{"--max-skew", "1"}, 2, "--max-skew is for --start-at"},
          // A year ahead (a typo) waited without a word; more than a day ahead is refused.
          {{"--start-at", fmt::format("@{:.0f}", wall_s() + 3 * 86'400)},
           2,
           "days from now by this host's clock; give a time within a day"},
          {{"--start-at", "2099-01-01T00:00:00Z"}, 2, "--start-at 2099-01-01T00:00:00Z: that is "},
      });
}

TEST_CASE("merge adds up the hosts' results, and the server's results file lists every client") {
  TempDir dir;
  const std::string results = dir.file("server.jsonl");
  ServerProcess server({"--results", results});
  // Far enough ahead for both clients to start and compare clocks first. A
  // second ahead, both sanitized clients beside three other tests on two
  // cores once failed, their reason not kept (a start that has passed is
  // the likeliest); each one's stderr is logged now.
  const double start = wall_s() + 3.0;
  {
    std::vector<std::unique_ptr<BackgroundProcess>> clients;
    for (const char* host : {"alpha", "beta"}) {
      clients.push_back(std::make_unique<BackgroundProcess>(
          std::vector<std::string>{tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(), "-n",
                                   "2M", "--repeat", "2", "--mode", "tcp", "--start-at",
                                   fmt::format("@{:.3f}", start), "-J"},
          dir.file(std::string(host) + ".err"), dir.file(std::string(host) + ".json")));
    }
    for (std::size_t i = 0; i < clients.size(); ++i) {
      const int status = clients[i]->stop(0);  // waits for it to finish
      INFO(read_file(dir.file(i == 0 ? "alpha.err" : "beta.err")));
      CHECK(status == 0);
    }
  }
  REQUIRE(await_results(results, 4).size() == 4);  // a line per test, written as each ends
  const ProcessResult r =
      run_tlscmp({"merge", dir.file("alpha.json"), dir.file("beta.json"), "--results", results, "-J"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["totals"].size() == 1);
  const json& total = j["totals"][0];
  CHECK(total["kind"] == "bulk");
  CHECK(total["variant"] == "tcp");
  CHECK(total["hosts"] == 2);
  CHECK(total["runs"] == 4);
  double amount = 0;
  double rates = 0;
  for (const json& h : j["hosts"]) {
    amount += h["amount"].get<double>();
    rates += h["median_rate"].get<double>();
  }
  CHECK(total["amount"].get<double>() == amount);
  CHECK(total["amount"].get<double>() == 2 * 2 * 2 * 1024 * 1024);
  CHECK(total["rate_sum"].get<double>() == doctest::Approx(rates));
  CHECK(j["hosts"][0]["host"] == "alpha");
  CHECK(j["hosts"][1]["host"] == "beta");
  // The server saw both clients' four tests, and the same bytes.
  REQUIRE(j["server"].size() == 1);  // both from 127.0.0.1
  CHECK(j["server"][0]["tests"] == 4);
  CHECK(j["server"][0]["ok"] == 4);
  CHECK(j["server"][0]["bytes"].get<double>() == amount);

  const ProcessResult text = run_tlscmp({"merge", dir.file("alpha.json"), dir.file("beta.json")});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("the hosts together (2 results)") != std::string::npos);
  const ProcessResult bad = run_tlscmp({"merge", dir.file("alpha.json"), dir.file("alpha.err")});
  CHECK(bad.exit_code == 2);
  CHECK(is_one_line(bad.err));
}
