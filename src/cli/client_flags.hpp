#pragma once

// tlscmp client's flags, as typed, and what they make: a ClientCommand,
// checked. Internal to cli/.

#include <string>
#include <vector>

#include "cli/common_flags.hpp"
#include "cli/options.hpp"
#include "kinds/kind.hpp"
#include "spec/spec.hpp"

namespace tlscmp::cli {

// The client's flags: bound by CLI11 straight into the settings where a flag
// says one thing (kinds::KindFlags: the test and its parts, the TLS policy,
// the port ...), and as typed where what it means is to be worked out (-n
// counts bytes, datagrams or transactions, as the test's kind says).
struct ClientFlags : kinds::KindFlags {
  std::string target;    // HOST as typed: a name, an address, [IPv6] or [IPv6]:PORT
  std::string affinity;  // -A CLIENT[,SERVER]
  std::string start_at;  // --start-at TIME
  double skew_s = 0;     // --max-skew S; 0: not given
  std::string mode = "both";
  std::string bytes;   // -n; default: 1G, or 1000000 datagrams in datagram modes
  std::string length;  // -l; default: 64K, or 15 bytes in datagram modes (seeds/002)
  double time_s = 0;
  double interval_s = 0;
  std::string repeat;     // --repeat N or auto; "": 5 rounds (3 with --rr, --crr; 1 in datagram modes)
  double ci_target = 0;   // --ci-target PCT (with --repeat auto); 0: not given
  int max_rounds = 0;     // --max-rounds N (with --repeat auto); 0: not given
  double max_time_s = 0;  // --max-time S (with --repeat auto); 0: not given
  bool json = false;
  bool csv = false;
  bool json_stream = false;  // --json-stream
  std::string html;          // --html FILE
  bool window = false;       // -w gave both buffers
  // Each kind's own flags, as its entry added them: one given to a test of
  // another kind is refused by name.
  std::vector<CLI::Option*> kind_options;
};

void add_client_command(CLI::App& app, ClientFlags& flags);

// The settings a client's flags make, every mistake refused in one line.
ClientCommand to_client_command(const ClientFlags& flags);

}  // namespace tlscmp::cli
