#pragma once

// Request/response tests (--rr REQ/RESP; seeds' RPC-shaped workloads, as
// netperf TCP_RR, neper tcp_rr and sockperf ping-pong measure them): -P
// connections beside the control connection, each on a thread of its own at
// both ends, making transactions of one request and one response.
//
//   client                                   server
//   test_request (rr_request_bytes ...) ---->
//                <------------------------- test_accept (cookie)
//   data connection per connection: preamble, cookie, index (TLS: after the
//   handshake, which is timed on its own)
//                <------------------------- 'R' on each, once all came
//   transactions on each connection (kinds/exchange.hpp), then its end
//   side_result per connection ------------->  (messages: transactions)
//                <------------------------- side_result per connection

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kinds/kind.hpp"
#include "kinds/peer_checks.hpp"
#include "kinds/rr/results.hpp"
#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "session/server_side.hpp"
#include "tls/context.hpp"
#include "transport/stream.hpp"

namespace tlscmp::session {
class InterruptWatch;
}

namespace tlscmp::kinds {

// Client: one run of `mode` (tcp, or tls with `tls`). `observer` (may be
// null) gets each interval of its tick period as the run goes; `verify_seed`
// seeds --verify's patterns; `round` goes to the server's log. Throws
// tlscmp::Error naming what failed, on which side, connection and transaction.
RrRun run_rr_test(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                  session::InterruptWatch& interrupt, measure::TransferObserver* observer,
                  std::uint64_t verify_seed, int round, measure::Environment& environment);

// Server: runs one rr test whose request passed the server's caps. Returns
// the line to log; throws tlscmp::Error.
std::string serve_rr_test(Stream& control, const protocol::TestRequest& request, session::ServerSide& side);

// Both halves: the peer's result for one connection against this side's
// (kinds/exchange.hpp's to_side_result), neither failed. The server
// answered as many requests as the client took responses; each side's
// bytes are its transactions times the size it receives; its window is not
// 0 where transactions were made and ends within this side's clock of the
// run (an open-loop client's lasts -t at least); its thread's CPU is no
// more than that. Returns the line naming the first figure that disagrees
// (kinds/peer_checks.hpp), or "".
std::string check_peer_connection(const PeerJudge& judge, const protocol::TestRequest& request,
                                  const SideResult& mine, const SideResult& theirs);

// Reports (report.cpp).
// The header line: sizes, loop, connections, amount and rounds.
std::string render_rr_header(const measure::TestParameters& parameters);
// The runs table (with connections and intervals), the medians and the TLS/TCP ratios, for render_text.
std::string render_rr_runs(const measure::Comparison& comparison);
// "rr_runs": one object per run; null for other kinds.
nlohmann::ordered_json rr_runs_json(const measure::Comparison& comparison);
// "rr_summary": medians per variant, their ratios to the baseline ("over_tcp"), and the headline
// ("tls_over_tcp").
nlohmann::ordered_json rr_summary_json(const measure::Comparison& comparison);
// A header line and one row per run.
std::string render_rr_csv(const measure::Comparison& comparison);

// Client flags (flags.cpp): --rr, which asks for the kind, and --rate.
std::vector<CLI::Option*> add_rr_flags(CLI::App& command, KindFlags& flags);
void configure_rr(const SharedFlags& flags, session::ClientConfig& config);

// The report page (html.cpp): its section of charts, and its headline's sentences of one result.
std::string rr_html_section(render::Page& page);
void rr_html_headline(const nlohmann::json& result, std::vector<std::string>& sentences);

// A sweep's figures of one point (report.cpp), for the table's sweep_* entries.
std::vector<SweepFigures> rr_sweep_figures(const measure::Comparison& comparison);

// The report page's charts of a sweep.
inline constexpr SweepChart kRrSweepCharts[] = {{"Transactions per second against the swept setting",
                                                 "transactions/s", "rr_summary", "transactions_per_s"}};

// This kind's entry in the table of kinds (slice.cpp).
extern const KindSlice kRrKind;

}  // namespace tlscmp::kinds
