#pragma once

// tlscmp client's flags, as typed, and what they make: a ClientCommand,
// checked. Internal to cli/.

#include <array>
#include <string>

#include "cli/common_flags.hpp"
#include "cli/options.hpp"
#include "spec/spec.hpp"

namespace tlscmp::cli {

struct ClientFlags {
  std::string host;
  std::string bind;       // -B
  std::string affinity;   // -A CLIENT[,SERVER]
  std::string start_at;   // --start-at TIME
  double max_skew_s = 0;  // --max-skew S; 0: not given
  int port = session::kDefaultPort;
  std::string mode = "both";
  std::string bytes;   // default: 1G, or 1000000 datagrams in datagram modes
  std::string length;  // default: 64K, or 15 bytes in datagram modes (seeds/002)
  std::string rate;    // -b, datagram modes
  double time_s = 0;
  double interval_s = 0;
  std::string ca_file;
  bool insecure = false;
  std::string repeat;     // --repeat N or auto; "": 5 rounds (3 with --rr, --crr; 1 in datagram modes)
  double ci_target = 0;   // --ci-target PCT (with --repeat auto); 0: not given
  int max_rounds = 0;     // --max-rounds N (with --repeat auto); 0: not given
  double max_time_s = 0;  // --max-time S (with --repeat auto); 0: not given
  int warmup = 0;
  bool json = false;
  bool csv = false;
  bool json_stream = false;  // --json-stream
  std::string html;          // --html FILE
  tls::Policy tls_policy;
  std::string cert_file;
  std::string key_file;
  bool compare_ciphers = false;
  std::string framing = "raw";
  // The test's fields that mean one thing in every kind, bound by CLI11
  // straight into it (-P, -R, -N, --bidir, --verify, --gso, --handshakes,
  // --compare-groups, --compare-key-types and the sizes); the flags above
  // are read as the kind says (-n counts bytes, datagrams or transactions).
  spec::Test test;
  bool window = false;  // -w gave both buffers
  std::string rr;       // --rr REQ/RESP
  std::string rr_rate;  // --rate, with --rr
  // The bare flags that ask for a kind, by TestKind (the table of kinds
  // names them: --crr); asked_for() reads them.
  std::array<bool, kAllKinds.size()> kind_flags{};
  std::string crr_close;  // --close reset|fin
  TimeoutFlags timeouts;
};

// Whether the client's flags name `kind`'s own flag (--crr).
inline bool asked_for(const ClientFlags& flags, TestKind kind) {
  return flags.kind_flags[static_cast<std::size_t>(kind)];
}

void add_client_command(CLI::App& app, ClientFlags& flags);

// The settings a client's flags make, every mistake refused in one line.
ClientCommand to_client_command(const ClientFlags& flags);

}  // namespace tlscmp::cli
