// The seed workloads: message framing, socket buffers and read sizes,
// parallel streams, sweeps and their plots.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

TEST_CASE("len4 messages over TCP and TLS, verified, arrive whole and counted") {
  for (const char* size : {"10", "1400", "70000"}) {
    CAPTURE(size);
    const json j =
        client_json({"--framing", "len4", "--msg-size", size, "-n", "1M", "--repeat", "1", "--verify"});
    const std::uint64_t msg = std::stoull(size);
    const std::uint64_t messages = ((1u << 20) + msg - 1) / msg;
    REQUIRE(j["runs"].size() == 2);
    for (const json& run : j["runs"]) {
      CHECK(run["messages"] == messages);
      CHECK(run["payload_bytes"] == messages * msg);
      CHECK(run["bytes"] == messages * (msg + 4));  // each behind its 4-byte length
      CHECK(run["messages_per_s"].get<double>() > 0);
    }
    CHECK(j["summary"]["tls"]["messages_per_s"]["median"].get<double>() > 0);
  }
}

TEST_CASE("raw framing with a message size: the receiver cuts the stream, in both directions") {
  const json j = client_json({"--msg-size", "1000", "-n", "1M", "--repeat", "1", "--verify", "-R"});
  for (const json& run : j["runs"]) {
    CHECK(run["messages"] == 1049);  // 1 MiB in whole 1000-byte messages
    CHECK(run["bytes"] == 1049000);
  }
}

TEST_CASE("duration mode with messages ends on a message boundary") {
  const json j =
      client_json({"--framing", "len4", "--msg-size", "3000", "-t", "0.5", "--repeat", "1", "--verify"});
  for (const json& run : j["runs"])
    CHECK(run["bytes"].get<std::uint64_t>() == run["messages"].get<std::uint64_t>() * 3004);
}

TEST_CASE("a length prefix above --max-msg is an error naming the offset") {
  // The receiver (the client, -R) allows 1000 bytes; the server sends 2000-byte messages.
  const ProcessResult r = run_tlscmp({"client", "--framing", "len4", "--msg-size", "2000", "--max-msg",
                                      "2000", "-n", "100K", "--repeat", "1", "--mode", "tcp", "-R"});
  CHECK(r.exit_code == 0);
  ServerProcess server({"--max-msg", "1000"});
  const ProcessResult refused =
      run_tlscmp({"client", "127.0.0.1", "-p", server.port_text(), "--framing", "len4", "--msg-size", "2000",
                  "-n", "100K", "--repeat", "1", "--mode", "tcp"});
  CHECK(refused.exit_code == 1);
  CHECK(is_one_line(refused.err));
  CHECK(refused.err.find("length prefix of 2000 bytes at stream offset 0 is above --max-msg 1000") !=
        std::string::npos);
}

TEST_CASE("socket buffers and read size: asked for on both ends, applied sizes reported, differences noted") {
  const json j = client_json({"-w", "64K", "--read-size", "4K", "-n", "2M", "--repeat", "1", "--verify"});
  CHECK(j["test"]["sndbuf_bytes"] == 65536);
  CHECK(j["test"]["rcvbuf_bytes"] == 65536);
  CHECK(j["test"]["read_size"] == 4096);
  for (const json& run : j["runs"]) {
    for (const char* side : {"client", "server"}) {
      CAPTURE(side);
      // Linux doubles what is asked; either way it is no longer the default (megabytes here).
      CHECK(run[side]["sndbuf_bytes"].get<int>() <= 2 * 65536);
      CHECK(run[side]["rcvbuf_bytes"].get<int>() <= 2 * 65536);
      CHECK(run[side]["rcvbuf_bytes"].get<int>() >= 65536);
    }
  }
  bool noted = false;
  for (const json& note : j["notes"])
    noted = noted || note.get<std::string>().find("SO_RCVBUF 65536 asked for") == 0;
  CHECK(noted);
  const json separate = client_json({"--sndbuf", "32K", "--rcvbuf", "128K", "-n", "1M", "--repeat", "1"});
  CHECK(separate["runs"][0]["server"]["rcvbuf_bytes"].get<int>() >= 128 * 1024);
  CHECK(separate["runs"][0]["client"]["sndbuf_bytes"].get<int>() <= 2 * 32 * 1024);
}

TEST_CASE("-P 3: the totals are the sums of the streams, in both modes") {
  const json j = client_json({"-P", "3", "-n", "2M", "--repeat", "1", "--verify"});
  CHECK(j["test"]["streams"] == 3);
  for (const json& run : j["runs"]) {
    REQUIRE(run["streams"].size() == 3);
    std::uint64_t sum = 0;
    double longest = 0;
    for (const json& s : run["streams"]) {
      CHECK(s["bytes"] == 2 << 20);
      CHECK(s["direction"] == "client_to_server");
      sum += s["bytes"].get<std::uint64_t>();
      longest = std::max(longest, s["transfer_us"].get<double>());
    }
    CHECK(run["bytes"] == sum);
    CHECK(run["transfer_us"].get<double>() >= longest);  // from the first go to the last byte
  }
}

TEST_CASE("--bidir: both directions at once, each stream counted") {
  const json j = client_json({"--bidir", "-P", "4", "-n", "1M", "--repeat", "1", "--verify"});
  for (const json& run : j["runs"]) {
    REQUIRE(run["streams"].size() == 4);
    CHECK(run["streams"][0]["direction"] == "client_to_server");
    CHECK(run["streams"][1]["direction"] == "server_to_client");
    CHECK(run["bytes"] == 4 << 20);
  }
}

TEST_CASE("a small sweep prints a table, writes CSV and JSON, and the plot script makes a PNG of it") {
  TempDir dir;
  const std::string prefix = dir.file("sweep");
  const ProcessResult r = run_tlscmp({"sweep", "--msg-size", "10,1K", "--framing", "raw,len4", "-n", "256K",
                                      "--repeat", "2", "--out", prefix});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(
      r.out.find("| msg-size | tcp framing=raw | tls framing=raw | tcp framing=len4 | tls framing=len4 |") !=
      std::string::npos);
  CHECK(r.out.find("| 10 |") != std::string::npos);
  CHECK(r.out.find("| 1K |") != std::string::npos);

  std::ifstream csv(prefix + ".csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);)
    lines.push_back(line);
  REQUIRE(lines.size() == 1 + 4 * 2);  // 4 points, tcp and tls each
  CHECK(lines[0].rfind("msg-size,framing,variant,mode,runs,", 0) == 0);
  std::ifstream json_file(prefix + ".json");
  const json j = json::parse(json_file);
  CHECK(j["points"].size() == 4);
  CHECK(j["points"][3]["settings"]["framing"] == "len4");
  CHECK(j["points"][3]["comparison"]["runs"].size() == 4);

  const ProcessResult plot =
      run_process({"/usr/bin/python3", std::string(TLSCMP_SOURCE_DIR) + "/scripts/plot.py", prefix + ".csv"});
  INFO("plot: " << plot.out << plot.err);
  REQUIRE(plot.exit_code == 0);
  CHECK(std::filesystem::file_size(prefix + ".png") > 10000);
  CHECK(std::filesystem::file_size(prefix + ".svg") > 10000);
}

TEST_CASE("sweep values that cannot run together are refused before anything starts") {
  const ProcessResult r = run_tlscmp({"sweep", "--framing", "len4", "--read-size", "1K,2K"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("the point read-size=1K: --framing len4 needs --msg-size") != std::string::npos);
  const ProcessResult nothing = run_tlscmp({"sweep", "-n", "1K"});
  CHECK(nothing.exit_code == 2);
  const ProcessResult cipher = run_tlscmp({"sweep", "--mode", "tcp", "--cipher", "TLS_AES_128_GCM_SHA256"});
  CHECK(cipher.exit_code == 2);
  CHECK(cipher.err.find("a cipher needs the tls mode") != std::string::npos);
  const ProcessResult bad_size = run_tlscmp({"sweep", "--msg-size", "10,abc"});
  CHECK(bad_size.exit_code == 2);
  CHECK(bad_size.err.find("--msg-size 'abc'") != std::string::npos);
}

TEST_CASE("a sweep's list of one is judged with the swept values: len4 with swept message sizes runs") {
  TempDir dir;
  const ProcessResult r =
      run_tlscmp({"sweep", "--mode", "tcp", "-n", "64K", "--repeat", "1", "--framing", "len4", "--window",
                  "64K", "--msg-size", "100,1K", "--out", dir.file("s")});
  CHECK(r.exit_code == 0);
  const json j = json::parse(read_file(dir.file("s.json")));
  REQUIRE(j["points"].size() == 2);
  CHECK(j["points"][1]["settings"]["msg-size"] == "1K");
}
