#pragma once

// Datagram tests (udp, dtls; seeds/002): senders on the client, one receiver
// on the server, the end agreed over the control connection.
//
//   client                                   server
//   test_request (mode udp|dtls) ----------->
//                <------------------------- test_accept (udp_ports)
//   dtls: one handshake per sender, in order, each on its own port
//                <------------------------- ready
//   datagrams, from every sender at once ---> counted per sender
//   datagram_result (sent, per sender) ----->
//                                            drains: until every sent datagram
//                                            came, or none for kDrainQuiet
//                <------------------------- datagram_result (received ...)
//
// A lost datagram therefore never holds up a run: the receiver learns from
// the control connection how many were sent.

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "kinds/datagram/results.hpp"
#include "kinds/datagram/wire.hpp"
#include "kinds/kind.hpp"
#include "kinds/peer_checks.hpp"
#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "session/server_side.hpp"
#include "tls/context.hpp"
#include "tls/dtls.hpp"
#include "transport/stream.hpp"

namespace tlscmp::session {
class InterruptWatch;
}

namespace tlscmp::kinds {

// Datagrams per sendmmsg/recvmmsg call.
inline constexpr std::size_t kDatagramBatch = 64;
// After the senders' count arrives: the receiver stops once it has them all,
// or after this long without a datagram, or kDrainLimit at the most.
inline constexpr std::chrono::milliseconds kDrainQuiet{200};
inline constexpr std::chrono::milliseconds kDrainLimit{2000};

// Server: runs one datagram test whose request passed the server's caps
// (a dtls test only where its stack's part of the server has a datagram context). Returns the line to log;
// throws tlscmp::Error.
std::string serve_datagram_test(Stream& control, const protocol::TestRequest& request,
                                session::ServerSide& side);

// Client: one datagram run against config.host:config.port.
DatagramRun run_datagram_test(const session::ClientConfig& config, Mode mode, const tls::DtlsContext* dtls,
                              session::InterruptWatch& interrupt, measure::Environment& environment);

// Both halves: the peer's count against this side's, neither failed. Per
// sender, the receiver's distinct datagrams are at most those sent (a
// duplicate, a sequence number seen before, is counted apart), its
// reordered ones are among them, and each side's bytes are its datagrams
// times their size; every time (first and last datagram, the window, -i's
// interval ends) lies within this side's clock of the run; the CPU is no
// more than that per thread (one receiver, a thread per sender); the
// receiver's intervals add up to what it received. Returns the line naming
// the first figure that disagrees (kinds/peer_checks.hpp), or "".
std::string check_peer_datagrams(const PeerJudge& judge, const protocol::TestRequest& request,
                                 const DatagramResult& mine, const DatagramResult& theirs);

// Reports (report.cpp).
// The runs table, the DTLS handshake and the summary, for render_text.
std::string render_datagram_runs(const measure::Comparison& comparison);
// "datagram_runs": one object per run.
nlohmann::ordered_json datagram_runs_json(const measure::Comparison& comparison);
// "datagram_summary": medians per variant (each other library's dtls over
// the first's too), and DTLS over UDP.
nlohmann::ordered_json datagram_summary_json(const measure::Comparison& comparison);
// A header line and one row per run (and sender, with -P > 1).
std::string render_datagram_csv(const measure::Comparison& comparison);

// Client flags (flags.cpp): -b, --gso; asked for by a datagram --mode; -n, -l and -P as datagrams.
std::vector<CLI::Option*> add_datagram_flags(CLI::App& command, KindFlags& flags);
bool asked_for_datagrams(const session::ClientConfig& config);
void configure_datagram(const SharedFlags& flags, session::ClientConfig& config);

// The report page (html.cpp): its section of charts, and its headline's sentences of one result.
std::string datagram_html_section(render::Page& page);
void datagram_html_headline(const nlohmann::json& result, std::vector<std::string>& sentences);

// This kind's entry in the table of kinds (slice.cpp).
extern const KindSlice kDatagramKind;

}  // namespace tlscmp::kinds
