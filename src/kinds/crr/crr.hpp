#pragma once

// Connection per transaction (--crr; netperf TCP_CRR, neper tcp_crr): what a
// proxy, a load balancer or a service with short-lived connections pays.
// -P connectors on the client, each on a thread of its own, open a
// connection, (TLS: shake hands,) make one transaction of the rr sizes and
// close it, again and again; the server serves each connection on its
// accept path, as it serves every connection.
//
//   client                                   server
//   test_request (crr, rr sizes ...) ------->
//                <------------------------- test_accept (cookie)
//   per connection: connect, TLS handshake, then preamble 'N', cookie and
//   the request in one write
//                <------------------------- the response (TLS: then close_notify)
//   (TLS: close_notify,) close with SO_LINGER 0: RST, no TIME_WAIT
//   side_result (connections made) -------->
//                <------------------------- side_result (connections served)
//
// Each connection's phases are timed apart on the client: connect() to
// established, the TLS handshake, and the request's first byte to the
// response's last. The tls-resumed variant offers each connection the
// session of its connector's previous one; each connector first makes one
// connection, not timed or counted, for a session to offer.

#include <nlohmann/json.hpp>
#include <string>

#include "kinds/crr/results.hpp"
#include "kinds/kind.hpp"
#include "kinds/peer_checks.hpp"
#include "measure/cpu.hpp"
#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "session/pending_tests.hpp"
#include "session/server_side.hpp"
#include "tls/context.hpp"
#include "transport/stream.hpp"

namespace tlscmp::session {
class InterruptWatch;
}

namespace tlscmp::kinds {

// One kind of crr run: plain TCP, or TLS with full or resumed handshakes,
// with the server's own certificate or (--compare-key-types) one of
// `key_type` that the server makes for the test.
struct CrrVariant {
  Mode mode = Mode::tcp;
  bool resume = false;
  std::string key_type;  // "" or as tlscmp certs --key-type names it
};

// Client: one run. Throws tlscmp::Error when the run could not be made (the
// control connection, the server's refusal, every connection failing); the
// failures of some connections are counted in the run instead.
CrrRun run_crr_test(const session::ClientConfig& config, const tls::Context* tls, const CrrVariant& variant,
                    session::InterruptWatch& interrupt, int round, measure::Environment& environment);

// Server: one crr connection, its TLS handshake (if any) and preamble done:
// the request, the response, the close; counted in its test. Its CPU cost is
// what this thread's clock (measure::thread_cpu_s) moved since `cpu_mark`,
// the end of the thread's previous connection (so its accept() counts), and
// `cpu_mark` moves on. Throws tlscmp::Error for a connection that names no
// running crr test.
void serve_crr_connection(Stream& stream, session::PendingTests& pending, double& cpu_mark);

// Server: a crr test's control session. Returns the line to log.
std::string serve_crr_test(Stream& control, const protocol::TestRequest& request, session::ServerSide& side);

// Both halves: the peer's count against this side's, neither failed. Every
// connection the client completed (its first ones for a session included)
// the server served, so the client's completed are at most the server's
// served, and its resumed at most the server's; every connection the
// server counted, served or failed, is one the client tried, completed or
// failed. Over TCP with no failure on either side the bytes are exact: the
// server received each request (preamble and cookie included) and the
// client each response. The peer's window is not 0 where connections were
// made and ends within this side's clock of the run. (The server's CPU is
// its accepting threads', as many as served at once: no bound here.)
// Returns the line naming the first figure that disagrees
// (kinds/peer_checks.hpp), or "".
std::string check_peer_count(const PeerJudge& judge, const protocol::TestRequest& request,
                             const SideResult& mine, const SideResult& theirs);

// Reports (report.cpp).
// The header line: sizes, connectors, amount, rounds and how connections close.
std::string render_crr_header(const measure::TestParameters& parameters);
// The runs table, failures, the medians and the TLS/TCP ratios, for render_text.
std::string render_crr_runs(const measure::Comparison& comparison);
// "crr_runs": one object per run; null for other kinds.
nlohmann::ordered_json crr_runs_json(const measure::Comparison& comparison);
// "crr_summary": medians per variant, their ratios to the baseline ("over_tcp"), and the headline
// ("tls_over_tcp").
nlohmann::ordered_json crr_summary_json(const measure::Comparison& comparison);
// A header line and one row per run.
std::string render_crr_csv(const measure::Comparison& comparison);

// Client flags (flags.cpp): --crr, which asks for the kind, --close and --compare-key-types.
std::vector<CLI::Option*> add_crr_flags(CLI::App& command, KindFlags& flags);
void configure_crr(const SharedFlags& flags, session::ClientConfig& config);

// The report page (html.cpp): its section of charts, and its headline's sentences of one result.
std::string crr_html_section(render::Page& page);
void crr_html_headline(const nlohmann::json& result, std::vector<std::string>& sentences);

// This kind's entry in the table of kinds (slice.cpp).
extern const KindSlice kCrrKind;

}  // namespace tlscmp::kinds
