// The handshake kind's client flag (--handshakes N), and what a handshake
// test makes of the flags every kind shares. --compare-groups, a field of
// the shared part (crr reads it too), asks for the kind as well.

#include <fmt/format.h>

#include <algorithm>

#include "kinds/flags.hpp"
#include "kinds/handshake/handshake.hpp"

namespace tlscmp::kinds {

std::vector<CLI::Option*> add_handshake_flags(CLI::App& cmd, KindFlags& flags) {
  return {cmd.add_option(
                 "--handshakes", flags.test.handshake.handshakes,
                 "Instead of bulk runs: N full and N resumed TLS handshakes, alternating, timed one by one")
              ->check(CLI::Range(1, static_cast<int>(spec::kMaxHandshakes / 2)))
              ->excludes(cmd.get_option("-t"))};
}

bool asked_for_handshakes(const session::ClientConfig& c) {
  return c.test.handshake.handshakes > 0 || c.test.compare_groups;
}

void configure_handshake(const SharedFlags& flags, session::ClientConfig& c) {
  if (c.test.handshake.handshakes > 0 && !c.encrypts()) {
    throw UsageError(
        fmt::format("--handshakes is for TLS, and --mode {} runs none: use --mode tls or both", flags.mode));
  }
  if (c.test.compare_groups && flags.time_s > 0)
    throw UsageError(
        "--compare-groups times a number of handshakes (--handshakes N), not -t; with --crr it runs for -t");
  if (c.client_cpu >= 0 || c.server_cpu >= 0) {
    throw UsageError(
        "-A pins the data threads of bulk, --rr, --crr and datagram runs; handshake tests have none");
  }
  if (std::any_of(c.modes.begin(), c.modes.end(), [](Mode m) { return facts(m).over_udp; })) {
    throw UsageError(fmt::format(
        "{} times TLS handshakes over TCP, not QUIC's: time those with --crr --mode quic (each connection's "
        "handshake apart), or leave quic out of --mode",
        c.test.compare_groups ? "--compare-groups without --crr" : "--handshakes"));
  }
  c.modes = {Mode::tls};  // tcp, tls or both: a handshake test runs TLS alone
}

}  // namespace tlscmp::kinds
