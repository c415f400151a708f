#pragma once

// Handshake tests (--handshakes N, --compare-groups): TLS connections that
// only shake hands, full and resumed in turn, each on a connection of its own.
//
//   client                                   server
//   test_request (handshakes 2N) ----------->
//                <------------------------- test_accept (cookie)
//   per handshake: connect, TLS handshake (timed), preamble 'H' and cookie
//                <------------------------- one byte (and the session tickets)
//   close_notify, close
//   side_result (connections made) -------->
//                <------------------------- side_result (connections served)

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "kinds/handshake/results.hpp"
#include "kinds/kind.hpp"
#include "kinds/peer_checks.hpp"
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

// What one handshake test measured: each handshake's figures, [0] full and
// [1] resumed, and what the last full one negotiated.
struct HandshakeTest {
  HandshakeSamples kinds[2];
  measure::TlsParameters tls;
};

// --compare-groups without --handshakes: full and resumed handshakes per
// group and round (100 each over the default 5 rounds), and the time a group
// may take per round, so that the slow finite-field groups (ffdhe8192: most
// of a second per handshake) are measured with fewer handshakes, not for minutes.
inline constexpr int kGroupHandshakesPerRound = 20;
inline constexpr std::chrono::milliseconds kGroupBudgetPerRound{1000};
// --handshakes with several libraries: each library's N in this many parts.
inline constexpr int kLibraryParts = 5;

// Client: `count` full handshakes and `count` resumed ones, alternating. With
// a `budget`, no new pair starts once that much time has gone (one pair at
// least). Throws tlscmp::Error with the failure explained.
HandshakeTest run_handshake_test(const session::ClientConfig& config, int count, const tls::Context& tls,
                                 session::InterruptWatch& interrupt, measure::Environment& environment,
                                 std::chrono::milliseconds budget = {});

// Client: --compare-groups, every group each library has (--tls-lib's, as
// kinds/variants.hpp's library_options gives them), round by round, into
// the comparison's GroupResults (and its notes).
void run_group_comparison(const session::ClientConfig& config,
                          const std::vector<tls::ClientOptions>& libraries,
                          session::InterruptWatch& interrupt, measure::Comparison& comparison);

// Client: --handshakes N with each library, N/5 at a time, library after
// library, into the comparison's HandshakeLibraries.
void run_library_handshakes(const session::ClientConfig& config,
                            const std::vector<tls::ClientOptions>& libraries,
                            session::InterruptWatch& interrupt, measure::Comparison& comparison);

// Server: one handshake connection, its TLS handshake done: counted against
// its test's ticket, answered with one byte, closed cleanly (the test's
// control session logs the test). Throws tlscmp::Error.
void serve_handshake_connection(Stream& stream, session::PendingTests& pending);

// Server: a handshake test's control session. Returns the line to log.
std::string serve_handshake_test(Stream& control, const protocol::TestRequest& request,
                                 session::ServerSide& side);

// Both halves: the peer's count of handshake connections (in `bytes`)
// against this side's: every connection the client made, the server
// served, and no other. Returns the line naming the figure when they
// differ (kinds/peer_checks.hpp), or "". A count alone: the judge's clock
// is not read.
std::string check_peer_handshakes(const PeerJudge& judge, const SideResult& mine, const SideResult& theirs);

// Reports (report.cpp).
// The handshakes' table, or --compare-groups' tables, for render_text.
std::string render_handshake_results(const measure::Comparison& comparison);
// "handshakes" and "groups": null where the comparison has none.
void add_handshake_json(const measure::Comparison& comparison, nlohmann::ordered_json& out);
// A header line, and a row for full and one for resumed handshakes (per group with --compare-groups).
std::string render_handshake_csv(const measure::Comparison& comparison);

// Client flags (flags.cpp): --handshakes; asked for by it or --compare-groups.
std::vector<CLI::Option*> add_handshake_flags(CLI::App& command, KindFlags& flags);
bool asked_for_handshakes(const session::ClientConfig& config);
void configure_handshake(const SharedFlags& flags, session::ClientConfig& config);

// The report page (html.cpp): its section of charts, and its headline's sentences of one result.
std::string handshake_html_section(render::Page& page);
void handshake_html_headline(const nlohmann::json& result, std::vector<std::string>& sentences);

// This kind's entry in the table of kinds (slice.cpp).
extern const KindSlice kHandshakeKind;

}  // namespace tlscmp::kinds
