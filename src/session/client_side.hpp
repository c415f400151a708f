#pragma once

// What a test kind's client half is given for a run, beside the settings:
// the variant to run (a mode and its TLS or DTLS context), the round, the
// interrupt watch, the live observer and --verify's seed. The counterpart of
// session/server_side.hpp; app/ fills it and runs a kind through its table
// entry (kinds/kind.hpp).

#include <fmt/format.h>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "measure/results.hpp"
#include "session/config.hpp"
#include "session/interrupt.hpp"
#include "tls/backend.hpp"
#include "tls/context.hpp"
#include "tls/dtls.hpp"

namespace tlscmp::session {

// One kind of run in a round: plain TCP, or TLS with its own context.
struct Variant {
  Variant(Mode m, std::string l, std::optional<tls::Context> t, std::optional<tls::DtlsContext> d,
          bool r = false, std::string k = {})
      : mode(m),
        label(std::move(l)),
        tls(std::move(t)),
        dtls(std::move(d)),
        resume(r),
        key_type(std::move(k)) {}
  Mode mode;
  std::string label;
  std::optional<tls::Context> tls;
  std::optional<tls::DtlsContext> dtls;
  bool resume = false;           // crr: offer the connector's previous session
  std::string key_type;          // crr --compare-key-types: the server certificate's key type
  bool optional = false;         // left out with a note, not an error, where its trial handshake fails
  bool release_buffers = false;  // flows: tls-release, SSL_MODE_RELEASE_BUFFERS at both ends
};

// The TLS libraries a variant's runs shake hands with, as --tls-lib names
// them: its context's (TLS or DTLS), and the one it asks the server for
// ("": the server's default). Neither where it has no such context.
inline std::pair<std::string, std::string> libraries_of(const Variant& variant) {
  if (variant.tls) return {variant.tls->backend().name(), variant.tls->server_library()};
  if (variant.dtls) return {variant.dtls->backend().name(), variant.dtls->server_library()};
  return {};
}

// One run of a variant: where it stands in the rounds, and what it runs with.
struct ClientRun {
  const ClientConfig& target;  // with the server actually used
  InterruptWatch& interrupt;
  measure::TransferObserver* observer;  // may be null
  std::uint64_t seed;                   // --verify's patterns
  int round = 0;                        // 1-based, warm-up rounds too
  bool warmup = false;
};

// A run's place in the comparison: its label, round and warm-up flag, its
// libraries; a run Ctrl-C cut short (partial) ends the comparison.
template <typename Results, typename Run>
void keep_run(measure::Comparison& comparison, Run run, const Variant& variant, const ClientRun& where) {
  run.variant = variant.label;
  std::tie(run.tls.library, run.tls.server_library) = libraries_of(variant);
  run.round = where.round;
  run.warmup = where.warmup;
  comparison.interrupted = run.partial;
  comparison.as<Results>().runs.push_back(std::move(run));
}

// -A: a side whose data threads did not hold the pin (a server of an older
// tlscmp ignores it; a CPU taken away since it was checked), once per side.
template <typename Results>
void note_unpinned(measure::Comparison& comparison, const ClientConfig& config) {
  const Results* results = comparison.get<Results>();
  if (results == nullptr) return;
  for (const bool server : {false, true}) {
    const int cpu = server ? config.server_cpu : config.client_cpu;
    if (cpu < 0) continue;
    for (const auto& run : results->runs) {
      if (run.partial || (server ? run.server : run.client).facts.pinned_cpu == cpu) continue;
      comparison.notes.push_back(
          fmt::format("-A: the {}'s data threads were not pinned to CPU {} ({} round {} and maybe others){}",
                      server ? "server" : "client", cpu, run.label(), run.round,
                      server ? "; a server older than this client ignores -A" : ""));
      break;
    }
  }
}

}  // namespace tlscmp::session
