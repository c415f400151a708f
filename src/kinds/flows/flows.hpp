#pragma once

// Many connections (--flows N [--threads T]): N connections held on T event
// loops at each end (kinds/flows/loop.hpp), no thread per connection, as
// neper's -F flows over -T threads and h2load's -c clients over -t threads.
// What TLS costs a server that holds thousands of connections: the rate, CPU
// per unit and memory per connection on each side. Each flow does the work
// the flags ask for (spec::FlowWork): a bulk stream (no --rr or --crr; -R:
// the server sends), --rr transactions, or --crr: N connectors, each
// connecting, making one transaction and closing, over again.
//
//   client                                   server
//   test_request (flows, threads, work) ---->
//                <------------------------- test_accept (cookie)
//   N flows, each: connect, preamble 'F' and data header (cookie, index) in
//   the clear, then TLS on the server's loop; at most 64 a loop connecting
//   at once; the whole establishment timed on its own (crr: none)
//   ready (all established) ---------------->
//                <------------------------- ready (the server read its idle memory)
//   go (a stream the server sends alone) --->
//   the work on every flow, -n in all or for -t
//   flows_result (the client's) ------------>
//                <------------------------- flows_result (the server's; a stream it
//                                           received once every byte sent came)
//   both close every flow
//
// Each side reads its memory (process RSS, the kernel's TCP pages) before
// the first flow, with every flow established and idle, and after the
// traffic; the run reports the growth per connection (crr holds no flow
// between transactions, and reports none).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kinds/flows/results.hpp"
#include "kinds/flows/wire.hpp"
#include "kinds/kind.hpp"
#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "session/client_side.hpp"
#include "session/pending_tests.hpp"
#include "session/server_side.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

// Client: one run of a variant (tcp, tls, tls-release). Throws tlscmp::Error
// naming what failed; a flow that failed during the traffic is counted in
// the run and named in a note, not an error.
FlowsRun run_flows_test(const session::ClientRun& run, const session::Variant& variant,
                        measure::Environment& environment);

// Server: one test whose request passed the caps; returns the line to log.
std::string serve_flows_test(Stream& control, const protocol::TestRequest& request,
                             session::ServerSide& side);
// Server: a flow connection, after its preamble: reads its data header and
// hands the socket to its test's event loop.
void serve_flow_connection(std::unique_ptr<Stream>& stream, session::PendingTests& pending, double& cpu_mark);

// What a flows test needs of its parts; throws spec::Invalid naming the flag.
void check_flows_test(const spec::Test& test, Mode mode);

// The event loops an end runs: T, or one per CPU it may use (one where -A
// pins them to a CPU, `cpu` >= 0); no more than the flows.
std::uint32_t flow_threads(const spec::Test& test, int cpu);

// Client flags (flags.cpp): --flows, which asks for the kind, and --threads.
std::vector<CLI::Option*> add_flows_flags(CLI::App& command, KindFlags& flags);
// tlscmp sweep's --threads, one value for every point.
void add_flows_sweep_flags(CLI::App& command, KindFlags& flags);
void configure_flows(const SharedFlags& flags, session::ClientConfig& config);
// The client's host holds the flows: descriptors for them (the embedded
// server's too), and source addresses' ports enough. Throws UsageError.
void check_flows_host(const session::ClientConfig& config);

// How a flows run's units of work are named and shown (report.cpp).
struct FlowUnits {
  const char* count_key;   // -J: "transactions", "connections", "bytes"
  const char* rate_key;    // -J: "transactions_per_s", "connections_per_s", "mbytes_per_s"
  const char* rate_name;   // "transactions/s", "connections/s", "MB/s"
  const char* rate_label;  // a text column: "tx/s", "conn/s", "MB/s"
  double rate_scale;       // units a second times this: the rate shown
  const char* cpu_key;     // -J: "cpu_us_per_transaction", "cpu_us_per_connection", "cpu_s_per_gib"
  const char* cpu_label;   // "CPU us/tx cli/srv"
  double cpu_scale;        // CPU microseconds a unit times this: the figure shown
};
const FlowUnits& flow_units(spec::FlowWork work);

// Reports (report.cpp).
std::string render_flows_header(const measure::TestParameters& parameters);
std::string render_flows_runs(const measure::Comparison& comparison);
std::string render_flows_headline(const measure::Comparison& comparison);
nlohmann::ordered_json flows_runs_json(const measure::Comparison& comparison);
nlohmann::ordered_json flows_summary_json(const measure::Comparison& comparison);
std::string render_flows_csv(const measure::Comparison& comparison);

// The report page (html.cpp): its section of charts, and its headline's sentences of one result.
std::string flows_html_section(render::Page& page);
void flows_html_headline(const nlohmann::json& result, std::vector<std::string>& sentences);

// A sweep's figures of one point (report.cpp), for the table's sweep_* entries.
std::vector<SweepFigures> flows_sweep_figures(const measure::Comparison& comparison);

// The report page's charts of a sweep.
inline constexpr SweepChart kFlowsSweepCharts[] = {
    {"Transactions per second against the swept setting, every flow held", "transactions/s", "flows_summary",
     "transactions_per_s"},
    {"Memory per connection on the server against the swept setting, idle (median, min–max)",
     "bytes per connection", "flows_summary", "server_idle_bytes_per_connection"}};

// This kind's entry in the table of kinds (slice.cpp).
extern const KindSlice kFlowsKind;

}  // namespace tlscmp::kinds
