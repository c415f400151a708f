#include "app/speed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "error.hpp"
#include "measure/memory.hpp"
#include "tls/backend.hpp"
#include "tls/context.hpp"
#include "tls/speed.hpp"

namespace tlscmp::app {
namespace {

// A server and a client context over certificates of one key type, made
// for the measurement, the client trusting their CA and checking the name.
struct ContextPair {
  tls::Context server;
  tls::Context client;
};

class Contexts {
 public:
  explicit Contexts(const tls::Backend& backend) : backend_(backend) {}
  // The contexts for `key_type`, a client that offers `policy` (the server
  // offers its defaults, as `tlscmp server` does).
  ContextPair make(tls::KeyType key_type, const tls::Policy& policy) {
    const tls::CertificateSet& set = certificates(key_type);
    tls::ServerOptions server;
    server.identity = set.server;
    server.library = &backend_;
    tls::ClientOptions client;
    client.ca_pem = set.ca.certificate_chain_pem;
    client.policy = policy;
    client.library = &backend_;
    return {tls::Context::for_server(server), tls::Context::for_client(client)};
  }

 private:
  const tls::CertificateSet& certificates(tls::KeyType key_type) {
    auto it = made_.find(key_type);
    if (it == made_.end())
      it = made_.emplace(key_type, backend_.generate_certificates({}, 1, key_type, std::nullopt)).first;
    return it->second;
  }
  const tls::Backend& backend_;
  std::map<tls::KeyType, tls::CertificateSet> made_;
};

std::vector<tls::SpeedSuite> chosen_suites(const SpeedConfig& config) {
  if (config.suites.empty()) return tls::speed_suites();
  std::vector<tls::SpeedSuite> suites;
  for (const std::string& name : config.suites) {
    if (std::optional<tls::SpeedSuite> suite = tls::find_speed_suite(name)) suites.push_back(*suite);
  }
  return suites;
}

// Counts the figures as they start, for the progress line.
struct Steps {
  const SpeedProgress& progress;
  int total = 0;
  int done = 0;
  std::string library;  // where several are measured: the one being measured
  void next(const std::string& figure) {
    if (progress) progress(library.empty() ? figure : library + ": " + figure, ++done, total);
  }
};

void run_aead_figures(const SpeedConfig& config, const tls::Backend& backend, Steps& steps,
                      measure::SpeedResults& out) {
  for (const tls::SpeedSuite& suite : chosen_suites(config)) {
    for (std::uint32_t size : config.sizes) {
      steps.next(fmt::format("AEAD {} {} B", suite.name, size));
      out.aead.push_back(backend.measure_aead(suite, size, config.seconds));
    }
  }
}

// Bulk in memory with `suite`. A library that lets no client choose its
// TLS 1.3 suite (BoringSSL) is measured with what it chooses, where that is
// the suite; otherwise a note says what it chose.
void run_bulk_figure(const SpeedConfig& config, const tls::Backend& backend, const tls::SpeedSuite& suite,
                     measure::SpeedResults& out) {
  const tls::SuiteContexts contexts = tls::contexts_for_suite(backend, suite, std::nullopt, {});
  measure::MemoryBulkFigure figure = tls::measure_memory_bulk(
      contexts.client, contexts.server, {config.chunk_bytes, config.record_bytes, 0}, config.seconds);
  if (figure.suite == suite.name) {
    out.bulk.push_back(std::move(figure));
  } else {
    out.notes.push_back(fmt::format("bulk in memory: {} left out: {}; it chose {}", suite.name,
                                    contexts.refused.empty() ? "asked for, not negotiated" : contexts.refused,
                                    figure.suite));
  }
}

void run_bulk_figures(const SpeedConfig& config, const tls::Backend& backend, Steps& steps,
                      measure::SpeedResults& out) {
  for (const tls::SpeedSuite& suite : chosen_suites(config)) {
    steps.next(fmt::format("bulk in memory {}", suite.name));
    try {
      run_bulk_figure(config, backend, suite, out);
    } catch (const Error& e) {
      out.notes.push_back(fmt::format("bulk in memory: {}: {}", suite.name, e.what()));
    }
  }
}

void run_handshake_figure(Contexts& contexts, tls::KeyType key_type, const tls::Policy& policy,
                          double seconds, Steps& steps, measure::SpeedResults& out) {
  const ContextPair pair = contexts.make(key_type, policy);
  for (bool resumed : {false, true}) {
    steps.next(fmt::format("{} handshakes, {} {}", resumed ? "resumed" : "full", tls::to_string(key_type),
                           policy.groups.empty() ? "default group" : policy.groups));
    out.handshakes.push_back(tls::measure_handshakes(pair.client, pair.server, key_type, resumed, seconds));
  }
}

std::vector<tls::KeyType> chosen_key_types(const SpeedConfig& config) {
  return config.key_types.empty() ? tls::all_key_types() : config.key_types;
}

std::vector<std::string> chosen_groups(const SpeedConfig& config, const tls::Backend& backend) {
  return config.groups.empty() ? backend.available_groups() : config.groups;
}

void run_handshake_figures(const SpeedConfig& config, const tls::Backend& backend, Contexts& contexts,
                           Steps& steps, measure::SpeedResults& out) {
  const std::vector<tls::KeyType> key_types = chosen_key_types(config);
  for (tls::KeyType key_type : key_types)
    run_handshake_figure(contexts, key_type, {}, config.seconds, steps, out);
  // The groups with the key type given first, or the one `tlscmp certs` makes.
  const tls::KeyType group_key = config.key_types.empty() ? tls::KeyType::ecdsa_p256 : key_types.front();
  for (const std::string& group : chosen_groups(config, backend)) {
    const bool measured = std::any_of(out.handshakes.begin(), out.handshakes.end(), [&](const auto& f) {
      return f.group == group && f.key_type == tls::to_string(group_key);
    });
    if (measured) {  // the default group's row of that key type, already there
      steps.next(group);
      steps.next(group);
      continue;
    }
    tls::Policy policy;
    policy.groups = group;
    try {
      run_handshake_figure(contexts, group_key, policy, config.seconds, steps, out);
    } catch (const Error& e) {
      out.notes.push_back(fmt::format("handshakes with {}: {}", group, e.what()));
    }
  }
}

void run_memory_figures(const SpeedConfig& config, Contexts& contexts, Steps& steps,
                        measure::SpeedResults& out) {
  const ContextPair pair = contexts.make(tls::KeyType::ecdsa_p256, {});
  for (bool release : {false, true}) {
    steps.next(
        fmt::format("memory of {} idle sessions{}", config.sessions, release ? ", buffers released" : ""));
    measure::release_free_memory();
    out.memory.push_back(tls::measure_session_memory(pair.client, pair.server, release, config.sessions));
  }
}

// Every figure for one library.
measure::SpeedResults run_library(const SpeedConfig& config, const tls::Backend& backend, Steps& steps) {
  measure::SpeedResults out;
  out.library = backend.name();
  out.tls_library = backend.library_version();
  out.seconds_per_figure = config.seconds;
  Contexts contexts(backend);
  if (config.aead) run_aead_figures(config, backend, steps, out);
  if (config.bulk) run_bulk_figures(config, backend, steps, out);
  if (config.handshakes) run_handshake_figures(config, backend, contexts, steps, out);
  if (config.memory) run_memory_figures(config, contexts, steps, out);
  return out;
}

}  // namespace

std::vector<measure::SpeedResults> run_speed(const SpeedConfig& config, const SpeedProgress& progress) {
  std::vector<const tls::Backend*> libraries = config.libraries;
  if (libraries.empty()) libraries.push_back(&tls::default_backend());
  const auto suites = static_cast<int>(chosen_suites(config).size());
  Steps steps{progress, 0, 0, {}};
  for (const tls::Backend* backend : libraries) {
    const auto handshake_rows =
        static_cast<int>(chosen_key_types(config).size() + chosen_groups(config, *backend).size());
    steps.total += (config.aead ? suites * static_cast<int>(config.sizes.size()) : 0) +
                   (config.bulk ? suites : 0) + (config.handshakes ? 2 * handshake_rows : 0) +
                   (config.memory ? 2 : 0);
  }
  std::vector<measure::SpeedResults> results;
  for (const tls::Backend* backend : libraries) {
    steps.library = libraries.size() > 1 ? backend->name() : "";
    results.push_back(run_library(config, *backend, steps));
  }
  return results;
}

}  // namespace tlscmp::app
