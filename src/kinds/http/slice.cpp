// The http kind's entry in the table of kinds (kinds/kind.hpp).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "framing/http3.hpp"
#include "kinds/http/http.hpp"
#include "kinds/transactions.hpp"
#include "kinds/variants.hpp"
#include "session/client_side.hpp"

namespace tlscmp::kinds {
namespace {
namespace http_entry {

void run(const session::ClientRun& run, const session::Variant& variant, measure::Comparison& comparison) {
  const tls::Context* tls = variant.tls ? &*variant.tls : nullptr;
  session::keep_run<HttpResults>(
      comparison,
      run_http_test(run.target, tls, variant.mode, run.interrupt, run.round, comparison.environment), variant,
      run);
}

// tcp and tls as every kind's, the TLS contexts offering the version's
// ALPN protocol ("h2", "http/1.1"), as HTTP clients do and servers expect.
std::vector<session::Variant> variants(const session::ClientConfig& config,
                                       const tls::ClientOptions& tls_config,
                                       std::vector<std::string>& notes) {
  tls::ClientOptions offering = tls_config;
  offering.alpn = {config.test.http.version >= 2 ? "h2" : "http/1.1"};  // --http 3: HTTP/2 over tls
  return config.urls.empty() ? common_variants(config, offering, notes) : url_variants(config, offering);
}

// --url: what was loaded, and what is not measured there.
void notes(const session::ClientConfig& config, measure::Comparison& comparison) {
  if (config.urls.empty()) return;
  comparison.notes.push_back(fmt::format(
      "--url {}: a server of another make; this side's figures alone (its CPU and its side of each "
      "request are not measured)",
      fmt::join(config.urls, ", ")));
}

std::string text_runs(const measure::Comparison& c) {
  return c.get<HttpResults>() != nullptr ? render_http_runs(c) : std::string();
}

// "http_runs" and "http_summary", in an http test's report alone.
void json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  if (c.get<HttpResults>() == nullptr) return;
  out["http_runs"] = http_runs_json(c);
  out["http_summary"] = http_summary_json(c);
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  if (c.get<HttpResults>() == nullptr) return nullptr;
  nlohmann::ordered_json runs = http_runs_json(c);
  return runs.empty() ? nlohmann::ordered_json(nullptr) : runs.back();
}

std::string csv(const measure::Comparison& c) {
  return c.get<HttpResults>() != nullptr ? render_http_csv(c) : std::string();
}

// What an HTTP test needs of its parts, over `mode`.
void check(const spec::Test& t, Mode mode) {
  if (t.http.version < 1 || t.http.version > 3) throw spec::Invalid("--http takes 1.1, 2 or 3");
  if (facts(mode).over_udp) {
    if (!facts(mode).streams)
      throw spec::Invalid(fmt::format("--http runs over tcp, tls and quic, not {}", to_string(mode)));
    if (t.http.version != 3) throw spec::Invalid("HTTP over QUIC is HTTP/3: give --http 3");
    if (std::string why; !framing::has_http3(&why)) throw spec::Invalid(why);
    if (t.http.requests_per_connection != 0)
      throw spec::Invalid("--requests-per-connection runs HTTP/1.1 and 2; HTTP/3 is kept alive");
  }
  if ((t.rr.transactions == 0) == (t.duration_ms == 0))
    throw spec::Invalid("--http runs -n requests or for -t seconds: give one");
  if (t.rr.rate_tps > 0 && t.duration_ms == 0)
    throw spec::Invalid("--rate needs -t: an open-loop run goes for a time");
  if (t.rr.transactions != 0 && t.rr.transactions < t.streams)
    throw spec::Invalid(fmt::format("-n {}: fewer requests than connections (-P {}); each makes one at least",
                                    t.rr.transactions, t.streams));
  if (t.http.version == 1 && t.http.streams > 1)
    throw spec::Invalid("--streams is HTTP/2's requests in flight; HTTP/1.1 makes one at a time (--http 2)");
}

spec::Test example() {
  spec::Test t;
  t.kind = TestKind::http;
  t.streams = 2;
  t.rr.request_bytes = 64;
  t.rr.response_bytes = 4096;
  t.rr.transactions = 100;
  t.http = {2, 10};
  return t;
}

// HTTP/2 first, as servers prefer it where a client offers both.
constexpr const char* kAlpn[] = {"h2", "http/1.1"};

constexpr RunFigure kFigures[] = {
    {"requests/s", {"requests_per_s", nullptr}, true},
    {"p50 latency us", {"latency_us", "p50"}, false},
    {"p99 latency us", {"latency_us", "p99"}, false},
    {"client CPU us/request", {"client", "cpu_us_per_request"}, false},
    {"server CPU us/request", {"server", "cpu_us_per_request"}, false},
};

}  // namespace http_entry
}  // namespace

const KindSlice kHttpKind{
    .kind = TestKind::http,
    .over_udp_streams = true,
    .flag = "--http",
    .flags_are_for = "HTTP tests (--http 1.1|2|3)",
    .takes =
        "--http takes -t, -n, -P, --streams (HTTP/2 and 3), --request, --response, --url, "
        "--requests-per-connection, "
        "--resume-ratio, --rate, --repeat, --warmup and the TLS flags",
    .add_flags = add_http_flags,
    .configure = configure_http,
    .variants = http_entry::variants,
    .run = http_entry::run,
    .notes = http_entry::notes,
    .refusal = transactions_refusal,
    .check = http_entry::check,
    .example = http_entry::example,
    .serve = serve_http_test,
    .connection = protocol::ConnectionKind::http,
    .serve_connection = serve_http_connection,
    .claims = claims_http,
    .alpn = http_entry::kAlpn,
    .serve_foreign = serve_foreign_http,
    .text_header = render_http_header,
    .text_runs = http_entry::text_runs,
    .json = http_entry::json,
    .last_run_json = http_entry::last_run_json,
    .csv = http_entry::csv,
    .html_section = http_html_section,
    .html_headline = http_html_headline,
    .results = {"http", "http_runs", "requests", "requests", http_entry::kFigures, "messages", "requests"},
};

}  // namespace tlscmp::kinds
