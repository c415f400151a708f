#pragma once

// Handshake tests (--handshakes, --compare-groups): the figures of each sort
// of handshake, per group.

#include "kinds/results.hpp"

namespace tlscmp::kinds {

// The statistics of one sort of handshake (full, or resumed) in a handshake test (--handshakes N).
struct HandshakeStats {
  Summary handshake_us;  // TCP connect plus TLS handshake, as handshake_us of a run
  Summary tls_us;        // the TLS handshake alone
  Summary
      bytes_received;  // TLS bytes the client read during the handshake (a full one carries the certificate)
  Summary bytes_sent;  // TLS bytes the client wrote during the handshake
  std::size_t resumed = 0;     // how many the server really resumed
  Summary client_hello_bytes;  // bytes of the ClientHello message(s) the client sent
  Summary server_hello_bytes;  // bytes of the ServerHello message(s) it received
  // Handshakes per second one client makes, one after another: 1e6 / mean handshake_us.
  double per_second() const { return handshake_us.mean > 0 ? 1e6 / handshake_us.mean : 0; }
};

// The values behind a HandshakeStats, one per handshake, gathered over one or
// more handshake tests (--compare-groups runs one per group per round).
struct HandshakeSamples {
  std::vector<double> handshake_us;
  std::vector<double> tls_us;
  std::vector<double> bytes_received;
  std::vector<double> bytes_sent;
  std::vector<double> client_hello_bytes;
  std::vector<double> server_hello_bytes;
  std::size_t resumed = 0;

  void add(const HandshakeSamples& more);
  HandshakeStats summarize() const;
};

struct HandshakeResults {
  int requested = 0;  // N
  HandshakeStats full;
  HandshakeStats resumed;
  TlsParameters tls;  // of the last full handshake; tls.library: --tls-lib's name ("" without it)
};

// --handshakes: one library's results each, --tls-lib's first first (one
// without --tls-lib).
struct HandshakeLibraries {
  std::vector<HandshakeResults> libraries;
};

// --compare-groups: handshake tests with one key exchange group each (and
// one library: --tls-lib's name, "" without it).
struct GroupHandshakes {
  std::string group;  // as --groups takes it: "X25519MLKEM768"
  std::string library;
  std::optional<HandshakeResults> results;  // none when its handshakes failed
  std::string error;                        // why, e.g. the server does not have the group
};

// A group's figures over X25519's: > 1 means more (faster, slower, bigger).
struct GroupRatios {
  double full_per_second = 0;
  double resumed_per_second = 0;
  double full_tls_us_median = 0;  // the TLS handshake alone, medians
  double resumed_tls_us_median = 0;
  double client_hello_bytes = 0;  // medians
  double server_hello_bytes = 0;
};

// The X25519 row's results of `library`, the baseline of its rows' ratios;
// nullptr if it has none.
const HandshakeResults* group_baseline(const std::vector<GroupHandshakes>& groups,
                                       const std::string& library);

GroupRatios group_ratios(const HandshakeResults& group, const HandshakeResults& x25519);

// --compare-groups: one row per key exchange group.
struct GroupResults {
  std::vector<GroupHandshakes> groups;
};

}  // namespace tlscmp::kinds
