// Numbers that explain themselves: each side's TCP_INFO, the host's CPU
// split and the data threads' CPUs in every stream run, and -A pinning.

#include <sched.h>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

// The CPUs this test may run on: -A names two of them where there are two.
std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(static_cast<std::size_t>(cpu), &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace

TEST_CASE("every stream run carries each side's TCP_INFO, host CPU split and data threads' CPUs") {
  const json j = client_json({"-n", "64M", "--repeat", "1", "-P", "2"});
  REQUIRE(j["runs"].size() == 2);
  for (const json& run : j["runs"]) {
    for (const char* side : {"client", "server"}) {
      CAPTURE(run["mode"]);
      CAPTURE(side);
      const json& facts = run[side]["facts"];
      const json& tcp = facts["tcp_info"];
      REQUIRE(tcp.is_object());
      CHECK(tcp["rtt_us"].get<int>() > 0);
      CHECK(tcp["cwnd_max"].get<int>() >= tcp["snd_cwnd"].get<int>());
      CHECK(tcp["snd_cwnd"].get<int>() > 0);
      CHECK(tcp["total_retrans"].is_number_unsigned());
      CHECK(tcp["rwnd_limited_share"].get<double>() <= 1.0);
      const json& host = facts["host_cpu"];
      REQUIRE(host.is_object());  // 64 MB over two streams takes some ticks
      double sum = 0;
      for (const char* share : {"user_percent", "system_percent", "irq_percent", "softirq_percent",
                                "steal_percent", "idle_percent"})
        sum += host[share].get<double>();
      CHECK(sum == doctest::Approx(100.0));
      CHECK(host["ticks"].get<int>() > 0);
      // Two streams: each thread's start and end at least.
      int samples = 0;
      for (const json& cpu : facts["cpus"])
        samples += cpu["samples"].get<int>();
      CHECK(samples >= 4);
      CHECK(facts["pinned_cpu"].is_null());
    }
  }
}

TEST_CASE("-A CLIENT,SERVER pins each side's data threads, and they run nowhere else") {
  const std::vector<int> cpus = usable_cpus();
  const int client_cpu = cpus.front();
  const int server_cpu = cpus.back();
  const std::string affinity = std::to_string(client_cpu) + "," + std::to_string(server_cpu);
  const json j = client_json({"-n", "32M", "--repeat", "1", "-P", "2", "-A", affinity});
  for (const json& run : j["runs"]) {
    for (const auto& [side, cpu] : {std::pair{"client", client_cpu}, std::pair{"server", server_cpu}}) {
      CAPTURE(side);
      const json& facts = run[side]["facts"];
      CHECK(facts["pinned_cpu"] == cpu);
      CHECK(facts["main_cpu"] == cpu);
      for (const json& seen : facts["cpus"])
        CHECK(seen["cpu"] == cpu);
    }
  }
  // The server's alone.
  const json server_only =
      client_json({"-n", "8M", "--repeat", "1", "--mode", "tcp", "-A", "," + std::to_string(server_cpu)});
  CHECK(server_only["runs"][0]["server"]["facts"]["pinned_cpu"] == server_cpu);
  CHECK(server_only["runs"][0]["client"]["facts"]["pinned_cpu"].is_null());
}

TEST_CASE("-A mistakes get one line that says what to do") {
  expect_mistakes(
      "client",
      {
          {{"-A", "x"}, 2, "-A x: the client CPU 'x' is not a CPU number; write -A 0, -A 0,1 or -A ,1"},
          {{"-A", "0,"}, 2, "the server CPU '' is not a CPU number"},
          {{"-A", "8000"}, 2, "-A 8000: CPU 8000 is not one this process may run on here: "},
          {{"-A", "0,1", "--crr"}, 2, "--crr connections are served by the server's accepting threads"},
          {{"-A", "0", "--handshakes", "5"}, 2, "handshake tests have none"},
          // The server checks its own CPUs: a refusal, naming the ones it has.
          {{"-A", "0,8000", "-n", "1M"},
           1,
           "refused: -A asks the server to pin to CPU 8000, but CPU 8000 is not one"},
      });
}

TEST_CASE("-A pins rr connections and datagram senders and receiver too, and both report their facts") {
  const std::vector<int> cpus = usable_cpus();
  const std::string affinity = std::to_string(cpus.front()) + "," + std::to_string(cpus.back());
  const json rr = client_json({"--rr", "1/1", "-n", "2000", "-P", "2", "--repeat", "1", "-A", affinity});
  REQUIRE(rr["rr_runs"].size() == 2);
  for (const json& run : rr["rr_runs"]) {
    CHECK(run["client"]["facts"]["pinned_cpu"] == cpus.front());
    CHECK(run["client"]["facts"]["main_cpu"] == cpus.front());
    CHECK(run["server"]["facts"]["pinned_cpu"] == cpus.back());
    CHECK(run["server"]["facts"]["main_cpu"] == cpus.back());
    CHECK(run["client"]["facts"]["tcp_info"]["rtt_us"].get<int>() > 0);
    CHECK(run["server"]["facts"]["tcp_info"].is_object());
  }
  const json udp = client_json({"--mode", "udp", "-n", "20000", "-P", "2", "--repeat", "1", "-A", affinity});
  REQUIRE(udp["datagram_runs"].size() == 1);
  const json& run = udp["datagram_runs"][0];
  CHECK(run["client"]["facts"]["pinned_cpu"] == cpus.front());
  CHECK(run["client"]["facts"]["main_cpu"] == cpus.front());
  CHECK(run["client"]["facts"]["tcp_info"].is_null());  // no TCP under datagrams
  CHECK(run["server"]["facts"]["pinned_cpu"] == cpus.back());
  CHECK(run["server"]["facts"]["main_cpu"] == cpus.back());
}

TEST_CASE("--crr: -A pins the connectors, and the server's side reports its host's CPU over the test") {
  const int cpu = usable_cpus().front();
  const json j = client_json(
      {"--crr", "-n", "200", "-P", "2", "--repeat", "1", "--mode", "tcp", "-A", std::to_string(cpu)});
  REQUIRE(j["crr_runs"].size() == 1);
  const json& run = j["crr_runs"][0];
  CHECK(run["client"]["facts"]["pinned_cpu"] == cpu);
  CHECK(run["client"]["facts"]["main_cpu"] == cpu);
  CHECK(run["client"]["facts"]["tcp_info"].is_null());  // connections come and go
  CHECK(run["server"]["facts"]["pinned_cpu"].is_null());
  CHECK(run["server"]["facts"]["cpus"].empty());
}
