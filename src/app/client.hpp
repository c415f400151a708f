#pragma once

#include "app/config.hpp"
#include "measure/results.hpp"

namespace tlscmp::app {

// Runs the comparison: `rounds` rounds, each running every mode once in turn
// (tcp, tls, tcp, tls ...), against config.host or, without one, an embedded
// server on loopback with a throwaway certificate. Stops at the first failed
// run and says why in Comparison::error. Throws tlscmp::Error for failures
// before any run (bad certificate files, for instance).
measure::Comparison run_client(const ClientConfig& config);

}  // namespace tlscmp::app
