// The request/response kind's entry in the table of kinds (kinds/kind.hpp).

#include <fmt/format.h>
#include <tuple>

#include "kinds/rr/rr.hpp"
#include "kinds/transactions.hpp"
#include "spec/size.hpp"

namespace tlscmp::kinds {
namespace {
namespace rr_entry {

void run(const session::ClientRun& run, const session::Variant& variant, measure::Comparison& comparison) {
  const tls::Context* tls = variant.tls ? &*variant.tls : nullptr;
  session::keep_run<RrResults>(comparison,
                               run_rr_test(run.target, tls, variant.mode, run.interrupt, run.observer,
                                           run.seed, run.round, comparison.environment),
                               variant, run);
}

void notes(const session::ClientConfig& config, measure::Comparison& comparison) {
  note_rate_shortfall<RrResults>(comparison, "the server or the path");
  session::note_unpinned<RrResults>(comparison, config);
}

std::string text_runs(const measure::Comparison& c) {
  return c.get<RrResults>() != nullptr ? render_rr_runs(c) : std::string();
}

// "rr_runs" and "rr_summary".
void json(const measure::Comparison& c, nlohmann::ordered_json& out) {
  out["rr_runs"] = rr_runs_json(c);
  out["rr_summary"] = rr_summary_json(c);
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  nlohmann::ordered_json runs = rr_runs_json(c);
  return runs.empty() ? nlohmann::ordered_json(nullptr) : runs.back();
}
// What compare and merge read of its runs in a result file.
constexpr RunFigure kFigures[] = {
    {"transactions/s", {"transactions_per_s", nullptr}, true},
    {"p50 latency us", {"latency_us", "p50"}, false},
    {"p99 latency us", {"latency_us", "p99"}, false},
    {"client CPU us/tx", {"client", "cpu_us_per_transaction"}, false},
    {"server CPU us/tx", {"server", "cpu_us_per_transaction"}, false},
};

// A test that check passes, every field of its part off its default.
spec::Test example() {
  spec::Test t;
  t.kind = TestKind::rr;
  t.streams = 2;
  t.rr = {64, 16384, 0, 2500.5};
  t.duration_ms = 3000;
  return t;
}
// tlscmp sweep --rr 1/1,64/1K: each point an rr test of those sizes.
std::function<void(session::ClientConfig&)> sweep_sizes(const std::string& text) {
  const auto [request, response] = spec::parse_rr(text, "--rr");
  return [request, response](session::ClientConfig& c) {
    c.test.rr.request_bytes = request;
    c.test.rr.response_bytes = response;
  };
}

void sweep_base(const std::string& first, KindFlags& flags) {
  std::tie(flags.test.rr.request_bytes, flags.test.rr.response_bytes) = spec::parse_rr(first, "--rr");
  flags.ask(TestKind::rr);
}

constexpr SweepSetting kSweepSettings[] = {
    {"rr",
     "Request/response sizes (1/1,64/1K,1K/16K,16K/1M): transactions instead of bulk runs, 10 s per run "
     "unless -t or -n says otherwise",
     sweep_sizes, sweep_base}};

}  // namespace rr_entry
}  // namespace

const KindSlice kRrKind{
    .kind = TestKind::rr,
    .over_udp_streams = true,
    .flag = "--rr",
    .flags_are_for = "request/response tests (--rr REQ/RESP)",
    .takes =
        "--rr takes -t, -n, -P, -i, --rate, --verify, --repeat, --warmup, -w/--sndbuf/--rcvbuf and the TLS "
        "flags",
    .add_flags = add_rr_flags,
    .configure = configure_rr,
    .quic_streams = true,
    .run = rr_entry::run,
    .notes = rr_entry::notes,
    .refusal = transactions_refusal,
    .check = [](const spec::Test& t, Mode) { check_transactions(t, "--rr"); },
    .example = rr_entry::example,
    .serve = serve_rr_test,
    .text_header = render_rr_header,
    .text_runs = rr_entry::text_runs,
    .json = rr_entry::json,
    .last_run_json = rr_entry::last_run_json,
    .csv = render_rr_csv,
    .html_section = rr_html_section,
    .html_headline = rr_html_headline,
    .sweep_title = transactions_sweep_title,
    .sweep_figures = rr_sweep_figures,
    .sweep_columns = kTransactionsSweepColumns,
    .sweep_charts = kRrSweepCharts,
    .sweep_settings = rr_entry::kSweepSettings,
    .results = {"rr", "rr_runs", "transactions", "transactions", rr_entry::kFigures, "messages",
                "transactions"},
};

}  // namespace tlscmp::kinds
