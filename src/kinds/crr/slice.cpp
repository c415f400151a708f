// The connection-per-transaction kind's entry in the table of kinds
// (kinds/kind.hpp), with its own variants: tls and tls-resumed, a tls
// variant per server key type (--compare-key-types) or per group
// (--compare-groups).

#include <fmt/format.h>

#include "kinds/crr/crr.hpp"
#include "kinds/variants.hpp"

#include "kinds/transactions.hpp"

namespace tlscmp::kinds {
namespace {
namespace crr_entry {

// --compare-key-types: the server certificates a crr comparison tries.
constexpr tls::KeyType kComparedKeyTypes[] = {tls::KeyType::rsa_2048, tls::KeyType::rsa_3072,
                                              tls::KeyType::ecdsa_p256, tls::KeyType::ecdsa_p384,
                                              tls::KeyType::ed25519};

// The tls variants of one round.
void add_tls_variants(const session::ClientConfig& config, const tls::ClientOptions& tls_config,
                      std::vector<session::Variant>& variants) {
  if (config.test.crr.compare_key_types) {
    for (tls::KeyType type : kComparedKeyTypes) {
      variants.emplace_back(Mode::tls, fmt::format("tls {}", tls::to_string(type)),
                            tls::Context::for_client(tls_config), std::nullopt, false, tls::to_string(type));
    }
  } else if (config.test.compare_groups) {
    // A group the server lacks is left out with a note, as --compare-groups
    // leaves it out of its table.
    for (const std::string& group : tls::available_groups()) {
      tls::ClientOptions one = tls_config;
      one.policy.groups = group;
      variants.emplace_back(Mode::tls, "tls " + group, tls::Context::for_client(one), std::nullopt);
      variants.back().optional = true;
    }
  } else {
    variants.push_back({Mode::tls, "tls", tls::Context::for_client(tls_config), std::nullopt});
    variants.push_back({Mode::tls, "tls-resumed", tls::Context::for_client(tls_config), std::nullopt, true});
  }
}

std::vector<session::Variant> variants(const session::ClientConfig& config,
                                       const tls::ClientOptions& tls_config,
                                       std::vector<std::string>& /*notes*/) {
  std::vector<session::Variant> variants;
  for (Mode mode : config.modes) {
    if (facts(mode).tls_over_tcp) {
      add_tls_variants(config, tls_config, variants);
    } else {
      variants.push_back(mode_variant(mode, tls_config));
      // A stack with a TLS handshake resumes a session from a ticket as TLS
      // does (QUIC: no early data in OpenSSL's): quic-resumed beside quic.
      if (is_tls_stream(mode) && !config.test.crr.compare_key_types && !config.test.compare_groups) {
        session::Variant resumed = mode_variant(mode, tls_config);
        resumed.label = std::string(to_string(mode)) + "-resumed";
        resumed.resume = true;
        variants.push_back(std::move(resumed));
      }
    }
  }
  return variants;
}

void run(const session::ClientRun& run, const session::Variant& variant, measure::Comparison& comparison) {
  const tls::Context* tls = variant.tls ? &*variant.tls : nullptr;
  session::keep_run<CrrResults>(
      comparison,
      run_crr_test(run.target, tls, {variant.mode, variant.resume, variant.key_type}, run.interrupt,
                   run.round, comparison.environment),
      variant, run);
}

std::string text_runs(const measure::Comparison& c) {
  return c.get<CrrResults>() != nullptr ? render_crr_runs(c) : std::string();
}

// "crr_runs" and "crr_summary".
void json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  out["crr_runs"] = crr_runs_json(c);
  out["crr_summary"] = crr_summary_json(c);
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  nlohmann::ordered_json runs = crr_runs_json(c);
  return runs.empty() ? nlohmann::ordered_json(nullptr) : runs.back();
}

// "crr" says whether the test is one, and --close is said of crr tests alone.
void parameters_json(const measure::TestParameters& p, nlohmann::ordered_json& out) {
  const bool crr = p.test.kind == TestKind::crr;
  if (!crr) out["crr_close"] = nullptr;
  out["crr"] = crr;
}

// rr's, closed loop and without --verify.
void check(const spec::Test& t, Mode) {
  if (t.rr.rate_tps > 0) throw spec::Invalid("--rate is for --rr; --crr is closed loop");
  check_transactions(t, "--crr");
  if (t.verify) throw spec::Invalid("--verify does not apply to --crr");
}
// What compare and merge read of its runs in a result file.
constexpr RunFigure kFigures[] = {
    {"connections/s", {"connections_per_s", nullptr}, true},
    {"p50 connection us", {"total_us", "p50"}, false},
    {"client CPU us/conn", {"client", "cpu_us_per_connection"}, false},
    {"server CPU us/conn", {"server", "cpu_us_per_connection"}, false},
};

// A test that check passes, every field of its part off its default.
spec::Test example() {
  spec::Test t;
  t.kind = TestKind::crr;
  t.streams = 2;
  t.rr = {10, 20, 40, 0};
  t.crr = {spec::Close::fin, true};
  return t;
}
// The connection stays the accepting thread's, which serves it whole.
void serve_connection(std::unique_ptr<Stream>& stream, session::PendingTests& pending, double& cpu_mark) {
  serve_crr_connection(*stream, pending, cpu_mark);
}

}  // namespace crr_entry
}  // namespace

const KindSlice kCrrKind{
    .kind = TestKind::crr,
    .over_udp_streams = true,
    .flag = "--crr",
    .flags_are_for = "--crr runs",
    .takes = "--crr takes --rr, -t, -n, -P, --close, --repeat, --warmup and the TLS flags",
    .add_flags = add_crr_flags,
    .configure = configure_crr,
    .key_types = true,
    .variants = crr_entry::variants,
    .run = crr_entry::run,
    .server_pin = false,
    .check = crr_entry::check,
    .example = crr_entry::example,
    .serve = serve_crr_test,
    .connection = protocol::ConnectionKind::crr,
    .serve_connection = crr_entry::serve_connection,
    .text_header = render_crr_header,
    .text_runs = crr_entry::text_runs,
    .json = crr_entry::json,
    .parameters_json = crr_entry::parameters_json,
    .last_run_json = crr_entry::last_run_json,
    .csv = render_crr_csv,
    .html_section = crr_html_section,
    .html_headline = crr_html_headline,
    .results = {"crr", "crr_runs", "connections", "connections", crr_entry::kFigures, "connections",
                "connections"},
};

}  // namespace tlscmp::kinds
