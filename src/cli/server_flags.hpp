#pragma once

// tlscmp server's flags, as typed, and the settings they make. Internal to cli/.

#include <string>

#include "cli/common_flags.hpp"

namespace tlscmp::cli {

struct ServerFlags {
  std::string results_file;
  std::string bind;
  int port = session::kDefaultPort;
  std::string cert_file;
  std::string key_file;
  std::string issuer_dir;
  tls::Policy tls_policy;
  std::string client_ca_file;
  bool require_client_cert = false;
  std::string resumption = "tickets";
  session::ServerConfig
      sizes;  // max_bytes, max_msg, the memory caps and min_rate, parsed by CLI11 (add_size)
  double max_duration_s = 3600;
  int max_clients = 32;
  int max_clients_per_source = 0;  // 0: a quarter of --max-clients
  int max_connections = 0;         // 0: 4 x --max-clients, at least 512
  int max_pending = 256;
  int max_pending_per_source = 16;
  double preamble_timeout_s = 2;
  double shutdown_grace_s = 10;
  TimeoutFlags timeouts;
};

void add_server_command(CLI::App& app, ServerFlags& flags);

// The server's settings, with the defaults that follow from other flags.
session::ServerConfig to_server_config(const ServerFlags& flags);

}  // namespace tlscmp::cli
