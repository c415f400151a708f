// tlscmp compare: two real results, made-up results with a known change, and
// files that are no results at all.

#include <fstream>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A bulk result as tlscmp writes it, cut to what compare reads, with these MB/s per tls run.
json made_up(const std::vector<double>& tls_mbytes_per_s, const std::string& cipher = "") {
  json runs = json::array();
  int round = 1;
  for (double mbps : tls_mbytes_per_s) {
    runs.push_back({{"variant", "tcp"},
                    {"round", round},
                    {"warmup", false},
                    {"partial", false},
                    {"mbytes_per_s", 2000.0}});
    runs.push_back({{"variant", "tls"},
                    {"round", round},
                    {"warmup", false},
                    {"partial", false},
                    {"mbytes_per_s", mbps}});
    ++round;
  }
  // A warm-up run that must not count, however slow.
  runs.push_back(
      {{"variant", "tls"}, {"round", 1}, {"warmup", true}, {"partial", false}, {"mbytes_per_s", 1.0}});
  return {{"tlscmp_version", "0.1.0"},
          {"test",
           {{"modes", {"tcp", "tls"}}, {"bytes", 1048576}, {"cipher", cipher}, {"host", "a"}, {"rounds", 5}}},
          {"environment",
           {{"client", {{"tls_library", "OpenSSL 3.0"}}}, {"server", {{"tls_library", "OpenSSL 3.0"}}}}},
          {"runs", runs}};
}

}  // namespace

TEST_CASE("compare two real results: every mode's figure, its change and a verdict") {
  TempDir dir;
  for (const char* name : {"base.json", "new.json"}) {
    const ProcessResult r = run_tlscmp({"client", "-n", "4M", "--repeat", "3", "-J"});
    REQUIRE(r.exit_code == 0);
    write(dir.file(name), r.out);
  }
  const ProcessResult r = run_tlscmp({"compare", dir.file("base.json"), dir.file("new.json"), "-J"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  // MB/s and each side's CPU per GiB, for tcp and tls.
  REQUIRE(j["figures"].size() == 6);
  std::vector<std::string> names;
  for (const json& f : j["figures"])
    names.push_back(f["figure"].get<std::string>() + " " + f["variant"].get<std::string>());
  CHECK(names == std::vector<std::string>{"MB/s tcp", "MB/s tls", "client CPU s/GiB tcp",
                                          "client CPU s/GiB tls", "server CPU s/GiB tcp",
                                          "server CPU s/GiB tls"});
  for (const json& f : j["figures"]) {
    CHECK(f["kind"] == "bulk");
    // A side's CPU over a 4 MiB run can be 0 (the clock did not tick): no change to measure from it.
    if (f["verdict"] == "no change to measure from a median of 0") continue;
    CHECK(f["base"]["count"] == 3);
    CHECK(f["new"]["count"] == 3);
    const double change = f["change_percent"];
    CHECK(f["ci95_low_percent"].get<double>() <= change);
    CHECK(f["ci95_high_percent"].get<double>() >= change);
    CHECK((f["verdict"] == "faster" || f["verdict"] == "slower" || f["verdict"] == "no significant change"));
  }
  CHECK(j["figures"][0]["variant"] == "tcp");
  CHECK(j["figures"][1]["variant"] == "tls");
  CHECK(j["failed"] == false);
  // rr results compare by transactions/s and latency.
  for (const char* name : {"rr-base.json", "rr-new.json"}) {
    const ProcessResult rr = run_tlscmp({"client", "--rr", "1/1", "-n", "2000", "--repeat", "2", "-J"});
    REQUIRE(rr.exit_code == 0);
    write(dir.file(name), rr.out);
  }
  const ProcessResult text = run_tlscmp({"compare", dir.file("rr-base.json"), dir.file("rr-new.json")});
  REQUIRE(text.exit_code == 0);
  for (const char* figure :
       {"transactions/s", "p50 latency us", "p99 latency us", "client CPU us/tx", "server CPU us/tx"})
    CHECK(text.out.find(figure) != std::string::npos);
  // crr results by connections/s, a connection's p50 and each side's CPU per connection.
  for (const char* name : {"crr-base.json", "crr-new.json"}) {
    const ProcessResult crr =
        run_tlscmp({"client", "--crr", "-n", "100", "--repeat", "2", "--mode", "tcp", "-J"});
    REQUIRE(crr.exit_code == 0);
    write(dir.file(name), crr.out);
  }
  const ProcessResult crr_text = run_tlscmp({"compare", dir.file("crr-base.json"), dir.file("crr-new.json")});
  REQUIRE(crr_text.exit_code == 0);
  for (const char* figure :
       {"connections/s", "p50 connection us", "client CPU us/conn", "server CPU us/conn"})
    CHECK(crr_text.out.find(figure) != std::string::npos);
}

TEST_CASE("a known drop is slower, and --fail-if-slower gates on it") {
  TempDir dir;
  write(dir.file("base.json"), made_up({1000, 1010, 990, 1005, 995}).dump());
  write(dir.file("new.json"), made_up({800, 808, 792, 804, 796}).dump());
  const ProcessResult r = run_tlscmp({"compare", dir.file("base.json"), dir.file("new.json"), "-J"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  const json& tls = j["figures"][1];
  CHECK(tls["variant"] == "tls");
  CHECK(tls["verdict"] == "slower");
  CHECK(tls["change_percent"].get<double>() == doctest::Approx(-20).epsilon(0.01));
  CHECK(tls["base"]["count"] == 5);                              // the warm-up run left out
  CHECK(j["figures"][0]["verdict"] == "no significant change");  // tcp: 2000 MB/s in both
  const ProcessResult gated =
      run_tlscmp({"compare", dir.file("base.json"), dir.file("new.json"), "--fail-if-slower", "10"});
  CHECK(gated.exit_code == 1);
  CHECK(gated.out.find("FAILED: slower by 10% or more") != std::string::npos);
  const ProcessResult lenient =
      run_tlscmp({"compare", dir.file("base.json"), dir.file("new.json"), "--fail-if-slower", "25"});
  CHECK(lenient.exit_code == 0);
  CHECK(lenient.out.find("passed: nothing slower by 25% or more") != std::string::npos);
}

TEST_CASE(
    "results of different settings are refused by name, unless --ignore, and non-results get one line") {
  TempDir dir;
  write(dir.file("base.json"), made_up({1000, 1010, 990}).dump());
  write(dir.file("aes128.json"), made_up({1100, 1110, 1090}, "TLS_AES_128_GCM_SHA256").dump());
  const ProcessResult refused = run_tlscmp({"compare", dir.file("base.json"), dir.file("aes128.json")});
  CHECK(refused.exit_code == 2);
  CHECK(is_one_line(refused.err));
  CHECK(
      refused.err.find("measured different things: cipher (default) vs TLS_AES_128_GCM_SHA256; compare them "
                       "anyway with --ignore cipher") != std::string::npos);
  const ProcessResult ignored =
      run_tlscmp({"compare", dir.file("base.json"), dir.file("aes128.json"), "--ignore", "cipher"});
  CHECK(ignored.exit_code == 0);
  CHECK(ignored.out.find("ignored (--ignore): cipher (default) vs TLS_AES_128_GCM_SHA256") !=
        std::string::npos);
  CHECK(ignored.out.find("faster") != std::string::npos);

  const std::string whole = made_up({1000, 1010, 990}).dump();
  write(dir.file("cut.json"), whole.substr(0, whole.size() / 2));
  write(dir.file("other.json"), R"({"hello": "world"})");
  expect_mistakes(
      "compare",
      {
          {{dir.file("base.json"), dir.file("cut.json")}, 2, "is not valid JSON (cut short?) at byte"},
          {{dir.file("base.json"), dir.file("other.json")}, 2, "is not a tlscmp result (no 'test' object)"},
          {{dir.file("base.json"), dir.file("missing.json")}, 2, "cannot read"},
          {{dir.file("base.json"), dir.file("aes128.json"), "--ignore", "colour"},
           2,
           "--ignore colour: not a setting"},
          {{dir.file("base.json")}, 2, "new is required"},
      });
}
