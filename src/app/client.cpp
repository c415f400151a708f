#include "app/client.hpp"

#include <sys/random.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>

#include "app/log.hpp"
#include "app/server.hpp"
#include "endpoint.hpp"
#include "kinds/kind.hpp"
#include "kinds/variants.hpp"
#include "measure/clock.hpp"
#include "measure/environment.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "tls/backend.hpp"
#include "tls/context.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"
#include "version.hpp"

namespace tlscmp::app {
namespace {

constexpr int kEmbeddedCertificateDays = 1;

// A server on loopback inside this process, with a certificate made for it.
class EmbeddedServer {
 public:
  EmbeddedServer(const session::Timeouts& timeouts, bool ktls)
      : certificates_(tls::generate_certificates({}, kEmbeddedCertificateDays)),
        server_(embedded_config(timeouts, ktls), certificates_.server, quiet_, certificates_.ca),
        thread_([this] { server_.run(); }) {}
  ~EmbeddedServer() {
    server_.stop();
    thread_.join();
  }
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  std::uint16_t port() const { return server_.port(); }
  const std::string& ca_pem() const { return certificates_.ca.certificate_chain_pem; }

 private:
  // Like a server started by hand with no options, but for --ktls, which
  // the client asks of both ends, and the caps: this server is the client's
  // own, so whatever the client may ask (-n up to 1P, -t up to its limit) runs.
  static session::ServerConfig embedded_config(const session::Timeouts& timeouts, bool ktls) {
    session::ServerConfig config;
    config.bind_address = "127.0.0.1";
    config.port = 0;
    config.timeouts = timeouts;
    config.tls_policy.ktls = ktls;
    config.max_bytes = protocol::kMaxTestBytes;
    config.max_duration = std::chrono::milliseconds(protocol::kMaxDurationMs);
    config.max_flows = static_cast<int>(spec::kMaxFlows);  // the client's descriptors bound them
    return config;
  }

  tls::CertificateSet certificates_;
  Logger quiet_{nullptr};
  Server server_;
  std::thread thread_;
};

// With a stack in --mode that some builds lack (quic, dtls): whether the
// server serves it, asked before any run, so that a server without it
// refuses before anything runs. A server that does not say (older, or
// unreachable: the first run says why) is given its runs.
bool server_serves_stacks(const session::ClientConfig& config, measure::Comparison& comparison) {
  if (std::none_of(config.modes.begin(), config.modes.end(),
                   [](Mode m) { return stacks::stack_of(m).unavailable != nullptr; }))
    return true;
  try {
    const protocol::ClockReply reply = session::ask_server(config);
    for (const auto& [mode, why] : reply.refused) {
      if (std::find(config.modes.begin(), config.modes.end(), mode) == config.modes.end()) continue;
      comparison.error = fmt::format("{}: refused: {}", to_string(mode), why);
      return false;
    }
  } catch (const Error&) {
    // Said by the first run, as for any other test.
  }
  return true;
}

// --start-at: this host's clock within --max-skew of the server's, then a
// wait until the time. False (the reason in the comparison) when it cannot start.
bool wait_for_start(const session::ClientConfig& config, session::InterruptWatch& interrupt,
                    measure::Comparison& comparison) {
  const std::int64_t start_ns = *config.start_at_ns;
  try {
    const double offset = session::server_clock_offset_s(config);
    comparison.clock_offset_s = offset;
    if (std::abs(offset) > config.max_skew_s) {
      comparison.error = fmt::format(
          "this host's clock is {:.3f} s {} the server's, more than --max-skew {:g}: synchronise the clocks "
          "(chrony, "
          "systemd-timesyncd), or raise --max-skew",
          std::abs(offset), offset > 0 ? "behind" : "ahead of", config.max_skew_s);
      return false;
    }
  } catch (const Error& e) {
    comparison.error = fmt::format("--start-at: {}", e.what());
    return false;
  }
  const double late_s = static_cast<double>(measure::wall_ns() - start_ns) / 1e9;
  if (late_s > config.max_skew_s) {
    comparison.error = fmt::format("--start-at passed {:.1f} s ago: give a time still to come", late_s);
    return false;
  }
  while (measure::wall_ns() < start_ns) {
    if (interrupt.interrupted()) {
      comparison.interrupted = true;
      return false;
    }
    const auto left = std::chrono::nanoseconds(start_ns - measure::wall_ns());
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(50)));
  }
  return true;
}

std::string run_label(const std::string& variant, int round, int rounds, bool warmup, bool auto_repeat) {
  if (warmup) return fmt::format("{} warm-up {}", variant, round);
  return auto_repeat ? fmt::format("{} {} (auto, up to {})", variant, round, rounds)
                     : fmt::format("{} {}/{}", variant, round, rounds);
}

// The report's account of the settings (the server used is added once known).
measure::TestParameters parameters_of(const session::ClientConfig& config) {
  measure::TestParameters p;
  static_cast<measure::Settings&>(p) = config;
  return p;
}

// This host's half of the environment: its libraries, those of --tls-lib ("; " between them).
void note_client_host(measure::Environment& environment, const std::vector<std::string>& libraries) {
  environment.client_version = kVersion;
  std::vector<std::string> versions;
  for (const std::string& name : libraries)
    versions.push_back(tls::find_backend(name)->library_version());
  environment.client_tls_library =
      versions.empty() ? tls::library_version() : fmt::format("{}", fmt::join(versions, "; "));
  environment.client_cpu_model = measure::cpu_model();
  environment.client_cpu_features = measure::cpu_crypto_features();
  environment.client_kernel = measure::kernel_description();
  tls::kernel_has_tls_ulp(environment.client_tls_ulps);
}

// A fresh seed per comparison, so that a stale or misrouted stream cannot pass.
std::uint64_t random_seed() {
  std::uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed)) {
    seed = static_cast<std::uint64_t>(measure::now_ns());
  }
  return seed;
}

// The TLS settings of the client's connections.
tls::ClientOptions client_tls_config(const session::ClientConfig& config) {
  tls::ClientOptions tls_config;
  tls_config.ca_file = config.ca_file;
  tls_config.insecure = config.insecure;
  tls_config.policy = config.tls_policy;
  if (!config.cert_file.empty()) tls_config.identity = tls::load_identity(config.cert_file, config.key_file);
  return tls_config;
}

// Warm-up rounds first, then the measured ones; each round runs every
// variant in turn. --repeat auto: until the ratios' intervals are narrow enough.
void run_rounds(const kinds::KindSlice& kind, session::ClientRun run,
                const std::vector<session::Variant>& variants, measure::Comparison& comparison) {
  const session::ClientConfig& config = run.target;
  const int total_rounds = config.warmup_rounds + config.rounds;
  std::int64_t measured_since_ns = 0;
  if (config.auto_repeat) comparison.auto_repeat = measure::AutoRepeatOutcome{*config.auto_repeat, 0, {}};
  for (int r = 0; r < total_rounds && comparison.error.empty() && !comparison.interrupted; ++r) {
    const bool warmup = r < config.warmup_rounds;
    const int round = warmup ? r + 1 : r - config.warmup_rounds + 1;
    if (!warmup && measured_since_ns == 0) measured_since_ns = measure::now_ns();
    run.round = round;
    run.warmup = warmup;
    for (const session::Variant& variant : variants) {
      if (run.observer != nullptr)
        run.observer->begin_run(
            run_label(variant.label, round, config.rounds, warmup, config.auto_repeat.has_value()));
      try {
        kind.run(run, variant, comparison);
        if (run.observer != nullptr) run.observer->end_run(comparison);
      } catch (const Error& e) {
        if (run.interrupt.interrupted()) {
          comparison.interrupted = true;
        } else {
          // Which run: "tls round 2: no data for 30 s after ...".
          comparison.error =
              fmt::format("{} {} {}: {}", variant.label, warmup ? "warm-up round" : "round", round, e.what());
        }
      }
      if (!comparison.error.empty() || comparison.interrupted) break;
    }
    if (comparison.auto_repeat && !warmup && comparison.error.empty() && !comparison.interrupted) {
      measure::AutoRepeatOutcome& outcome = *comparison.auto_repeat;
      outcome.rounds = round;
      measure::compute_statistics(comparison);
      outcome.decision =
          measure::should_stop(measure::headline_ratios(comparison), round,
                               measure::ns_to_us(measure::now_ns() - measured_since_ns) / 1e6, outcome.rule);
      if (outcome.decision.reason != measure::StopReason::none) break;
    }
  }
  if (comparison.auto_repeat) comparison.parameters.rounds = comparison.auto_repeat->rounds;
}

}  // namespace

measure::Comparison run_client(const session::ClientConfig& config, measure::TransferObserver* observer) {
  // First, before any thread starts: Ctrl-C must reach the watcher, not kill us.
  session::InterruptWatch interrupt;

  measure::Comparison comparison;
  comparison.parameters = parameters_of(config);
  measure::TestParameters& parameters = comparison.parameters;
  note_client_host(comparison.environment, config.tls_policy.libraries);

  std::optional<EmbeddedServer> embedded;
  tls::ClientOptions tls_config = client_tls_config(config);
  parameters.client_certificate = tls_config.identity.has_value();
  if (config.host.empty() && config.urls.empty()) {
    embedded.emplace(config.timeouts, config.tls_policy.ktls);
    parameters.host = "127.0.0.1";
    parameters.port = embedded->port();
    parameters.embedded_server = true;
    if (config.ca_file.empty()) tls_config.ca_pem = embedded->ca_pem();
  } else {
    parameters.host = config.host;
    parameters.port = config.port;
  }

  const kinds::KindSlice& kind = kinds::slice_of(config.test.kind);
  std::vector<session::Variant> variants =
      kinds::library_variants(kind, config, tls_config, comparison.notes);
  for (const session::Variant& v : variants)
    parameters.variants.push_back(v.label);
  session::ClientConfig target = config;  // with the server actually used
  target.host = parameters.host;
  target.port = parameters.port;
  if (kind.run_whole != nullptr) {
    // A kind that runs itself (--handshakes, --compare-groups) runs --tls-lib's libraries its own way.
    kind.run_whole(target, tls_config, interrupt, comparison);
    return comparison;
  }
  // A server of another make (--url) has no tlscmp to ask: its first run says what fails.
  if (config.urls.empty() && !server_serves_stacks(target, comparison)) return comparison;
  if (config.urls.empty() && !kinds::try_tls_variants(target, variants, interrupt, comparison))
    return comparison;
  if (config.start_at_ns && !wait_for_start(target, interrupt, comparison)) return comparison;
  if (observer != nullptr) observer->begin_comparison(parameters);
  run_rounds(kind, {target, interrupt, observer, random_seed()}, variants, comparison);
  if (kind.notes != nullptr) kind.notes(config, comparison);
  measure::compute_statistics(comparison);
  return comparison;
}

}  // namespace tlscmp::app
