// Two hosts on one machine: scripts/netns-harness runs the server and the
// client in network namespaces joined by a veth pair. Needs root and ip;
// skipped, with the reason, without them.

#include <unistd.h>

#include <filesystem>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

// Why the harness cannot run here, or "" if it can.
std::string cannot_run() {
  if (::geteuid() != 0) return "not root: network namespaces need root";
  if (!std::filesystem::exists("/usr/sbin/ip") && !std::filesystem::exists("/sbin/ip"))
    return "no ip (iproute2)";
  return {};
}

json harness(std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/env", "TLSCMP=" + tlscmp_binary(),
                             std::string(TLSCMP_SOURCE_DIR) + "/scripts/netns-harness"});
  const ProcessResult r = run_process(args, std::chrono::seconds(120));
  INFO("stdout: " << r.out);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("two network namespaces over a veth pair: both modes, both directions, exact bytes") {
  if (const std::string reason = cannot_run(); !reason.empty()) {
    MESSAGE("skipped: " << reason);
    return;
  }
  for (const char* direction : {"forward", "reverse"}) {
    CAPTURE(direction);
    std::vector<std::string> args{"-n", "4M", "--repeat", "1", "--verify", "-J"};
    if (std::string(direction) == "reverse") args.push_back("-R");
    const json j = harness(args);
    CHECK(j["test"]["host"].get<std::string>().rfind("10.77.", 0) == 0);
    REQUIRE(j["runs"].size() == 2);
    for (const json& run : j["runs"]) {
      CHECK(run["bytes"] == 4 << 20);
      // A veth has an Ethernet MTU: segments are far smaller than on loopback.
      CHECK(run["client"]["mss_bytes"].get<int>() <= 1460);
    }
    CHECK(j["runs"][1]["tls_version"] == "TLSv1.3");
  }
}

TEST_CASE("a rate-limited link (tc tbf): the counts stay exact") {
  if (const std::string reason = cannot_run(); !reason.empty()) {
    MESSAGE("skipped: " << reason);
    return;
  }
  const json j = harness({"--rate", "100mbit", "-n", "2M", "--repeat", "1", "-J"});
  for (const json& run : j["runs"])
    CHECK(run["bytes"] == 2 << 20);
}
