#pragma once

// Validated settings for each subcommand: src/cli/ fills them, src/app/ runs them.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framing/framing.hpp"
#include "measure/results.hpp"
#include "measure/stopping.hpp"
#include "mode.hpp"
#include "spec/spec.hpp"
#include "tls/identity.hpp"
#include "tls/policy.hpp"

namespace tlscmp::session {

inline constexpr std::uint16_t kDefaultPort = 5678;

// How long each blocking step may take.
struct Timeouts {
  std::chrono::milliseconds connect{10'000};    // TCP connect, name resolution included
  std::chrono::milliseconds handshake{10'000};  // TLS handshake and connection preamble
  std::chrono::milliseconds control{10'000};    // each control message
  std::chrono::milliseconds idle{30'000};       // no progress at all during a transfer
};

struct CertsConfig {
  std::string dir = "certs";
  std::vector<std::string> hosts;  // extra subjectAltNames for the server certificate
  int validity_days = 365;
  tls::KeyType key_type = tls::KeyType::ecdsa_p256;
  bool new_ca = false;  // make a new CA even where the directory holds one
};

struct ServerConfig {
  std::string bind_address;           // empty: every address, IPv6 and IPv4
  std::uint16_t port = kDefaultPort;  // 0: any free port (logged)
  std::string cert_file;              // both empty: a throwaway certificate
  std::string key_file;
  std::string issuer_dir;            // --issuer: ca.pem and ca.key, for certificates made per key type
  tls::Policy tls_policy;            // what the server accepts (version, suites, groups, kTLS)
  std::string client_ca_file;        // trust client certificates from these CAs
  bool require_client_cert = false;  // mutual TLS
  tls::Resumption resumption = tls::Resumption::tickets;  // --resumption tickets|ids|none
  Timeouts timeouts;
  // Connections handled at once (4 x --max-clients, at least 512); more are
  // turned away as busy. One source address may hold half of them (and at
  // least what the largest test needs), its running tests' connections
  // included, so that one host cannot lock the others out.
  int max_connections = 512;
  // Connections still being set up (accepted, and not yet a running test's,
  // a test's data connection or a handshake counted): at most this many in
  // all, and from one source address; more are turned away as busy.
  int max_pending = 256;
  int max_pending_per_source = 16;
  // --max-flows: the connections one many-connection test (--flows) may
  // hold. All such tests together hold no more than the descriptors the
  // process may open, less --max-connections and a reserve.
  int max_flows = 10'000;
  std::chrono::milliseconds preamble_timeout{2'000};  // a new connection's first byte, or it is closed
  std::string results_file;  // --results: a JSON line per test served, appended; "" for none
  // Caps on what one client may ask for; a test over a cap is refused with the reason.
  std::uint64_t max_bytes = std::uint64_t{1} << 40;   // --max-bytes: a test's payload (1 TiB)
  std::chrono::milliseconds max_duration{3'600'000};  // --max-duration: a test's transfer (1 h)
  int max_clients = 32;                               // --max-clients: tests running at once
  int max_clients_per_source = 8;                     // --max-clients-per-source: of them, from one address
  // The buffers a test holds on the server (its streams' chunks and the
  // messages they assemble), each test and all running tests together.
  std::uint64_t max_test_memory = std::uint64_t{256} << 20;  // --max-test-memory
  std::uint64_t max_memory = std::uint64_t{1} << 30;         // --max-memory
  // --min-rate: the bytes a second a running bulk or rr test must move,
  // counted over each --idle-timeout, or it fails (0: no floor).
  std::uint64_t min_rate = 1024;
  std::uint64_t max_msg = framing::kMaxMessageBytes;  // --max-msg: the largest message it assembles
  std::chrono::milliseconds shutdown_grace{10'000};   // SIGTERM: how long running tests may finish
};

// A client's settings: the test it runs and how (measure::Settings, which
// its result records as they are), and how this side connects.
struct ClientConfig : measure::Settings {
  std::string host;  // empty: start an embedded server on loopback
  std::uint16_t port = kDefaultPort;
  std::string bind_address;  // -B: the local address of the TCP connections, or ""
  // -B's addresses, where it gives a list or a range (--flows spreads its
  // connections over them); bind_address is then the first. Empty: one or none.
  std::vector<std::string> source_addresses;
  // -A CLIENT[,SERVER]: the CPU each side pins its data threads to; -1: none.
  int client_cpu = -1;
  int server_cpu = -1;
  // TLS
  std::string ca_file;
  bool insecure = false;
  std::string cert_file;  // a client certificate and key, for mutual TLS
  std::string key_file;
  bool compare_ciphers = false;  // run TLS once per suite (TLS 1.3 suites, TLS 1.2 AEADs)
  Timeouts timeouts;
  // --url: servers of another make to load (an HTTP server, for the http
  // kind), instead of a tlscmp server: no control connection, no embedded
  // server, the server's side unmeasured. `host` and `port` are the first's.
  std::vector<std::string> urls;
};

enum class OutputFormat { text, json, csv, json_stream };

}  // namespace tlscmp::session
