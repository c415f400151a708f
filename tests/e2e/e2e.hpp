#pragma once

// Shared helpers of the end-to-end tests: run the real binary, read its JSON.

#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protocol/messages.hpp"
#include "support/process.hpp"

namespace tlscmp::test {

inline ProcessResult run_tlscmp(std::vector<std::string> args,
                                std::chrono::seconds timeout = std::chrono::seconds(60)) {
  args.insert(args.begin(), tlscmp_binary());
  return run_process(args, timeout);
}

// Runs a client with -J and returns its JSON, requiring success.
inline nlohmann::json client_json(std::vector<std::string> args) {
  args.insert(args.begin(), {"client", "-J"});
  const ProcessResult r = run_tlscmp(args);
  // stderr first: its one line says why, where a long stdout may be cut.
  INFO("stderr: " << r.err);
  INFO("stdout: " << r.out);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// The flows run of `variant` in a client's JSON; fails the test if none.
inline const nlohmann::json& flows_run_of(const nlohmann::json& j, const std::string& variant) {
  for (const nlohmann::json& run : j["flows_runs"]) {
    if (run["variant"] == variant) return run;
  }
  FAIL("no run of " << variant);
  static const nlohmann::json none;
  return none;
}

// Whether the binary under test is built against BoringSSL, which cannot
// choose TLS 1.3 suites and has no kTLS.
inline bool boringssl_build() {
  static const bool boringssl = [] {
    const ProcessResult r =
        run_process({tlscmp_binary(), "client", "-n", "1", "--repeat", "1", "--mode", "tcp", "-J"});
    return r.out.find("\"tls_library\": \"BoringSSL") != std::string::npos;
  }();
  return boringssl;
}

// A CA and a server certificate made by `tlscmp certs`, in a directory of
// their own that goes with them.
struct Certs {
  TempDir dir;
  explicit Certs(const std::string& key_type = "ecdsa-p256") {
    REQUIRE(run_tlscmp({"certs", "--dir", dir.path().string(), "--key-type", key_type}).exit_code == 0);
  }
  std::string file(const char* name) const { return dir.file(name); }
  std::string ca() const { return dir.file("ca.pem"); }
  std::vector<std::string> server_args() const {
    return {"--cert", dir.file("server.pem"), "--key", dir.file("server.key")};
  }
};

// A latency summary's percentiles, those it has of min, p50, p90, p99, p999
// and max, in order, and the least above zero.
inline void check_latency_order(const nlohmann::json& l) {
  CHECK(l["min"].get<double>() > 0);
  double previous = 0;
  for (const char* key : {"min", "p50", "p90", "p99", "p999", "max"}) {
    if (!l.contains(key)) continue;
    CAPTURE(key);
    CHECK(l[key].get<double>() >= previous);
    previous = l[key].get<double>();
  }
}

// This build's preamble of a `kind` connection, as bytes to send by hand.
inline std::string preamble_text(protocol::ConnectionKind kind) {
  const protocol::Preamble preamble = protocol::encode_preamble(kind);
  return {reinterpret_cast<const char*>(preamble.data()), preamble.size()};
}

// The whole lines of a server's --results file once it holds `count` of them,
// or those it holds after 20 s. The server writes a test's line when the test
// is over on its side, which can be after its client has exited.
inline std::vector<nlohmann::json> await_results(const std::string& path, std::size_t count) {
  std::vector<nlohmann::json> lines;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (true) {
    lines.clear();
    const std::string text = read_file(path);
    std::istringstream in(text.substr(0, text.rfind('\n') + 1));
    for (std::string line; std::getline(in, line);)
      lines.push_back(nlohmann::json::parse(line));
    if (lines.size() >= count || std::chrono::steady_clock::now() > give_up) return lines;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Whether a client's test on the server at `port` runs, within 30 s: its
// one data connection is up beside the control connection, two established
// connections counted at both ends on loopback. Sanitizers and a loaded host
// can take most of a second to get there, so a stall or signal timed from
// the client's start could miss the run.
inline bool await_data_connection(std::uint16_t port) {
  for (int i = 0; i < 1500 && tcp_sockets_at(port, "01") < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return tcp_sockets_at(port, "01") >= 4;
}

// Whether `tlscmp --version` has a line that begins with `line` ("quic:
// yes"): what this build can do, read once.
inline bool version_says(const std::string& line) {
  static const std::string out = run_tlscmp({"--version"}).out;
  return out.rfind(line, 0) == 0 || out.find("\n" + line) != std::string::npos;
}

// The names of the backends `binary --version` lists ("openssl", "boringssl").
inline std::vector<std::string> tls_backends_of(const std::string& binary) {
  const ProcessResult r = run_process({binary, "--version"});
  std::vector<std::string> names;
  const std::size_t line = r.out.find("TLS backends: ");
  if (line == std::string::npos) return names;
  std::istringstream entries(r.out.substr(line + 14, r.out.find('\n', line) - line - 14));
  for (std::string entry; std::getline(entries, entry, ';');) {
    const std::size_t start = entry.find_first_not_of(' ');
    if (start == std::string::npos || entry.compare(start, 11, "not loaded:") == 0) continue;
    names.push_back(entry.substr(start, entry.find(':', start) - start));
  }
  return names;
}

inline bool is_one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

// A command that had to fail: `exit_code`, and one line on stderr that holds `needle`.
inline void expect_failure(const ProcessResult& r, int exit_code, const std::string& needle) {
  INFO("stdout: " << r.out);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == exit_code);
  CHECK(is_one_line(r.err));
  CHECK(r.err.find(needle) != std::string::npos);
}

// A mistake a user makes: the arguments after the subcommand, the exit code
// and what the one line on stderr says.
struct Mistake {
  std::vector<std::string> args;
  int exit_code;
  const char* says;
};

// `tlscmp COMMAND ARGS...` for each mistake: each fails as it says.
inline void expect_mistakes(const std::string& command, const std::vector<Mistake>& mistakes) {
  for (const Mistake& m : mistakes) {
    std::vector<std::string> args{command};
    args.insert(args.end(), m.args.begin(), m.args.end());
    CAPTURE(m.says);
    expect_failure(run_tlscmp(args), m.exit_code, m.says);
  }
}

}  // namespace tlscmp::test
