#include "kinds/variants.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <string_view>

#include "kinds/kind.hpp"
#include "stacks/stack.hpp"
#include "tls/backend.hpp"

namespace tlscmp::kinds {
namespace {

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

// --compare-ciphers' variants.
void add_suites(const tls::ClientOptions& tls_config, std::vector<session::Variant>& variants,
                std::vector<std::string>& notes) {
  bool any_tls13 = false;
  for (const auto& [label, version, cipher] : kComparedSuites) {
    tls::ClientOptions suite_config = tls_config;
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
    tls::ClientOptions tls13 = tls_config;
    tls13.policy.version = "1.3";
    variants.push_back(
        {Mode::tls, "TLSv1.3 (library's choice)", tls::Context::for_client(tls13), std::nullopt});
  }
}

}  // namespace

session::Variant mode_variant(Mode mode, const tls::ClientOptions& tls_config) {
  const stacks::Stack& stack = stacks::stack_of(mode);
  stacks::ClientContexts contexts;
  if (stack.client_contexts != nullptr) contexts = stack.client_contexts(tls_config);
  return {mode, to_string(mode), std::move(contexts.tls), std::move(contexts.dtls)};
}

std::vector<session::Variant> common_variants(const session::ClientConfig& config,
                                              const tls::ClientOptions& tls_config,
                                              std::vector<std::string>& notes) {
  std::vector<session::Variant> variants;
  for (Mode mode : config.modes) {
    if (facts(mode).tls_over_tcp && config.compare_ciphers) {
      add_suites(tls_config, variants, notes);
    } else {
      variants.push_back(mode_variant(mode, tls_config));
    }
  }
  return variants;
}

std::vector<tls::ClientOptions> library_options(const session::ClientConfig& config,
                                                const tls::ClientOptions& tls_config) {
  std::vector<tls::ClientOptions> out;
  for (const std::string& library : config.tls_policy.libraries) {
    tls::ClientOptions& options = out.emplace_back(tls_config);
    options.library = tls::find_backend(library);
    options.server_library =
        config.tls_policy.server_library.empty() ? library : config.tls_policy.server_library;
  }
  if (out.empty()) out.push_back(tls_config);
  return out;
}

namespace {

// The modes of `config` that another library than the first runs
// (ModeFacts::per_library), each it cannot run (its stack's
// refuse_library) left out with a note.
session::ClientConfig modes_of_library(const session::ClientConfig& config, const tls::Backend& library,
                                       const std::string& name, std::vector<std::string>& notes) {
  session::ClientConfig each = config;
  std::erase_if(each.modes, [&](Mode mode) {
    if (!facts(mode).per_library) return true;
    const stacks::Stack& stack = stacks::stack_of(mode);
    const std::string why = stack.refuse_library != nullptr ? stack.refuse_library(library) : std::string();
    if (!why.empty()) notes.push_back(fmt::format("{} {} left out: {}", to_string(mode), name, why));
    return !why.empty();
  });
  return each;
}

}  // namespace

std::vector<session::Variant> library_variants(const KindSlice& kind, const session::ClientConfig& config,
                                               const tls::ClientOptions& tls_config,
                                               std::vector<std::string>& notes) {
  const auto of_kind = [&](const session::ClientConfig& c, const tls::ClientOptions& o) {
    return kind.variants != nullptr ? kind.variants(c, o, notes) : common_variants(c, o, notes);
  };
  const std::vector<std::string>& libraries = config.tls_policy.libraries;
  if (libraries.empty()) return of_kind(config, tls_config);
  std::vector<session::Variant> variants;
  std::vector<std::string> said;  // which label runs which library, for the reader
  const std::vector<tls::ClientOptions> each = library_options(config, tls_config);
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    const tls::ClientOptions& options = each[i];
    // The other libraries run the stacks that run on each (TLS over TCP,
    // DTLS where the library has it; QUIC stays the first's).
    const session::ClientConfig mine =
        i == 0 ? config : modes_of_library(config, *options.library, libraries[i], notes);
    const auto per_library = [](Mode m) { return facts(m).per_library; };
    if (i > 0 && std::ranges::none_of(mine.modes, per_library)) {
      if (std::ranges::none_of(config.modes, per_library))  // else a note said why
        notes.push_back(
            fmt::format("--tls-lib {}: left out, as no mode of this run runs on it", libraries[i]));
      continue;
    }
    for (session::Variant& variant : of_kind(mine, options)) {
      if (i > 0 && !facts(variant.mode).per_library) continue;
      if (i > 0) variant.label += " " + libraries[i];
      variants.push_back(std::move(variant));
    }
    said.push_back(fmt::format("{}{}: {}{}", libraries[i], i == 0 ? " (the variants without a suffix)" : "",
                               options.library->library_version(),
                               options.server_library == libraries[i]
                                   ? " at both ends"
                                   : fmt::format(" against the server's {}", options.server_library)));
  }
  if (libraries.size() > 1 || !config.tls_policy.server_library.empty())
    notes.push_back(fmt::format("--tls-lib: {}", fmt::join(said, "; ")));
  return variants;
}

bool try_tls_variants(const session::ClientConfig& target, std::vector<session::Variant>& variants,
                      session::InterruptWatch& interrupt, measure::Comparison& comparison) {
  const auto kinds = all_kinds();
  const auto with_probe = std::ranges::find_if(kinds, [](const KindSlice* k) { return k->probe != nullptr; });
  const auto probe = with_probe != kinds.end() ? (*with_probe)->probe : nullptr;
  for (auto it = variants.begin(); it != variants.end();) {
    // The probe's connections are TCP ones: a stack over UDP (QUIC) shakes
    // hands with its first run.
    if (!it->tls || !facts(it->mode).tls_over_tcp || probe == nullptr) {
      ++it;
      continue;
    }
    try {
      probe(target, *it->tls, interrupt, comparison.environment);
      ++it;
    } catch (const Error& e) {
      if (interrupt.interrupted()) {
        comparison.interrupted = true;
      } else if (it->optional) {
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
  for (const session::Variant& v : variants)
    comparison.parameters.variants.push_back(v.label);
  return true;
}

}  // namespace tlscmp::kinds
