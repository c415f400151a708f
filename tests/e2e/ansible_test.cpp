// The Ansible role for real: deploy/ansible/netns-lab makes four network
// namespaces with an sshd each, and Ansible drives fleet.yml (one server,
// three clients at one --start-at), pairwise.yml and stop.yml over SSH. Needs
// root, iproute2, openssh-server and ansible-core; skipped, with the reason,
// without them. Its own executable, for its own ctest timeout.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "e2e/e2e.hpp"
#include "measure/stats.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

std::string cannot_run() {
  if (::geteuid() != 0) return "not root: network namespaces and sshd need root";
  for (const char* tool : {"/usr/sbin/sshd", "/usr/bin/ansible-playbook", "/usr/bin/ssh-keygen"}) {
    if (!std::filesystem::exists(tool))
      return std::string("no ") + tool + " (scripts/install-deps installs it)";
  }
  if (!std::filesystem::exists("/usr/sbin/ip") && !std::filesystem::exists("/sbin/ip"))
    return "no ip (iproute2)";
  return {};
}

json read_json(const std::filesystem::path& path) {
  INFO("reading " << path);
  const std::string text = read_file(path);
  REQUIRE(!text.empty());
  return json::parse(text);
}

// Per variant: the bytes of a client's runs that count, and their median MB/s.
struct Figures {
  int runs = 0;
  double bytes = 0;
  double median_mbps = 0;
};

std::map<std::string, Figures> figures_of(const json& client) {
  std::map<std::string, std::vector<double>> rates;
  std::map<std::string, Figures> figures;
  for (const json& run : client["runs"]) {
    if (run.value("partial", false) || run.value("warmup", false)) continue;
    Figures& f = figures[run["variant"].get<std::string>()];
    ++f.runs;
    f.bytes += run["bytes"].get<double>();
    rates[run["variant"].get<std::string>()].push_back(run["mbytes_per_s"].get<double>());
  }
  for (auto& [variant, f] : figures)
    f.median_mbps = tlscmp::measure::summarize(rates[variant]).median;
  return figures;
}

// The merged totals equal the sums of the hosts' own results, variant by variant.
void check_totals(const json& merged, const std::map<std::string, std::map<std::string, Figures>>& hosts) {
  REQUIRE(merged["totals"].size() == 2);
  for (const json& total : merged["totals"]) {
    const std::string variant = total["variant"].get<std::string>();
    CAPTURE(variant);
    CHECK(total["kind"] == "bulk");
    double bytes = 0;
    double rate_sum = 0;
    int runs = 0;
    for (const auto& [host, figures] : hosts) {
      bytes += figures.at(variant).bytes;
      rate_sum += figures.at(variant).median_mbps;
      runs += figures.at(variant).runs;
    }
    CHECK(total["hosts"] == hosts.size());
    CHECK(total["runs"] == runs);
    CHECK(total["amount"].get<double>() == bytes);
    CHECK(total["rate_sum"].get<double>() == doctest::Approx(rate_sum).epsilon(1e-9));
  }
  REQUIRE(merged["hosts"].size() == 2 * hosts.size());
  for (const json& row : merged["hosts"]) {
    const Figures& f = hosts.at(row["host"].get<std::string>()).at(row["variant"].get<std::string>());
    CHECK(row["amount"].get<double>() == f.bytes);
    CHECK(row["runs"] == f.runs);
  }
}

}  // namespace

TEST_CASE(
    "Ansible over four namespaces with an sshd each: a fleet at one --start-at, merged, then pairs, then "
    "stop") {
  if (const std::string reason = cannot_run(); !reason.empty()) {
    skip(reason);
    return;
  }
  const TempDir dir;
  const ProcessResult lab =
      run_process({std::string(TLSCMP_SOURCE_DIR) + "/deploy/ansible/netns-lab", "--tlscmp", tlscmp_binary(),
                   "--dir", dir.path().string(), "--client-args", "--mode both -n 2M --repeat 2"},
                  std::chrono::seconds(500));
  INFO("netns-lab stdout (tail): " << lab.out.substr(lab.out.size() > 6000 ? lab.out.size() - 6000 : 0));
  INFO("netns-lab stderr: " << lab.err);
  REQUIRE(lab.exit_code == 0);

  {  // many-to-one: every client's JSON, summed by merge, and the server's account of each
    const std::filesystem::path run = dir.path() / "results/fleet";
    const std::map<std::string, std::string> address{
        {"client1", "10.79.0.12"}, {"client2", "10.79.0.13"}, {"client3", "10.79.0.14"}};
    std::map<std::string, std::map<std::string, Figures>> hosts;
    std::set<double> start_at;
    for (const auto& [host, ip] : address) {
      CAPTURE(host);
      const json client = read_json(run / (host + ".json"));
      CHECK(client["test"]["host"] == "10.79.0.11");
      start_at.insert(client["test"]["start_at_ns"].get<double>());
      CHECK(std::abs(client["clock_offset_s"].get<double>()) < 0.1);
      hosts[host] = figures_of(client);
      REQUIRE(hosts[host].size() == 2);
      for (const auto& [variant, f] : hosts[host]) {
        CHECK(f.runs == 2);
        CHECK(f.bytes == 2 * (2 << 20));
      }
    }
    CHECK(start_at.size() == 1);  // one time handed to every client

    const json merged = read_json(run / "merged.json");
    check_totals(merged, hosts);

    // The server's own file lists every client, with the bytes it received from each.
    std::map<std::string, double> served;
    std::ifstream lines(run / "server-server.jsonl");
    for (std::string line; std::getline(lines, line);) {
      const json j = json::parse(line);
      CHECK(j["outcome"] == "ok");
      double& bytes = served[j["client_address"].get<std::string>()];
      if (j["kind"] == "stream")
        for (const json& side : j["server_results"])
          bytes += side["bytes"].get<double>();
    }
    for (const auto& [host, ip] : address) {
      CAPTURE(ip);
      REQUIRE(served.count(ip) == 1);
      CHECK(served[ip] == hosts[host]["tcp"].bytes + hosts[host]["tls"].bytes);
    }
    REQUIRE(merged["server"].size() == 3);
    for (const json& view : merged["server"]) {
      const std::string ip = view["client_address"].get<std::string>();
      CAPTURE(ip);
      CHECK(served.count(ip) == 1);
      const auto host =
          std::find_if(address.begin(), address.end(), [&](const auto& a) { return a.second == ip; });
      REQUIRE(host != address.end());
      CHECK(view["failed"] == 0);
      CHECK(view["refused"] == 0);
      CHECK(view["bytes"].get<double>() == hosts[host->first]["tcp"].bytes + hosts[host->first]["tls"].bytes);
    }
    CHECK(served.size() == 3);
    CHECK(read_file(run / "merged.txt").find("the hosts together (3 results)") != std::string::npos);
  }

  {  // pairwise: each pair once, one file per pair, merged
    const std::filesystem::path run = dir.path() / "results/pairwise";
    std::map<std::string, std::map<std::string, Figures>> pairs;
    for (const char* pair : {"client1-to-client2", "client1-to-client3", "client2-to-client3"}) {
      CAPTURE(pair);
      const json client = read_json(run / (std::string(pair) + ".json"));
      const std::string peer = std::string(pair).substr(std::string(pair).size() - 1);
      CHECK(client["test"]["host"] == "10.79.0.1" + std::to_string(std::stoi(peer) + 1));
      pairs[pair] = figures_of(client);
    }
    CHECK(!std::filesystem::exists(run / "client2-to-client1.json"));  // tlscmp_pair_both_ways=false
    check_totals(read_json(run / "merged.json"), pairs);
  }

  {  // stop.yml stopped every server, and the lab left no namespace behind
    for (const char* host : {"server", "client1", "client2", "client3"}) {
      CAPTURE(host);
      CHECK(!std::filesystem::exists(dir.path() / "hosts" / host / "server.pid"));
      CHECK(read_file(dir.path() / "hosts" / host / "server.log").find("listening on") != std::string::npos);
    }
    const ProcessResult netns = run_process({"ip", "netns", "list"});
    CHECK(netns.out.find("tlab-") == std::string::npos);
  }
}
