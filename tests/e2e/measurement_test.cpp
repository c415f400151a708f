// Measurements people can trust: statistics, CPU, environment, duration,
// intervals, CSV, verification, and an interrupted comparison.

#include <signal.h>

#include <fstream>
#include <numeric>
#include <sstream>
#include <thread>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

TEST_CASE("--repeat 3 -J carries every statistic and environment field") {
  const json j = client_json({"-n", "2M", "--repeat", "3", "--warmup", "1"});
  REQUIRE(j["runs"].size() == 8);  // one warm-up round and three measured, two modes each
  CHECK(j["runs"][0]["warmup"] == true);
  CHECK(j["runs"][1]["warmup"] == true);
  CHECK(j["runs"][2]["warmup"] == false);
  CHECK(j["test"]["warmup_rounds"] == 1);
  for (const char* mode : {"tcp", "tls"}) {
    CAPTURE(mode);
    const json& s = j["summary"][mode];
    CHECK(s["runs"] == 3);
    for (const char* metric :
         {"transfer_us", "sender_us", "handshake_us", "mbytes_per_s", "bytes", "client_cpu_s_per_gib",
          "server_cpu_s_per_gib", "client_core_share", "server_core_share"}) {
      CAPTURE(metric);
      for (const char* stat : {"count", "min", "median", "max", "mean", "stddev"}) {
        CAPTURE(stat);
        CHECK(s[metric][stat].is_number());
      }
    }
    CHECK(s["mbytes_per_s"]["min"].get<double>() <= s["mbytes_per_s"]["mean"].get<double>());
    CHECK(s["mbytes_per_s"]["mean"].get<double>() <= s["mbytes_per_s"]["max"].get<double>());
  }
  const json& ratio = j["summary"]["tls_over_tcp_transfer_time"];
  CHECK(ratio["count"] == 3);
  CHECK(ratio["ci95_low"].get<double>() <= ratio["median"].get<double>());
  CHECK(ratio["ci95_high"].get<double>() >= ratio["median"].get<double>());
  CHECK(ratio["ci_method"].get<std::string>().find("bootstrap") != std::string::npos);

  for (const char* side : {"client", "server"}) {
    CAPTURE(side);
    const json& env = j["environment"][side];
    for (const char* field : {"tlscmp_version", "tls_library", "cpu_model", "cpu_features", "kernel"}) {
      CAPTURE(field);
      CHECK(env[field].is_string());
    }
    CHECK(env["kernel"].get<std::string>().find("Linux") == 0);
    const json& run = j["runs"][2][side];
    CHECK(run["sndbuf_bytes"].get<int>() > 0);
    CHECK(run["rcvbuf_bytes"].get<int>() > 0);
    CHECK(run["mss_bytes"].get<int>() > 0);
    CHECK_FALSE(run["congestion"].get<std::string>().empty());
    CHECK(run["window_us"].get<double>() > 0);
    CHECK(run["core_share"].get<double>() >= 0);
  }
}

TEST_CASE("-t streams for a time, and the receiver's count and clock decide") {
  for (const std::string direction : {"forward", "reverse"}) {
    CAPTURE(direction);
    std::vector<std::string> args{"-t", "2", "--repeat", "1", "--verify"};
    if (direction == "reverse") args.push_back("-R");
    const auto start = std::chrono::steady_clock::now();
    const json j = client_json(args);
    CHECK(std::chrono::steady_clock::now() - start <
          std::chrono::seconds(30));  // a hang guard, not a timing test
    CHECK(j["test"]["duration_s"] == 2.0);
    CHECK(j["test"]["bytes"] == 0);
    REQUIRE(j["runs"].size() == 2);
    for (const json& run : j["runs"]) {
      CHECK(run["bytes"].get<std::uint64_t>() > 0);
      // The sender sends until its clock reads two seconds past go, so its
      // window cannot be shorter. The receiver's, from go to the last byte,
      // is about as long but not bounded below by it: a sender preempted
      // between its last write and its clock check is seen as stopping
      // early. So: as long, give or take a stalled thread, and never a
      // window that the byte count (-n) rather than the clock (-t) closed.
      CHECK(run["sender_us"].get<double>() >= 2e6);
      CHECK(run["transfer_us"].get<double>() > 1.5e6);
    }
  }
}

TEST_CASE("-i reports the receiver's intervals, which add up to the run") {
  const json j = client_json({"-t", "1", "-i", "0.2", "--repeat", "1", "-R"});
  for (const json& run : j["runs"]) {
    const json& intervals = run["intervals"];
    REQUIRE(intervals.size() >= 4);
    std::uint64_t sum = 0;
    double previous_end = 0;
    for (const json& i : intervals) {
      sum += i["bytes"].get<std::uint64_t>();
      CHECK(i["start_s"].get<double>() == doctest::Approx(previous_end));
      CHECK(i["end_s"].get<double>() >= i["start_s"].get<double>());
      previous_end = i["end_s"];
    }
    CHECK(sum == run["bytes"].get<std::uint64_t>());
    CHECK(previous_end * 1e6 == doctest::Approx(run["transfer_us"].get<double>()).epsilon(0.001));
  }
  // In text mode the same intervals are printed as they come.
  const ProcessResult text =
      run_tlscmp({"client", "-t", "0.5", "-i", "0.2", "--repeat", "1", "--mode", "tcp"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("[tcp 1/1]") != std::string::npos);
  CHECK(text.out.find("MB/s sent") != std::string::npos);
}

TEST_CASE("-i with -P: each stream's intervals add up to its bytes, and the run's to the run's") {
  const json j = client_json({"-t", "1", "-i", "0.25", "-P", "3", "--repeat", "1"});
  for (const json& run : j["runs"]) {
    CAPTURE(run["mode"]);
    const auto sum_of = [](const json& intervals) {
      std::uint64_t sum = 0;
      for (const json& i : intervals)
        sum += i["bytes"].get<std::uint64_t>();
      return sum;
    };
    REQUIRE(run["streams"].size() == 3);
    std::size_t longest = 0;
    for (const json& s : run["streams"]) {
      CHECK(s["intervals"].size() >= 3);
      CHECK(sum_of(s["intervals"]) == s["bytes"].get<std::uint64_t>());
      longest = std::max(longest, s["intervals"].size());
    }
    CHECK(sum_of(run["intervals"]) == run["bytes"].get<std::uint64_t>());
    // One sum per period, not one per stream interval.
    CHECK(run["intervals"].size() <= longest);
    CHECK(run["intervals"].size() >= 3);
  }
  // In text mode the live lines add up all three streams. They cover the
  // periods up to at least 0.75 s of the 1 s run, so well over half of its
  // bytes; stream 0 alone would show about a third.
  const ProcessResult text =
      run_tlscmp({"client", "-t", "1", "-i", "0.25", "-P", "3", "--repeat", "1", "--mode", "tcp"});
  REQUIRE(text.exit_code == 0);
  std::istringstream lines(text.out);
  std::uint64_t live_bytes = 0;
  std::uint64_t run_bytes = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, second, third;
    words >> first >> second;
    if (first == "[tcp" && second == "1/1]") {
      std::uint64_t bytes = 0;
      words >> third >> third >> bytes;  // "0.00-0.25" "s" BYTES
      live_bytes += bytes;
    } else if (first == "1" && second == "tcp") {
      words >> run_bytes;
    }
  }
  REQUIRE(run_bytes > 0);
  CHECK(live_bytes > run_bytes / 2);
  CHECK(live_bytes <= run_bytes);
}

TEST_CASE("--csv prints a header and one row per run") {
  const ProcessResult r = run_tlscmp({"client", "-n", "1M", "--repeat", "2", "--csv"});
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    rows.push_back(line);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].rfind("variant,round,warmup,partial,mode,", 0) == 0);
  CHECK(rows[1].rfind("tcp,1,0,0,tcp,client_to_server,1048576,", 0) == 0);
  CHECK(rows[4].rfind("tls,2,0,0,tls,client_to_server,1048576,", 0) == 0);
}

TEST_CASE("Ctrl-C stops cleanly and reports what was measured, marked partial") {
  for (const char* direction : {"forward", "reverse"}) {
    CAPTURE(direction);
    TempDir dir;
    ServerProcess server;
    std::vector<std::string> args{tlscmp_binary(), "client", "127.0.0.1", "-p", server.port_text(),
                                  "--insecure",    "-n",     "100G",      "-J"};
    if (std::string(direction) == "reverse") args.push_back("-R");
    BackgroundProcess client(args, dir.file("err"), dir.file("out"));
    // The signal once the first run moves data, not at a fixed time from the
    // start: under the sanitizers and load, 1.5 s once came before any run.
    // A data connection still there 200 ms on: the TLS trial handshake
    // before the rounds is a connection too, but a brief one.
    bool running = false;
    for (int i = 0; i < 50 && !running; ++i) {
      running = await_data_connection(server.port());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      running = running && tcp_sockets_at(server.port(), "01") >= 4;
    }
    REQUIRE(running);
    CHECK(client.stop(SIGINT) == 130);
    std::ifstream out(dir.file("out"));
    const json j = json::parse(out);
    CHECK(j["interrupted"] == true);
    REQUIRE(j["runs"].size() >= 1);
    const json& last = j["runs"].back();
    CHECK(last["partial"] == true);
    CHECK(last["bytes"].get<std::uint64_t>() > 0);
    CHECK(j["summary"]["tls_over_tcp_transfer_time"].is_null());
    CHECK(client.log().find("interrupted") != std::string::npos);
  }
}

TEST_CASE("--repeat auto runs rounds until the ratio is known, and says why it stopped") {
  const json j = client_json({"-n", "4M", "--repeat", "auto", "--max-rounds", "6"});
  const json& a = j["auto_repeat"];
  REQUIRE(a.is_object());
  const int rounds = a["rounds"].get<int>();
  CHECK(rounds >= 5);  // the minimum
  CHECK(rounds <= 6);
  CHECK(j["runs"].size() == 2 * static_cast<std::size_t>(rounds));
  CHECK(j["test"]["repeat"] == "auto");
  CHECK(j["test"]["rounds"] == rounds);
  CHECK(a["ci_target_percent"] == 5.0);
  CHECK(a["max_rounds"] == 6);
  const std::string why = a["stopped_by"];
  if (why == "ci_target") {
    CHECK(a["widest_ci_half_width_percent"].get<double>() <= 5.0);
  } else {
    CHECK(why == "max_rounds");
    CHECK(rounds == 6);
  }
  // The interval it judged by is the one the summary reports.
  const json& ratio = j["summary"]["tls_over_tcp_transfer_time"];
  const double half = (ratio["ci95_high"].get<double>() - ratio["ci95_low"].get<double>()) / 2;
  CHECK(100 * half / ratio["median"].get<double>() ==
        doctest::Approx(a["widest_ci_half_width_percent"].get<double>()).epsilon(0.01));

  // --max-time: no round that would end past it. One round takes more than a millisecond.
  const json timed = client_json({"-n", "1M", "--repeat", "auto", "--max-time", "0.001"});
  CHECK(timed["auto_repeat"]["stopped_by"] == "max_time");
  CHECK(timed["auto_repeat"]["rounds"] == 1);
  CHECK(timed["runs"].size() == 2);

  // The text says it in a line.
  const ProcessResult text = run_tlscmp({"client", "-n", "1M", "--repeat", "auto", "--max-time", "0.001"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("--repeat auto: stopped after 1 round at --max-time 0.001 s, short of the 5% target") !=
        std::string::npos);
}

TEST_CASE("--repeat mistakes get one line that says what to do") {
  expect_mistakes(
      "client",
      {
          {{"--repeat", "0"}, 2, "--repeat 0: give a number of rounds, 1 to 100000, or auto"},
          {{"--repeat", "often"}, 2, "--repeat often: give a number of rounds"},
          {{"--ci-target", "2"}, 2, "--ci-target, --max-rounds and --max-time are for --repeat auto"},
          {{"--repeat", "auto", "--mode", "tcp"},
           2,
           "--repeat auto needs a TLS/TCP ratio, and --mode tcp runs one mode: use --mode both"},
          {{"--repeat", "auto", "--mode", "udp"}, 2, "datagram tests pair no runs: give --repeat N"},
          {{"--repeat", "auto", "--max-rounds", "2"}, 2, "--max-rounds"},
      });
}
