#pragma once

// `tlscmp compare BASE.json NEW.json`: what changed between two results
// (after an OpenSSL upgrade, a sysctl, a new NIC), figure by figure.

#include <optional>
#include <string>
#include <vector>

#include "measure/change.hpp"

namespace tlscmp::results {

struct CompareConfig {
  std::string base_path;
  std::string next_path;
  std::vector<std::string> ignore;       // --ignore: settings that may differ
  std::optional<double> fail_if_slower;  // --fail-if-slower PCT
};

// One figure of one variant, in both results.
struct ComparedFigure {
  std::string kind;     // the kind's label in its results (KindSlice::results)
  std::string variant;  // "tcp", "tls", "tls-resumed", a suite ...
  std::string figure;   // "MB/s", "transactions/s", "p99 latency us" ...
  measure::Change change;
};

// Who made a result: tlscmp and TLS library, on each side.
struct ResultOrigin {
  std::string path;
  std::string tlscmp_version;
  std::string client_tls_library;
  std::string server_tls_library;
  std::string kernel;  // the client's
};

struct CompareResult {
  ResultOrigin base;
  ResultOrigin next;
  std::vector<std::string> ignored;  // "cipher: TLS_AES_128_GCM_SHA256 vs TLS_AES_256_GCM_SHA384"
  std::vector<ComparedFigure> figures;
  std::vector<std::string> notes;  // variants in one result only, and the like
  std::optional<double> fail_if_slower;
  bool failed = false;  // --fail-if-slower: a figure slower by at least that much
};

// Reads both -J results and compares their runs that count (not warm-up,
// not interrupted). Throws UsageError, one line, for a file that is no
// tlscmp result, and for settings that differ (naming each, unless ignored).
CompareResult compare_results(const CompareConfig& config);

// The settings (the `test` object's fields) that say what was measured;
// those not among them (host, port, rounds ...) may differ freely.
std::vector<std::string> compared_settings();

}  // namespace tlscmp::results
