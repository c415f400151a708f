#pragma once

// What a comparison measured: one record per run, and the statistics over them.
// Plain values; src/report/ renders them, src/app/ fills them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/stats.hpp"
#include "test_kind.hpp"

namespace tlscmp::measure {

// One side's cost and socket settings during one run's transfer window.
struct SideCost {
  double cpu_user_s = 0;    // user CPU seconds of the thread that moved the data
  double cpu_system_s = 0;  // system CPU seconds of that thread
  int sndbuf_bytes = 0;     // SO_SNDBUF the kernel applied on the data socket
  int rcvbuf_bytes = 0;     // SO_RCVBUF the kernel applied on the data socket
};

// The TLS parameters one run negotiated; empty strings for plain TCP.
struct TlsParameters {
  std::string version;               // "TLSv1.3"
  std::string cipher;                // "TLS_AES_256_GCM_SHA384"
  std::string group;                 // key exchange group, "X25519"
  std::string certificate_key_type;  // server certificate key, "ECDSA P-256"
};

struct RunResult {
  int round = 0;  // 1-based; one round runs each mode once
  Mode mode = Mode::tcp;
  std::uint64_t bytes = 0;  // payload bytes the receiver counted
  double transfer_us = 0;   // receiver: from sending "go" to holding the last byte
  double sender_us = 0;     // sender: from receiving "go" to its last write returning
  double handshake_us = 0;  // client: TCP connect plus TLS handshake of the data connection
  TlsParameters tls;
  SideCost client;
  SideCost server;

  // Decimal megabytes (10^6 bytes) per second of transfer_us.
  double mbytes_per_s() const { return transfer_us > 0 ? static_cast<double>(bytes) / transfer_us : 0; }
};

struct ModeStats {
  Mode mode = Mode::tcp;
  Summary transfer_us;
  Summary sender_us;
  Summary handshake_us;
  Summary mbytes_per_s;
};

// Where the two ends ran. The server's half arrives in its test_accept message.
struct Environment {
  std::string client_version;
  std::string client_tls_library;
  std::string client_cpu_model;
  std::string client_kernel;
  std::string server_version;
  std::string server_tls_library;
  std::string server_cpu_model;
};

// What was asked for.
struct TestParameters {
  std::string host;  // as given, or 127.0.0.1 for the embedded server
  std::uint16_t port = 0;
  bool embedded_server = false;  // no host given: a server in this process on loopback
  std::vector<Mode> modes;       // the order of a round
  Direction direction = Direction::client_to_server;
  std::uint64_t bytes = 0;
  std::uint32_t chunk_bytes = 0;
  int rounds = 1;
  bool no_delay = false;
};

struct Comparison {
  TestParameters parameters;
  Environment environment;
  std::vector<RunResult> runs;
  std::vector<ModeStats> stats;  // one per mode that has runs, in parameters.modes order
  // TLS transfer time over TCP transfer time, one value per round that has both.
  std::optional<Summary> tls_over_tcp;
  std::string error;  // empty, or why the comparison stopped early
};

// Fills `stats` and `tls_over_tcp` from `runs`.
void compute_statistics(Comparison& comparison);

}  // namespace tlscmp::measure
