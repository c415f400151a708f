#pragma once

#include "measure/intervals.hpp"
#include "measure/results.hpp"
#include "session/config.hpp"

namespace tlscmp::app {

// Runs the comparison: `rounds` rounds, each running every mode once in turn
// (tcp, tls, tcp, tls ...), against config.host or, without one, an embedded
// server on loopback with a throwaway certificate. Stops at the first failed
// run and says why in Comparison::error. Throws tlscmp::Error for failures
// before any run (bad certificate files, for instance).
// `observer`, if given, watches each run's transfer on this side live. Ctrl-C
// (or SIGTERM) ends the comparison early with Comparison::interrupted set and
// the run under way reported as partial.
measure::Comparison run_client(const session::ClientConfig& config,
                               measure::TransferObserver* observer = nullptr);

}  // namespace tlscmp::app
