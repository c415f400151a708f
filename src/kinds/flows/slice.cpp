// The many-connection kind's entry in the table of kinds (kinds/kind.hpp),
// with its own variants: tcp, tls and tls-release.

#include <fmt/format.h>
#include <algorithm>

#include "kinds/flows/flows.hpp"
#include "kinds/transactions.hpp"
#include "kinds/variants.hpp"
#include "tls/backend.hpp"
#include "tls/tls_stream.hpp"

namespace tlscmp::kinds {
namespace {
namespace flows_entry {

// Each variant of the common ones; beside plain tls, tls-release where
// flows are held (crr's connectors hold none between transactions).
std::vector<session::Variant> variants(const session::ClientConfig& config,
                                       const tls::ClientOptions& tls_config,
                                       std::vector<std::string>& notes) {
  std::vector<session::Variant> out;
  const bool held = config.test.flows.work != spec::FlowWork::crr;
  tls::ClientOptions options = tls_config;
  options.event_loop = true;  // the loops run each QUIC connection's timers
  for (session::Variant& variant : common_variants(config, options, notes)) {
    // TLS over TCP's own variant: its records' buffers are the library's to release.
    const Mode mode = variant.mode;
    const bool plain_tls = held && facts(mode).tls_over_tcp && variant.label == to_string(mode);
    out.push_back(std::move(variant));
    if (!plain_tls) continue;
    out.emplace_back(mode, std::string(to_string(mode)) + "-release", tls::Context::for_client(tls_config),
                     std::nullopt);
    out.back().release_buffers = true;
  }
  return out;
}

void run(const session::ClientRun& run, const session::Variant& variant, measure::Comparison& comparison) {
  session::keep_run<FlowsResults>(comparison, run_flows_test(run, variant, comparison.environment), variant,
                                  run);
}

// Flows that failed during the traffic: counted in the run, named here.
void notes(const session::ClientConfig& config, measure::Comparison& comparison) {
  const auto* flows = comparison.get<FlowsResults>();
  if (flows == nullptr) return;
  if (config.host.empty() && config.test.flows.work != spec::FlowWork::crr) {
    comparison.notes.push_back(
        "the embedded server runs in this process: its memory per connection is both ends' together, given "
        "once "
        "(JSON: memory_of both_ends); run tlscmp server apart for each side's own");
  }
  for (const FlowsRun& run : flows->runs) {
    if (run.failed_flows > 0)
      comparison.notes.push_back(fmt::format("{} round {}: {} of {} flows failed during the traffic; {}",
                                             run.label(), run.round, run.failed_flows, run.flows,
                                             run.first_failure));
  }
  note_rate_shortfall<FlowsResults>(comparison, "the flows");
  if (config.test.flows.work == spec::FlowWork::crr) return;
  const std::vector<std::string>& libraries = config.tls_policy.libraries;
  for (std::size_t i = 0; i < std::max<std::size_t>(libraries.size(), 1); ++i) {
    const tls::Backend& library =
        libraries.empty() ? tls::default_backend() : *tls::find_backend(libraries[i]);
    if (!library.releases_buffers_always()) continue;
    const std::string suffix = i == 0 ? std::string() : " " + libraries[i];
    comparison.notes.push_back(
        fmt::format("tls-release{}: {} releases an idle connection's buffers always, so it is tls{} again",
                    suffix, library.library_version(), suffix));
  }
}

std::string text_runs(const measure::Comparison& c) {
  return c.get<FlowsResults>() != nullptr ? render_flows_runs(c) : std::string();
}

std::string text_headline(const measure::Comparison& c) {
  return c.get<FlowsResults>() != nullptr ? render_flows_headline(c) : std::string();
}

void json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  out["flows_runs"] = flows_runs_json(c);
  out["flows_summary"] = flows_summary_json(c);
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  nlohmann::ordered_json runs = flows_runs_json(c);
  return runs.empty() ? nlohmann::ordered_json(nullptr) : runs.back();
}

// What compare and merge read of its runs in a result file.
// A run carries one rate, by its work: transactions/s (rr), connections/s
// (crr) or MB/s (a stream).
constexpr RunFigure kFigures[] = {
    {"transactions/s", {"transactions_per_s", nullptr}, true},
    {"p50 latency us", {"latency_us", "p50"}, false},
    {"flows/s", {"flows_per_s", nullptr}, true},
    {"connections/s", {"connections_per_s", nullptr}, true, "connections", "connections"},
    {"MB/s", {"mbytes_per_s", nullptr}, true, "bytes", "bytes"},
};

spec::Test example() {
  spec::Test t;
  t.kind = TestKind::flows;
  t.rr = {64, 16384, 0, 0};
  t.duration_ms = 3000;
  t.flows = {spec::FlowWork::crr, 200, 2};
  return t;
}

// tlscmp sweep --flows 1,10,100: each point a flows test of that many.
std::function<void(session::ClientConfig&)> sweep_counts(const std::string& text) {
  const auto n =
      static_cast<std::uint32_t>(spec::parse_count(text, "--flows", 1, spec::kMaxFlows, "connections"));
  return [n](session::ClientConfig& c) { c.test.flows.flows = n; };
}

// The first count, and transactions of 1/1 unless swept rr sizes gave theirs.
void sweep_base(const std::string& first, KindFlags& flags) {
  flags.test.flows.flows =
      static_cast<std::uint32_t>(spec::parse_count(first, "--flows", 1, spec::kMaxFlows, "connections"));
  if (!flags.asked[static_cast<std::size_t>(TestKind::rr)]) flags.test.rr = {1, 1, 0, 0};
  flags.ask(TestKind::rr);
  flags.ask(TestKind::flows);
}

constexpr SweepSetting kSweepSettings[] = {
    {"flows",
     "Flow counts (1,10,100,1000,10000): many connections on event loops at each end, each making --rr "
     "transactions (1/1 unless --rr says otherwise)",
     sweep_counts, sweep_base}};

}  // namespace flows_entry
}  // namespace

void check_flows_test(const spec::Test& t, Mode mode) {
  const spec::FlowWork work = t.flows.work;
  const bool stream = work == spec::FlowWork::stream;
  const std::uint64_t count = stream ? t.stream.bytes : t.rr.transactions;
  const bool http = work == spec::FlowWork::http;
  if (!stream && !http && (t.rr.request_bytes == 0 || t.rr.response_bytes == 0))
    throw spec::Invalid("--flows --rr (--crr) needs REQ/RESP: what each flow does");
  if (http != (t.http.version != 0) || (http && (t.http.version > 2 || t.http.streams != 1)))
    throw spec::Invalid("--flows --http takes 1.1 or 2, a request at a time on each flow (no --streams)");
  if (http && facts(mode).over_udp)
    throw spec::Invalid(fmt::format(
        "--flows --http runs over tcp and tls, not {} (HTTP/3 runs on -P connections)", to_string(mode)));
  if (t.http.requests_per_connection != 0 || t.http.resume_percent != 0)
    throw spec::Invalid("--requests-per-connection and --resume-ratio are for --http without --flows");
  if ((count == 0) == (t.duration_ms == 0))
    throw spec::Invalid(
        fmt::format("--flows runs -n {} or for -t seconds: give one", stream ? "bytes" : "transactions"));
  if (count != 0 && count < t.flows.flows) {
    throw spec::Invalid(fmt::format("-n {}: fewer {} than flows (--flows {}); each has one at least", count,
                                    stream ? "bytes" : "transactions", t.flows.flows));
  }
  if (t.streams != 1)
    throw spec::Invalid("-P is a thread per connection; --flows holds its own on event loops");
  if (t.rr.rate_tps > 0 && (work != spec::FlowWork::rr || t.duration_ms == 0))
    throw spec::Invalid("--rate is for --flows --rr, and needs -t: an open-loop run goes for a time");
  const spec::Stream plain;
  if (t.stream.no_delay || t.stream.bidir || t.stream.framing != plain.framing || t.stream.msg_size != 0 ||
      t.stream.read_size != 0 || (!stream && t.stream.direction != plain.direction))
    throw spec::Invalid("--flows streams are raw bytes one way: -N, --bidir and messages are for -P streams");
  if (t.crr.compare_key_types || (work != spec::FlowWork::crr && t.crr.close != spec::Crr{}.close))
    throw spec::Invalid("--close is for --flows --crr, and --compare-key-types not for --flows");
  if (t.verify || t.interval_ms > 0 || t.compare_groups)
    throw spec::Invalid(fmt::format("{} is not for --flows", t.verify            ? "--verify"
                                                             : t.interval_ms > 0 ? "-i"
                                                                                 : "--compare-groups"));
}

const KindSlice kFlowsKind{
    .kind = TestKind::flows,
    .over_udp_streams = true,
    .flag = "--flows",
    .flags_are_for = "many-connection tests (--flows N, with --rr, --crr or --http, or bulk)",
    .takes =
        "--flows takes --threads, -t, -n, -R and -l (bulk), --rr and --rate, --crr and --close, --http with "
        "--request and --response, -B, --repeat, "
        "--warmup, -w/--sndbuf/--rcvbuf and the TLS flags",
    .add_flags = add_flows_flags,
    .configure = configure_flows,
    .check_host = check_flows_host,
    .holds_work = true,
    .several_sources = true,
    .release_buffers = true,
    .variants = flows_entry::variants,
    .run = flows_entry::run,
    .notes = flows_entry::notes,
    .refusal = transactions_refusal,
    .check = check_flows_test,
    .example = flows_entry::example,
    .serve = serve_flows_test,
    .connection = protocol::ConnectionKind::flow,
    .serve_connection = serve_flow_connection,
    .text_header = render_flows_header,
    .text_runs = flows_entry::text_runs,
    .text_headline = flows_entry::text_headline,
    .json = flows_entry::json,
    .last_run_json = flows_entry::last_run_json,
    .csv = render_flows_csv,
    .html_section = flows_html_section,
    .html_headline = flows_html_headline,
    .sweep_title = transactions_sweep_title,
    .sweep_figures = flows_sweep_figures,
    .sweep_columns = kTransactionsSweepColumns,
    .sweep_charts = kFlowsSweepCharts,
    .sweep_settings = flows_entry::kSweepSettings,
    .add_sweep_flags = add_flows_sweep_flags,
    .results = {"flows", "flows_runs", "transactions", "transactions", flows_entry::kFigures, "flows",
                "flows", "flows"},
};

}  // namespace tlscmp::kinds
