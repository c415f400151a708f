// The delay lab: every kind over a link with a real round trip. This kernel
// has no netem, so scripts/netns-harness --delay joins the server's and the
// client's network namespaces through a TUN device in each and tlscmp-delay
// (src/tools/tlscmp_delay.cpp), which holds every packet half the round trip.
// At 60 ms and 200 ms, tcp and tls: bulk with -P 1, 4 and 16, -R, --bidir,
// --rr, --crr, --handshakes, --compare-groups, and datagrams (udp; dtls where
// the library has a DTLS server). Each must complete with exact counts, and
// each handshake time must hold the round trips it takes: lower bounds only,
// since the machine is shared and a late packet is no error of tlscmp's.
//
// One server and one link per round trip, its commands in lanes that run at
// once: nearly all their time is waiting on the link, and a lab of one
// command after another took 95 s at 200 ms. The lab prints its table
// (ctest -V shows it). Needs root, ip and /dev/net/tun; skipped, with the
// reason, without them. Its own executable, for its own ctest timeout.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

std::string cannot_run() {
  if (::geteuid() != 0) return "not root: network namespaces and TUN devices need root";
  if (!std::filesystem::exists("/usr/sbin/ip") && !std::filesystem::exists("/sbin/ip"))
    return "no ip (iproute2)";
  if (!std::filesystem::exists("/dev/net/tun")) return "no /dev/net/tun (modprobe tun)";
  return {};
}

// scripts/netns-harness ARGS, with the binaries under test.
ProcessResult harness(std::vector<std::string> args, std::chrono::seconds timeout) {
  args.insert(args.begin(), {"/usr/bin/env", "TLSCMP=" + tlscmp_binary(), "TLSCMP_DELAY=" TLSCMP_DELAY_BINARY,
                             std::string(TLSCMP_SOURCE_DIR) + "/scripts/netns-harness"});
  return run_process(args, timeout);
}

// rr_rate: an open loop (--rate with -t), whose count is the schedule's.
enum class Kind { bulk, rr, rr_rate, crr, handshakes, groups, datagrams };

// One client command of the lab. `count` is what it asks for: -n (bytes per
// stream, transactions or connections in all, datagrams per sender), or
// --handshakes for handshakes and groups; -P is `parallel`.
struct Command {
  std::string name;  // its rows' kind in the table
  Kind kind;
  int lane;  // a lane's commands run in turn, the lanes at once
  bool tls;  // whether it needs the CA (tlscmp refuses TLS flags with --mode tcp or udp)
  std::uint32_t parallel;
  std::uint64_t count;
  std::vector<std::string> args;  // the rest of the command line

  std::vector<std::string> command_line() const {
    std::vector<std::string> line = args;
    if (kind == Kind::handshakes || kind == Kind::groups) {
      line.insert(line.end(), {"--handshakes", std::to_string(count)});
    } else if (kind == Kind::rr_rate) {
      line.insert(line.end(), {"-P", std::to_string(parallel)});
    } else {
      line.insert(line.end(), {"-n", std::to_string(count), "-P", std::to_string(parallel)});
    }
    return line;
  }
};

std::vector<Command> lab_commands() {
  // Sizes: enough for slow start to matter (a 200 ms round trip starts at
  // ten 1448-byte segments), small enough that no lane takes much over
  // half a minute at 200 ms (-P 16 opens its connections 8 at a time: two
  // waves, where one after another took 16 round trips, TLS 32). --repeat
  // 1: tcp and tls once each.
  std::vector<Command> commands{
      {"bulk", Kind::bulk, 1, true, 1, 2 << 20, {"--repeat", "1"}},
      {"bulk", Kind::bulk, 3, true, 4, 1 << 20, {"--repeat", "1"}},
      {"bulk", Kind::bulk, 1, true, 16, 256 << 10, {"--repeat", "1"}},
      {"bulk -R", Kind::bulk, 3, true, 1, 2 << 20, {"-R", "--repeat", "1"}},
      {"bulk --bidir", Kind::bulk, 3, true, 2, 1 << 20, {"--bidir", "--repeat", "1"}},
      {"rr 1/1", Kind::rr, 2, true, 4, 40, {"--rr", "1/1", "--repeat", "1"}},
      {"crr", Kind::crr, 2, true, 4, 12, {"--crr", "--repeat", "1"}},
      // 20 a second for 2 s: 40 requests on the schedule, each answered a
      // round trip later, the last one past the 2 s (no shortfall of the rate).
      {"rr --rate",
       Kind::rr_rate,
       2,
       true,
       2,
       40,
       {"--rr", "1/1", "--rate", "20", "-t", "2", "--repeat", "1"}},
      {"handshakes", Kind::handshakes, 0, true, 1, 3, {}},
      // One pair a group: at 200 ms a pair takes 0.8 s, and a group stops a
      // round after 1 s, so a second pair would be cut short on a slow day.
      {"compare-groups", Kind::groups, 0, true, 1, 1, {"--compare-groups", "--repeat", "1"}},
      // 833 datagrams a second: a low rate, at which every one must arrive.
      {"datagrams", Kind::datagrams, 0, false, 1, 300, {"--mode", "udp", "-b", "100K"}},
  };
  if (!boringssl_build())  // BoringSSL has no DTLS server (no DTLSv1_listen)
    commands.push_back({"datagrams", Kind::datagrams, 0, true, 1, 300, {"--mode", "dtls", "-b", "100K"}});
  return commands;
}

std::string file_stem(std::size_t index) {
  return "c" + std::to_string(index);
}

// The script the harness runs in the client's namespace: each lane in the
// background, its commands in turn, each leaving NAME.json, .err, .rc and .ms.
std::string lab_script(const std::vector<Command>& commands, const std::filesystem::path& dir) {
  std::string script =
      "cd '" + dir.string() +
      "' || exit 1\n"
      "lab() {\n"
      "  name=$1; shift; start=$(date +%s%N)\n"
      "  \"$TLSCMP\" client \"$SERVER\" -p \"$PORT\" \"$@\" -J >\"$name.json\" 2>\"$name.err\"\n"
      "  echo $? >\"$name.rc\"; echo $(( ($(date +%s%N) - start) / 1000000 )) >\"$name.ms\"\n"
      "}\n";
  int lanes = 0;
  for (const Command& c : commands)
    lanes = std::max(lanes, c.lane + 1);
  for (int lane = 0; lane < lanes; ++lane) {
    script += "(\n";
    for (std::size_t i = 0; i < commands.size(); ++i) {
      const Command& c = commands[i];
      if (c.lane != lane) continue;
      script += "  lab " + file_stem(i) + (c.tls ? " --ca \"$CA\"" : "");
      for (const std::string& arg : c.command_line())
        script += " '" + arg + "'";
      script += "\n";
    }
    script += ") &\n";
  }
  return script + "wait\n";
}

// A row of the lab's table.
struct Row {
  std::string kind;
  std::string mode;
  std::uint32_t parallel;
  bool exact;
  // Connect and TLS handshake, ms: a bulk or rr run's (the mean of its
  // connections'; one run a mode, so also the median), crr's connect and
  // handshake medians added, the handshake tests' median; dtls its handshake.
  std::optional<double> handshake_ms;
  double seconds;  // the whole command's
};

double us(const json& value) {
  return value.get<double>();
}

// Bulk: bytes per run are -n for each of -P streams, each stream its own;
// TCP's connect takes a round trip, TLS 1.3 adds one.
void check_bulk(const json& j, const Command& c, double rtt_us, std::vector<Row>& rows, double seconds) {
  const json& runs = j["runs"];
  REQUIRE(runs.size() == 2);
  const bool reverse = std::find(c.args.begin(), c.args.end(), "-R") != c.args.end();
  const bool bidir = std::find(c.args.begin(), c.args.end(), "--bidir") != c.args.end();
  for (const json& run : runs) {
    const std::string mode = run["mode"];
    CAPTURE(mode);
    bool exact = run["bytes"] == c.count * c.parallel && !run["partial"].get<bool>() &&
                 run["direction"] == (reverse ? "server_to_client" : "client_to_server");
    if (c.parallel > 1) {
      exact = exact && run["streams"].size() == c.parallel;
      for (const json& stream : run["streams"]) {
        // --bidir: the odd-numbered streams go the other way.
        const bool back = reverse != (bidir && stream["stream"].get<int>() % 2 == 1);
        exact = exact && stream["bytes"] == c.count &&
                stream["direction"] == (back ? "server_to_client" : "client_to_server");
      }
    }
    CHECK(exact);
    // With -P, the mean of the streams' connects (and handshakes): each holds the bound.
    CHECK(us(run["handshake_us"]) >= (mode == "tls" ? 2 : 1) * rtt_us);
    // The set-up, 8 connections at a time over a long round trip: two waves
    // of connect (TLS: and handshake) and the ready byte, well under the 16
    // (TLS 32) round trips of connections one after another.
    if (c.parallel == 16) {
      CHECK(run["setup_at_once"] == 8);
      CHECK(us(run["setup_us"]) >= 2 * (mode == "tls" ? 2 : 1) * rtt_us);
      CHECK(us(run["setup_us"]) < 12 * rtt_us);
    }
    if (mode == "tls") CHECK(run["tls_version"] == "TLSv1.3");
    rows.push_back({c.name, mode, c.parallel, exact, us(run["handshake_us"]) / 1000, seconds});
  }
}

// rr: each transaction is a round trip; -n in all, shared out over the connections.
void check_rr(const json& j, const Command& c, double rtt_us, std::vector<Row>& rows, double seconds) {
  const json& runs = j["rr_runs"];
  REQUIRE(runs.size() == 2);
  for (const json& run : runs) {
    const std::string mode = run["mode"];
    CAPTURE(mode);
    bool exact = run["transactions"] == c.count && run["connections"] == c.parallel &&
                 !run["partial"].get<bool>() && run["per_connection"].size() == c.parallel;
    for (std::uint32_t i = 0; exact && i < c.parallel; ++i)
      exact = run["per_connection"][i]["transactions"] == c.count / c.parallel + (i < c.count % c.parallel);
    CHECK(exact);
    CHECK(us(run["latency_us"]["min"]) >= rtt_us);
    CHECK(us(run["handshake_us"]) >= (mode == "tls" ? 2 : 1) * rtt_us);
    rows.push_back({c.name, mode, c.parallel, exact, us(run["handshake_us"]) / 1000, seconds});
  }
}

// crr: connect (a round trip), TLS (one more), request and response (one
// more), for every connection; the resumed variant resumes every one.
void check_crr(const json& j, const Command& c, double rtt_us, std::vector<Row>& rows, double seconds) {
  const json& runs = j["crr_runs"];
  REQUIRE(runs.size() == 3);
  for (const json& run : runs) {
    const std::string variant = run["variant"];
    CAPTURE(variant);
    const bool tls = run["mode"] == "tls";
    bool exact = run["connections"] == c.count && run["failed"] == 0 &&
                 run["server_connections"] == c.count && !run["partial"].get<bool>();
    if (run["resumption"].get<bool>()) exact = exact && run["resumed"] == c.count;
    CHECK(exact);
    CHECK(us(run["connect_us"]["min"]) >= rtt_us);
    CHECK(us(run["response_us"]["min"]) >= rtt_us);
    CHECK(us(run["total_us"]["min"]) >= (tls ? 3 : 2) * rtt_us);
    double handshake_us = us(run["connect_us"]["p50"]);
    if (tls) {
      CHECK(us(run["handshake_us"]["min"]) >= rtt_us);
      handshake_us += us(run["handshake_us"]["p50"]);
    }
    rows.push_back({c.name, variant, c.parallel, exact, handshake_us / 1000, seconds});
  }
}

// One handshake test's full and resumed handshakes (--handshakes, and each
// group of --compare-groups): TLS 1.3, full or resumed, is one round trip
// after the connect's.
bool check_handshake_pair(const json& h, std::uint64_t count, double rtt_us) {
  bool exact = true;
  for (const char* kind : {"full", "resumed"}) {
    CAPTURE(kind);
    const json& k = h[kind];
    exact = exact && k["count"] == count && k["resumed"] == (std::string(kind) == "resumed" ? count : 0);
    CHECK(us(k["handshake_us"]["min"]) >= 2 * rtt_us);
    CHECK(us(k["tls_us"]["min"]) >= rtt_us);
  }
  CHECK(exact);
  return exact;
}

void check_handshakes(const json& j, const Command& c, double rtt_us, std::vector<Row>& rows,
                      double seconds) {
  const json& h = j["handshakes"];
  REQUIRE(h.is_object());
  const bool exact = check_handshake_pair(h, c.count, rtt_us);
  for (const char* kind : {"full", "resumed"})
    rows.push_back({c.name, std::string("tls ") + kind, 1, exact,
                    us(h[kind]["handshake_us"]["median"]) / 1000, seconds});
}

void check_groups(const json& j, const Command& c, double rtt_us, std::vector<Row>& rows, double seconds) {
  const json& groups = j["groups"];
  REQUIRE(groups.size() >= 4);  // X25519 and the three NIST curves at least (BoringSSL has those alone)
  for (const json& note : j["notes"])
    CHECK(note.get<std::string>().find("fewer") == std::string::npos);
  for (const json& g : groups) {
    const std::string group = g["group"];
    CAPTURE(group);
    REQUIRE(g["error"].is_null());
    const bool exact = g["requested"] == c.count && check_handshake_pair(g, c.count, rtt_us);
    rows.push_back({c.name, group, 1, exact, us(g["full"]["handshake_us"]["median"]) / 1000, seconds});
  }
}

// Datagrams at a low rate: every one arrives, once; DTLS 1.2 takes a round
// trip for the cookie and two for the handshake.
void check_datagrams(const json& j, const Command& c, double rtt_us, std::vector<Row>& rows, double seconds) {
  const json& runs = j["datagram_runs"];
  REQUIRE(runs.size() == 1);
  const json& run = runs[0];
  const std::string mode = run["mode"];
  CAPTURE(mode);
  const bool exact = run["sent"] == c.count * c.parallel && run["received"] == c.count * c.parallel &&
                     run["lost"] == 0 && run["duplicates"] == 0 && !run["partial"].get<bool>();
  CHECK(exact);
  std::optional<double> handshake_ms;
  if (mode == "dtls") {
    CHECK(us(run["cookie_us"]) >= rtt_us);
    CHECK(us(run["handshake_us"]) >= (run["tls_version"] == "DTLSv1.2" ? 3 : 2) * rtt_us);
    handshake_ms = us(run["handshake_us"]) / 1000;
  }
  rows.push_back({c.name, mode, c.parallel, exact, handshake_ms, seconds});
}

std::string table(const std::vector<Row>& rows, double rtt_ms) {
  std::string text =
      "| kind | mode | round trip | -P | exact counts | handshake ms (median) | command s |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Row& r : rows) {
    text += fmt::format("| {} | {} | {:g} ms | {} | {} | {} | {:.1f} |\n", r.kind, r.mode, rtt_ms, r.parallel,
                        r.exact ? "yes" : "no", r.handshake_ms ? fmt::format("{:.1f}", *r.handshake_ms) : "-",
                        r.seconds);
  }
  return text;
}

void run_lab(double rtt_ms) {
  if (const std::string reason = cannot_run(); !reason.empty()) {
    skip(reason);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const TempDir dir;
  const std::vector<Command> commands = lab_commands();
  // A queue of 10000 packets each way: the lanes' bursts at once must not
  // crowd out each other's datagrams (drop-tail has a test of its own).
  const ProcessResult r = harness({"--delay", fmt::format("{:g}", rtt_ms), "--delay-limit", "10000",
                                   "--script", lab_script(commands, dir.path())},
                                  std::chrono::seconds(240));
  INFO("harness stderr: " << r.err);
  // The link exits 0 on SIGTERM with its counts, or the harness fails.
  REQUIRE(r.exit_code == 0);
  CHECK(std::regex_search(r.err,
                          std::regex(R"(tlscmp-delay: \S+ to \S+: \d+ packets \(\d+ bytes\) forwarded)")));

  std::vector<Row> rows;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const Command& c = commands[i];
    const std::string stem = (dir.path() / file_stem(i)).string();
    std::string command_line;
    for (const std::string& arg : c.command_line())
      command_line += " " + arg;
    CAPTURE(command_line);
    INFO("client stderr: " << read_file(stem + ".err"));
    REQUIRE(read_file(stem + ".rc") == "0\n");
    const json j = json::parse(read_file(stem + ".json"));
    CHECK(!j["interrupted"].get<bool>());
    CHECK(j["error"].is_null());
    const double seconds = std::stod(read_file(stem + ".ms")) / 1000;
    const double rtt_us = rtt_ms * 1000;
    switch (c.kind) {
      case Kind::bulk:
        check_bulk(j, c, rtt_us, rows, seconds);
        break;
      case Kind::rr:
        check_rr(j, c, rtt_us, rows, seconds);
        break;
      case Kind::rr_rate:
        check_rr(j, c, rtt_us, rows, seconds);
        for (const json& note : j["notes"])
          CHECK(note.get<std::string>().find("fell behind") == std::string::npos);
        break;
      case Kind::crr:
        check_crr(j, c, rtt_us, rows, seconds);
        break;
      case Kind::handshakes:
        check_handshakes(j, c, rtt_us, rows, seconds);
        break;
      case Kind::groups:
        check_groups(j, c, rtt_us, rows, seconds);
        break;
      case Kind::datagrams:
        check_datagrams(j, c, rtt_us, rows, seconds);
        break;
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::smatch link;
  std::regex_search(r.err, link, std::regex(R"(dropped before the link read them[^\n]*)"));
  fmt::print("The delay lab at {:g} ms ({:.1f} s, {}):\n{}", rtt_ms, wall_s,
             tlscmp::test::boringssl_build() ? "BoringSSL" : "OpenSSL", table(rows, rtt_ms));
  fmt::print("{}\n", link.empty() ? std::string() : link.str());
}

}  // namespace

TEST_CASE("the delay lab at a 60 ms round trip: every kind, exact counts, handshakes of whole round trips") {
  run_lab(60);
}

TEST_CASE("the delay lab at a 200 ms round trip: every kind, exact counts, handshakes of whole round trips") {
  run_lab(200);
}

TEST_CASE("tlscmp-delay: a bad argument is one line and exit 2, a namespace that is not there exit 1") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> mistakes{
      {{}, "--rtt-ms is missing (usage: tlscmp-delay --rtt-ms MS"},
      {{"--rtt-ms", "abc", "a:b", "c:d"}, "--rtt-ms: 'abc' is not a number from 0 to 600000"},
      {{"--rtt-ms", "-5", "a:b", "c:d"}, "--rtt-ms: '-5' is not a number from 0 to 600000"},
      {{"--rtt-ms", "10", "--limit", "0", "a:b", "c:d"}, "--limit: '0' is not a number from 1 to 1000000"},
      {{"--rtt-ms"}, "--rtt-ms needs a value"},
      {{"--rtt-ms", "10", "a:b"}, "two NETNS:DEVICE ends are needed"},
      {{"--rtt-ms", "10", "ab", "c:d"}, "'ab' is not NETNS:DEVICE"},
      {{"--rtt-ms", "10", "a:b", "c:d", "e:f"}, "'e:f': two ends only"},
      {{"--rtt-ms", "10", "a:b", "c:a-name-of-sixteen"},
       "'c:a-name-of-sixteen': a device name has at most 15 characters"},
      {{"--delay", "10", "a:b", "c:d"}, "unknown option '--delay'"},
  };
  for (const auto& [args, says] : mistakes) {
    std::vector<std::string> command{TLSCMP_DELAY_BINARY};
    command.insert(command.end(), args.begin(), args.end());
    CAPTURE(says);
    expect_failure(run_process(command), 2, "tlscmp-delay: " + says);
  }
  expect_failure(
      run_process({TLSCMP_DELAY_BINARY, "--rtt-ms", "10", "tlscmp-no-such-netns:a", "b:c"}), 1,
      "tlscmp-delay: network namespace /run/netns/tlscmp-no-such-netns: No such file or directory");
}

TEST_CASE("tlscmp-delay: a device that is not there is named, and a full queue drops the newest, counted") {
  if (const std::string reason = cannot_run(); !reason.empty()) {
    skip(reason);
    return;
  }
  {  // A namespace without the device: one line that says how to make it.
    const ProcessResult r = run_process({"/bin/bash", "-c",
                                         "ns=tlscmp-delay-test-$$; ip netns add $ns || exit 90; "
                                         "\"$0\" --rtt-ms 1 $ns:tun-none $ns:tun-none2; rc=$?; "
                                         "ip netns del $ns; exit $rc",
                                         TLSCMP_DELAY_BINARY});
    expect_failure(r, 1, "no device 'tun-none' in network namespace 'tlscmp-delay-test-");
    CHECK(r.err.find("(ip -n tlscmp-delay-test-") != std::string::npos);
  }
  // 3333 datagrams a second into a queue of 8 held 30 ms: about 270 a second
  // get through, and every one lost is one the link dropped and counted.
  const ProcessResult r =
      harness({"--delay", "60", "--delay-limit", "8", "--mode", "udp", "-n", "1000", "-b", "400K", "-J"},
              std::chrono::seconds(60));
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json run = json::parse(r.out)["datagram_runs"][0];
  const auto lost = run["lost"].get<std::uint64_t>();
  CHECK(run["sent"] == 1000);
  CHECK(run["received"].get<std::uint64_t>() + lost == 1000);
  CHECK(lost > 500);
  std::smatch dropped;
  REQUIRE(std::regex_search(
      r.err, dropped,
      std::regex(
          R"(tlscmp-delay: tlscmp-cli-\S+ to tlscmp-srv-\S+: \d+ packets \(\d+ bytes\) forwarded, (\d+) )"
          R"(dropped past the limit of 8, 0 refused by the kernel, \d+ still held at exit, at most 8 held)")));
  // The control connection's packets may have been dropped too, and sent again.
  CHECK(std::stoull(dropped[1].str()) >= lost);
  CHECK(r.err.find("dropped before the link read them (TUN tx_dropped): 0 from the server's side, 0 from the "
                   "client's") != std::string::npos);
}
