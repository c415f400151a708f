// Output that follows a run as it goes: the client's --json-stream, and the
// server's --results, a JSON line per test served.

#include <fstream>
#include <sstream>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    REQUIRE_NOTHROW(lines.push_back(json::parse(line)));
  }
  return lines;
}

}  // namespace

TEST_CASE("--json-stream writes a JSON object per line: start, each run and interval, then the end") {
  const ProcessResult r =
      run_tlscmp({"client", "--rr", "1/1", "-t", "0.5", "-i", "0.1", "--repeat", "2", "--json-stream"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<json> lines = json_lines(r.out);
  REQUIRE(lines.size() > 4);
  CHECK(lines.front()["event"] == "start");
  CHECK(lines.front()["test"]["rr_request_bytes"] == 1);
  CHECK(lines.back()["event"] == "end");
  int runs = 0;
  int intervals = 0;
  std::string current;
  for (const json& line : lines) {
    if (line["event"] == "run_start") current = line["run"];
    if (line["event"] == "interval") {
      ++intervals;
      CHECK(line["run"] == current);
      CHECK(line["end_s"].get<double>() > line["start_s"].get<double>());
      CHECK(line["transactions"].is_number_unsigned());
    }
    if (line["event"] == "run") {
      ++runs;
      CHECK(line["run"] == current);
      CHECK(line["result"]["transactions_per_s"].get<double>() > 0);
    }
  }
  CHECK(runs == 4);  // two rounds of tcp and tls
  CHECK(intervals >= 4 * 4);
  // The end line is the whole -J object.
  CHECK(lines.back()["rr_runs"].size() == 4);
  CHECK(lines.back()["rr_summary"]["tls"]["over_tcp"].is_object());

  const ProcessResult both = run_tlscmp({"client", "--json-stream", "-J"});
  CHECK(both.exit_code == 2);
  CHECK(is_one_line(both.err));
}

TEST_CASE("server --results appends a line per test: when, who, the settings and both sides' results") {
  TempDir dir;
  const std::string results = dir.file("results.jsonl");
  ServerProcess server({"--results", results});
  REQUIRE(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-n", "4M", "--repeat", "1", "--mode",
                      "tcp", "-P", "2"})
              .exit_code == 0);
  REQUIRE(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--crr", "-n", "50", "--repeat", "1",
                      "--mode", "tcp"})
              .exit_code == 0);
  // A test the server refuses is listed too, as refused.
  CHECK(run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "-n", "4M", "--repeat", "1", "--mode",
                    "tcp", "-A", ",8000"})
            .exit_code == 1);
  std::vector<json> lines = await_results(results, 3);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["kind"] == "stream");
  CHECK(lines[0]["outcome"] == "ok");
  CHECK(lines[0]["client_address"] == "127.0.0.1");
  CHECK(lines[0]["request"]["streams"] == 2);
  CHECK(lines[0]["request"]["bytes"] == 4 * 1024 * 1024);
  REQUIRE(lines[0]["server_results"].size() == 2);
  REQUIRE(lines[0]["client_results"].size() == 2);
  CHECK(lines[0]["server_results"][0]["bytes"] == 4 * 1024 * 1024);
  CHECK(lines[0]["time"].get<std::string>().size() == 24);  // 2026-12-01T01:02:03.456Z
  CHECK(lines[1]["kind"] == "crr");
  CHECK(lines[1]["server_results"][0]["connections"] == 50);
  CHECK(lines[1]["client_results"][0]["connections"] == 50);
  CHECK(lines[2]["outcome"] == "refused");
  CHECK(lines[2]["log"].get<std::string>().find("CPU 8000") != std::string::npos);

  // A file it cannot write: one line, and no server.
  const ProcessResult bad = run_tlscmp({"server", "-p", "0", "--results", dir.file("no/such/dir/r.jsonl")});
  CHECK(bad.exit_code == 1);
  CHECK(is_one_line(bad.err));
  CHECK(bad.err.find("--results") != std::string::npos);
  CHECK(bad.err.find("cannot open it to append to: No such file or directory") != std::string::npos);
}
