#include "app/client.hpp"

#include <sys/random.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>

#include "app/log.hpp"
#include "app/server.hpp"
#include "endpoint.hpp"
#include "kinds/crr/crr.hpp"
#include "kinds/datagram/datagram.hpp"
#include "kinds/handshake/handshake.hpp"
#include "kinds/rr/rr.hpp"
#include "kinds/stream/stream.hpp"
#include "measure/clock.hpp"
#include "measure/environment.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
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
    return config;
  }

  tls::CertificateSet certificates_;
  Logger quiet_{nullptr};
  Server server_;
  std::thread thread_;
};

// -w/--sndbuf/--rcvbuf: what the kernel applied, where it is not what was asked.
void note_buffer_sizes(measure::Comparison& comparison) {
  const auto* streams = comparison.get<measure::StreamResults>();
  if (streams == nullptr || streams->runs.empty()) return;
  const measure::RunResult& last = streams->runs.back();
  const measure::TestParameters& p = comparison.parameters;
  for (const auto& [option, asked, client, server] :
       {std::tuple{"SO_SNDBUF", p.sndbuf_bytes, last.client.sndbuf_bytes, last.server.sndbuf_bytes},
        std::tuple{"SO_RCVBUF", p.rcvbuf_bytes, last.client.rcvbuf_bytes, last.server.rcvbuf_bytes}}) {
    if (asked == 0) continue;
    const auto wanted = static_cast<int>(asked);
    if (client == wanted && server == wanted) continue;
    std::string why;
    if (client == 2 * wanted || server == 2 * wanted)
      why = "; Linux doubles what is asked, for its bookkeeping";
    if (client < 2 * wanted || server < 2 * wanted)
      why += "; less than asked is net.core.*mem_max capping it";
    comparison.notes.push_back(
        fmt::format("{} {} asked for, the kernel applied {} on the client and {} on the server{}", option,
                    asked, client, server, why));
  }
}

// --rate: where the runs fell short of the schedule, the server or the path
// could not keep up, and the latencies count the backlog. A run's window
// ends with its last response, one latency after the last request: the
// path's own round trip, which is no backlog, comes off (its fastest
// transaction's). Otherwise a 2 s run over a 200 ms round trip, every
// request sent and answered on time, would have fallen 10% short.
void note_rate_shortfall(measure::Comparison& comparison) {
  const auto* rr = comparison.get<measure::RrResults>();
  const double rate = comparison.parameters.rate_tps;
  if (rr == nullptr || rate <= 0) return;
  for (const measure::RrRun& run : rr->runs) {
    const double schedule_us = run.elapsed_us - run.latency.min;
    if (run.partial || schedule_us <= 0 ||
        static_cast<double>(run.transactions) / (schedule_us / 1e6) >= 0.95 * rate)
      continue;
    comparison.notes.push_back(fmt::format(
        "{} round {} made {:.0f} of the {:g} transactions/s asked: the server or the path fell behind the "
        "schedule, and its latencies count the backlog",
        run.label(), run.round, run.transactions_per_s(), rate));
  }
}

// -A: a side whose data threads did not hold the pin (a server of an older
// tlscmp ignores it; a CPU taken away since it was checked), once per side.
template <typename Results>
void note_unpinned(measure::Comparison& comparison, const session::ClientConfig& config) {
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
  bool resume = false;   // crr: offer the connector's previous session
  std::string key_type;  // crr --compare-key-types: the server certificate's key type
};

// --compare-ciphers: the TLS 1.3 suites, and the TLS 1.2 AEAD suites for
// either certificate type (ECDSA or RSA).
struct ComparedSuite {
  const char* label;
  const char* version;
  const char* cipher;
};
constexpr ComparedSuite kComparedSuites[] = {
    {"TLS_AES_128_GCM_SHA256", "1.3", "TLS_AES_128_GCM_SHA256"},
    {"TLS_AES_256_GCM_SHA384", "1.3", "TLS_AES_256_GCM_SHA384"},
    {"TLS_CHACHA20_POLY1305_SHA256", "1.3", "TLS_CHACHA20_POLY1305_SHA256"},
    {"TLSv1.2 AES128-GCM", "1.2", "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLSv1.2 AES256-GCM", "1.2", "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLSv1.2 CHACHA20", "1.2", "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"},
};

// --compare-key-types: the server certificates a crr comparison tries.
constexpr tls::KeyType kComparedKeyTypes[] = {tls::KeyType::rsa_2048, tls::KeyType::rsa_3072,
                                              tls::KeyType::ecdsa_p256, tls::KeyType::ecdsa_p384,
                                              tls::KeyType::ed25519};

// The report's account of the settings (the server used is added once known).
measure::TestParameters parameters_of(const session::ClientConfig& config) {
  measure::TestParameters p;
  p.command_line = config.command_line;
  p.modes = config.modes;
  p.direction = config.direction;
  p.bytes = config.bytes;
  p.duration_s = static_cast<double>(config.duration.count()) / 1e3;
  p.chunk_bytes = config.chunk_bytes;
  p.interval_s = static_cast<double>(config.interval.count()) / 1e3;
  p.rounds = config.rounds;
  p.auto_repeat = config.auto_repeat;
  p.start_at_ns = config.start_at_ns;
  p.max_skew_s = config.max_skew_s;
  p.warmup_rounds = config.warmup_rounds;
  p.no_delay = config.no_delay;
  p.verify = config.verify;
  p.ktls = config.tls_policy.ktls;
  p.tls_version = config.tls_policy.version;
  p.cipher = config.tls_policy.cipher;
  p.groups = config.tls_policy.groups;
  p.record_size = config.record_size;
  p.framing = framing::to_string(config.framing);
  p.msg_size = config.msg_size;
  p.read_size = config.read_size;
  p.sndbuf_bytes = config.sndbuf_bytes;
  p.rcvbuf_bytes = config.rcvbuf_bytes;
  p.streams = config.streams;
  p.bidir = config.bidir;
  p.packets = config.packets;
  p.rate_bps = config.rate_bps;
  p.gso = config.gso;
  p.rr_request_bytes = config.rr_request_bytes;
  p.rr_response_bytes = config.rr_response_bytes;
  p.transactions = config.transactions;
  p.rate_tps = config.rate_tps;
  p.kind = config.kind;
  p.crr_reset = config.crr_reset;
  p.compare_key_types = config.compare_key_types;
  return p;
}

// This host's half of the environment.
void note_client_host(measure::Environment& environment) {
  environment.client_version = kVersion;
  environment.client_tls_library = tls::library_version();
  environment.client_cpu_model = measure::cpu_model();
  environment.client_cpu_features = measure::cpu_crypto_features();
  environment.client_kernel = measure::kernel_description();
  tls::kernel_has_tls_ulp(environment.client_tls_ulps);
}

// What one round runs: tcp, and tls once or, with --compare-ciphers, once per
// suite (a suite this library cannot run is a note); udp and dtls.
std::vector<Variant> make_variants(const session::ClientConfig& config, const tls::ClientConfig& tls_config,
                                   std::vector<std::string>& notes) {
  std::vector<Variant> variants;
  for (Mode mode : config.modes) {
    if (mode == Mode::tcp || mode == Mode::udp) {
      variants.push_back({mode, to_string(mode), std::nullopt, std::nullopt});
    } else if (mode == Mode::dtls) {
      variants.push_back({mode, "dtls", std::nullopt, tls::DtlsContext::for_client(tls_config)});
    } else if (config.kind == TestKind::crr && config.compare_key_types) {
      for (tls::KeyType type : kComparedKeyTypes) {
        variants.emplace_back(Mode::tls, fmt::format("tls {}", tls::to_string(type)),
                              tls::Context::for_client(tls_config), std::nullopt, false,
                              tls::to_string(type));
      }
    } else if (config.kind == TestKind::crr && config.compare_groups) {
      for (const std::string& group : tls::available_groups()) {
        tls::ClientConfig one = tls_config;
        one.policy.groups = group;
        variants.emplace_back(Mode::tls, "tls " + group, tls::Context::for_client(one), std::nullopt);
      }
    } else if (config.kind == TestKind::crr) {
      variants.push_back({Mode::tls, "tls", tls::Context::for_client(tls_config), std::nullopt});
      variants.push_back(
          {Mode::tls, "tls-resumed", tls::Context::for_client(tls_config), std::nullopt, true});
    } else if (!config.compare_ciphers) {
      variants.push_back({Mode::tls, "tls", tls::Context::for_client(tls_config), std::nullopt});
    } else {
      bool any_tls13 = false;
      for (const auto& [label, version, cipher] : kComparedSuites) {
        tls::ClientConfig suite_config = tls_config;
        suite_config.policy.version = version;
        suite_config.policy.cipher = cipher;
        try {
          variants.push_back({Mode::tls, label, tls::Context::for_client(suite_config), std::nullopt});
          any_tls13 = any_tls13 || std::string_view(version) == "1.3";
        } catch (const Error& e) {
          notes.push_back(fmt::format("{} left out: {}", label, e.what()));
        }
      }
      if (!any_tls13) {
        // A library that picks TLS 1.3 suites itself still gets a TLS 1.3 row.
        tls::ClientConfig tls13 = tls_config;
        tls13.policy.version = "1.3";
        variants.push_back(
            {Mode::tls, "TLSv1.3 (library's choice)", tls::Context::for_client(tls13), std::nullopt});
      }
    }
  }
  return variants;
}

// A run's place in the comparison: its label, round and warm-up flag; a
// run Ctrl-C cut short (partial) ends the comparison.
template <typename Results, typename Run>
void keep_run(measure::Comparison& comparison, Run run, const std::string& label, int round, bool warmup) {
  run.variant = label;
  run.round = round;
  run.warmup = warmup;
  comparison.interrupted = run.partial;
  comparison.as<Results>().runs.push_back(std::move(run));
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
tls::ClientConfig client_tls_config(const session::ClientConfig& config) {
  tls::ClientConfig tls_config;
  tls_config.ca_file = config.ca_file;
  tls_config.insecure = config.insecure;
  tls_config.policy = config.tls_policy;
  if (!config.cert_file.empty()) tls_config.identity = tls::load_identity(config.cert_file, config.key_file);
  return tls_config;
}

// A handshake test: --compare-groups' table, or --handshakes N timed one by one.
void run_handshake_kind(const session::ClientConfig& target, const tls::ClientConfig& tls_config,
                        session::InterruptWatch& interrupt, measure::Comparison& comparison) {
  measure::TestParameters& parameters = comparison.parameters;
  if (target.compare_groups) {
    parameters.compare_groups = true;
    parameters.handshakes = target.handshakes > 0 ? target.handshakes : kinds::kGroupHandshakesPerRound;
    kinds::run_group_comparison(target, tls_config, interrupt, comparison);
    return;
  }
  parameters.handshakes = target.handshakes;
  try {
    const tls::Context tls = tls::Context::for_client(tls_config);
    const kinds::HandshakeTest test =
        kinds::run_handshake_test(target, target.handshakes, tls, interrupt, comparison.environment);
    comparison.results = measure::HandshakeResults{target.handshakes, test.kinds[0].summarize(),
                                                   test.kinds[1].summarize(), test.tls};
  } catch (const Error& e) {
    if (interrupt.interrupted()) {
      comparison.interrupted = true;
    } else {
      comparison.error = e.what();
    }
  }
}

// One TLS handshake per TLS variant before the first measured run (not
// timed, not counted), so that a TLS setting that cannot work fails in
// seconds rather than after a whole TCP run. With --crr --compare-groups, a
// group the server lacks is left out with a note, as --compare-groups leaves
// it out of its table. Returns false when the comparison ends here.
bool try_tls_variants(const session::ClientConfig& target, std::vector<Variant>& variants,
                      session::InterruptWatch& interrupt, measure::Comparison& comparison) {
  const bool optional_variants = target.kind == TestKind::crr && target.compare_groups;
  for (auto it = variants.begin(); it != variants.end();) {
    if (!it->tls) {
      ++it;
      continue;
    }
    try {
      (void)kinds::run_handshake_test(target, 1, *it->tls, interrupt, comparison.environment);
      ++it;
    } catch (const Error& e) {
      if (interrupt.interrupted()) {
        comparison.interrupted = true;
      } else if (optional_variants) {
        comparison.notes.push_back(fmt::format("{} left out: {}", it->label, e.what()));
        it = variants.erase(it);
        continue;
      } else {
        comparison.error = it->label == "tls" ? e.what() : fmt::format("{}: {}", it->label, e.what());
      }
      return false;
    }
  }
  comparison.parameters.variants.clear();  // those left
  for (const Variant& v : variants)
    comparison.parameters.variants.push_back(v.label);
  return true;
}

// What one round of the rounds loop needs to run a variant.
struct RunContext {
  const session::ClientConfig& target;
  session::InterruptWatch& interrupt;
  measure::TransferObserver* observer;
  std::uint64_t seed;
};

// One run of `variant` by the test's kind, kept in the comparison.
void run_variant(const RunContext& run, const Variant& variant, int round, bool warmup,
                 measure::Comparison& comparison) {
  const tls::Context* tls = variant.tls ? &*variant.tls : nullptr;
  measure::Environment& environment = comparison.environment;
  switch (run.target.kind) {
    case TestKind::datagram: {
      measure::DatagramRun result = kinds::run_datagram_test(
          run.target, variant.mode, variant.dtls ? &*variant.dtls : nullptr, run.interrupt, environment);
      result.partial = run.interrupt.interrupted();  // the senders stopped early
      keep_run<measure::DatagramResults>(comparison, std::move(result), variant.label, round, warmup);
      break;
    }
    case TestKind::crr:
      keep_run<measure::CrrResults>(
          comparison,
          kinds::run_crr_test(run.target, tls, {variant.mode, variant.resume, variant.key_type},
                              run.interrupt, round, environment),
          variant.label, round, warmup);
      break;
    case TestKind::rr:
      keep_run<measure::RrResults>(comparison,
                                   kinds::run_rr_test(run.target, tls, variant.mode, run.interrupt,
                                                      run.observer, run.seed, round, environment),
                                   variant.label, round, warmup);
      break;
    case TestKind::stream:
      keep_run<measure::StreamResults>(comparison,
                                       kinds::run_stream_test(run.target, tls, variant.mode, run.interrupt,
                                                              run.observer, run.seed, round, environment),
                                       variant.label, round, warmup);
      break;
    case TestKind::handshake:
      throw Error("a handshake test has no rounds of runs");  // run_handshake_kind runs it
  }
}

// Warm-up rounds first, then the measured ones; each round runs every
// variant in turn. --repeat auto: until the ratios' intervals are narrow enough.
void run_rounds(const RunContext& run, const std::vector<Variant>& variants,
                measure::Comparison& comparison) {
  const session::ClientConfig& config = run.target;
  const int total_rounds = config.warmup_rounds + config.rounds;
  std::int64_t measured_since_ns = 0;
  if (config.auto_repeat) comparison.auto_repeat = measure::AutoRepeatOutcome{*config.auto_repeat, 0, {}};
  for (int r = 0; r < total_rounds && comparison.error.empty() && !comparison.interrupted; ++r) {
    const bool warmup = r < config.warmup_rounds;
    const int round = warmup ? r + 1 : r - config.warmup_rounds + 1;
    if (!warmup && measured_since_ns == 0) measured_since_ns = measure::now_ns();
    for (const Variant& variant : variants) {
      if (run.observer != nullptr)
        run.observer->begin_run(
            run_label(variant.label, round, config.rounds, warmup, config.auto_repeat.has_value()));
      try {
        run_variant(run, variant, round, warmup, comparison);
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
  note_client_host(comparison.environment);

  std::optional<EmbeddedServer> embedded;
  tls::ClientConfig tls_config = client_tls_config(config);
  parameters.client_certificate = tls_config.identity.has_value();
  if (config.host.empty()) {
    embedded.emplace(config.timeouts, config.tls_policy.ktls);
    parameters.host = "127.0.0.1";
    parameters.port = embedded->port();
    parameters.embedded_server = true;
    if (config.ca_file.empty()) tls_config.ca_pem = embedded->ca_pem();
  } else {
    parameters.host = config.host;
    parameters.port = config.port;
  }

  std::vector<Variant> variants = make_variants(config, tls_config, comparison.notes);
  for (const Variant& v : variants)
    parameters.variants.push_back(v.label);
  session::ClientConfig target = config;  // with the server actually used
  target.host = parameters.host;
  target.port = parameters.port;
  if (config.kind == TestKind::handshake) {
    run_handshake_kind(target, tls_config, interrupt, comparison);
    return comparison;
  }
  if (!try_tls_variants(target, variants, interrupt, comparison)) return comparison;
  if (config.start_at_ns && !wait_for_start(target, interrupt, comparison)) return comparison;
  if (observer != nullptr) observer->begin_comparison(parameters);
  run_rounds({target, interrupt, observer, random_seed()}, variants, comparison);
  note_buffer_sizes(comparison);
  note_rate_shortfall(comparison);
  note_unpinned<measure::StreamResults>(comparison, config);
  note_unpinned<measure::RrResults>(comparison, config);
  note_unpinned<measure::DatagramResults>(comparison, config);
  measure::compute_statistics(comparison);
  return comparison;
}

}  // namespace tlscmp::app
