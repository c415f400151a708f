#pragma once

// tlscmp server's flags and the settings they make. Internal to cli/.

#include <string>

#include "cli/common_flags.hpp"

namespace tlscmp::cli {

// The server's flags, bound by CLI11 straight into its settings; two caps
// whose defaults follow from --max-clients stay apart until parsing is done.
struct ServerFlags {
  session::ServerConfig config;
  int max_clients_per_source = 0;  // 0: a quarter of --max-clients
  int max_connections = 0;         // 0: 4 x --max-clients, at least 512
};

void add_server_command(CLI::App& app, ServerFlags& flags);

// The server's settings, with the defaults that follow from other flags.
session::ServerConfig to_server_config(const ServerFlags& flags);

}  // namespace tlscmp::cli
