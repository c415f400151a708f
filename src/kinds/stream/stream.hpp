#pragma once

// Bulk stream tests (tcp, tls; seeds/000 and seeds/001): -P data connections
// beside the control connection, each moving a payload one way (or, with
// --bidir, every other one the other way), timed by the receiver.
//
//   client                                   server
//   test_request (mode tcp|tls) ------------>
//                <------------------------- test_accept (cookie)
//   data connection per stream: preamble, cookie, stream index (TLS: after
//   the handshake, which is timed on its own)
//                <------------------------- 'R' on each, once all came
//   the transfer on each stream (kinds/stream/transfer.hpp)
//   side_result per stream ----------------->
//                <------------------------- side_result per stream

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kinds/kind.hpp"
#include "kinds/peer_checks.hpp"
#include "kinds/stream/results.hpp"
#include "measure/intervals.hpp"
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

// Client: one run of `mode` (tcp or tls, with `tls` for the latter) against
// config.host:config.port. `observer` (may be null) watches the streams that
// go the test's way; `verify_seed` seeds --verify's payload; `round` goes to
// the server's log. Throws tlscmp::Error naming what failed and on which side.
StreamRun run_stream_test(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                          session::InterruptWatch& interrupt, measure::TransferObserver* observer,
                          std::uint64_t verify_seed, int round, measure::Environment& environment);

// Server: runs one stream test whose request passed the server's caps.
// Returns the line to log; throws tlscmp::Error.
std::string serve_stream_test(Stream& control, const protocol::TestRequest& request,
                              session::ServerSide& side);

// Both halves: the peer's result for one stream against this side's for the
// same stream, neither failed. The sender's bytes, messages and payload
// bytes equal the receiver's; its windows are not 0 where bytes moved and
// end within this side's clock of the run; its thread's CPU is no more than
// that; its intervals (-i) add up to its bytes. Returns the line naming the
// first figure that disagrees (kinds/peer_checks.hpp), or "".
std::string check_peer_stream(const PeerJudge& judge, const SideResult& mine, const SideResult& theirs);

// Reports (report.cpp).
// The header lines: -P, messages, the payload and the rounds.
std::string render_stream_header(const measure::TestParameters& parameters);
// The runs table (with per-stream rates) and the medians per variant, for render_text.
std::string render_stream_runs(const measure::Comparison& comparison);
// The headline: TLS's transfer time over TCP's, paired by round, with its interval.
std::string render_stream_headline(const measure::Comparison& comparison);
// "runs" (one object per run) and "summary" (medians per variant, the headline).
void add_stream_json(const measure::Comparison& comparison, nlohmann::ordered_json& out);
// The last run as "runs" holds it; null where there is none.
nlohmann::ordered_json stream_last_run_json(const measure::Comparison& comparison);
// Where a TLS variant's extra CPU goes, a line per side, and one hint
// (cost_report.cpp); "" where the variant has no split.
std::string render_cost_split(const measure::Comparison& comparison, const StreamStats& stats);
// A side's split, or null; a side's calibration, or null.
nlohmann::ordered_json cost_split_json(const std::optional<measure::CostSplit>& split);
nlohmann::ordered_json calibration_json(const std::optional<measure::TlsCalibration>& calibration);
// A header line and one row per run; handshake tests print the header alone.
std::string render_stream_csv(const measure::Comparison& comparison);

// Client flags (flags.cpp): -R, --framing, --msg-size, --max-msg, --read-size, --bidir, -N; and -n as bytes.
std::vector<CLI::Option*> add_stream_flags(CLI::App& command, KindFlags& flags);
void configure_stream(const SharedFlags& flags, session::ClientConfig& config);
// What tlscmp sweep takes of them: lists of --msg-size, --read-size and
// --framing, and -R and --max-msg as they are.
extern const std::span<const SweepSetting> kStreamSweepSettings;
void add_stream_sweep_flags(CLI::App& cmd, KindFlags& flags);

// The report page (html.cpp): its section of charts, and its headline's sentences of one result.
std::string stream_html_section(render::Page& page);
void stream_html_headline(const nlohmann::json& result, std::vector<std::string>& sentences);

// A sweep's figures of one point (report.cpp), for the table's sweep_* entries.
std::string stream_sweep_title(const std::vector<const measure::Comparison*>& points);
std::vector<SweepFigures> stream_sweep_figures(const measure::Comparison& comparison);
inline constexpr const char* kStreamSweepColumns[] = {
    "bytes_median",       "mbytes_per_s_min",      "mbytes_per_s_median", "mbytes_per_s_max",
    "messages_per_s_min", "messages_per_s_median", "messages_per_s_max",  "transfer_us_median",
    "over_tcp_median",    "over_tcp_ci95_low",     "over_tcp_ci95_high"};

// The report page's charts of a sweep.
inline constexpr SweepChart kStreamSweepCharts[] = {
    {"Throughput against the swept setting (median, min–max)", "throughput (MB/s)", "summary",
     "mbytes_per_s"},
    {"Messages per second against the swept setting", "messages/s (log scale)", "summary", "messages_per_s",
     true},
    {"TLS/TCP transfer time against the swept setting (median, 95% CI)", "TLS time / TCP time", "summary",
     "over_tcp_transfer_time", false, "ci95_low", "ci95_high"}};

// This kind's entry in the table of kinds (slice.cpp).
extern const KindSlice kStreamKind;

}  // namespace tlscmp::kinds
