#pragma once

#include "session/config.hpp"

namespace tlscmp::app {

// `tlscmp certs`: writes ca.pem, server.pem, server.key, client.pem and
// client.key into config.dir (created if missing); keys are readable by the
// owner only. Throws tlscmp::Error.
void write_certificates(const session::CertsConfig& config);

// `tlscmp server`: serves until SIGINT or SIGTERM, logging to stderr.
// Throws tlscmp::Error if it cannot start.
void run_server(const session::ServerConfig& config);

}  // namespace tlscmp::app
