// The server half of a connection-per-transaction test (see kinds/crr/crr.hpp).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/calibration.hpp"
#include "kinds/connection_tally.hpp"
#include "kinds/crr/crr.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/exchange.hpp"
#include "measure/clock.hpp"
#include "measure/host.hpp"
#include "session/control.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// A crr test's account on the server: each connection's thread adds its
// part; the control session reads the totals once the client is done.
class CrrTally final : public ConnectionTally {
 public:
  CrrTally(std::uint64_t request_bytes, std::uint64_t response_bytes, std::chrono::milliseconds idle)
      : request_bytes_(request_bytes), response_bytes_(response_bytes), piece_time_(idle) {}

  std::uint64_t request_bytes() const { return request_bytes_; }
  std::uint64_t response_bytes() const { return response_bytes_; }
  // How long a piece of a request or response may take (--idle-timeout).
  std::chrono::milliseconds idle() const { return piece_time_; }

 private:
  const std::uint64_t request_bytes_;
  const std::uint64_t response_bytes_;
  const std::chrono::milliseconds piece_time_;
};

}  // namespace

void serve_crr_connection(Stream& stream, session::PendingTests& pending, double& cpu_mark) {
  // The cookie and the request came in the client's one write, and every
  // request has a byte at least: one read takes the cookie and that byte.
  protocol::Cookie cookie{};
  std::vector<std::byte> buffer(cookie.size() + 1);
  std::error_code ec;
  stream.read_exact(buffer, ec);
  if (ec)
    throw Error(fmt::format("crr connection without a cookie: {}", describe(ec, stream.error_detail())));
  std::copy(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(cookie.size()), cookie.begin());
  const auto tally = std::dynamic_pointer_cast<CrrTally>(pending.sink(cookie));
  if (tally == nullptr) throw protocol::ProtocolError("crr connection for an unknown or finished test");
  if (!tally->begin()) {  // past the test's time: closed unanswered, the client counts it failed
    cpu_mark = measure::thread_cpu_s();
    return;
  }
  tally->note_port(stream.port_path());  // QUIC: the port's datagrams, from the first connection on

  // The request, then the response: what a client of a short-lived
  // connection asks and gets.
  buffer.resize(std::clamp<std::uint64_t>(tally->request_bytes(), 1, kMaxMessagePiece));
  read_message(stream, tally->request_bytes() - 1, buffer, tally->idle(), ec);
  if (!ec) write_message(stream, tally->response_bytes(), tally->idle(), ec);
  std::string failure;
  if (ec) failure = describe(ec, stream.error_detail());
  bool resumed = false;
  const std::uint64_t header = protocol::kPreambleBytes + cookie.size();
  std::uint64_t received = header + tally->request_bytes();
  std::uint64_t sent = tally->response_bytes();
  if (tls::TlsStream* tls = stream.tls(); tls != nullptr && facts(stream.mode()).over_udp) {
    // QUIC: the response acknowledged before the connection goes (a rapid
    // close would drop what is still in flight), or the client's close. Its bytes on the wire are
    // not this connection's to count: the server's QUIC socket is shared.
    // A client that read it closes at once: an end that finds the
    // connection closed is no failure. Nothing sends a lost
    // CONNECTION_CLOSE again, and the client's socket is gone, so the wait
    // is bounded well inside the client's wait for this side's count.
    constexpr std::chrono::milliseconds kAckWait{3'000};
    std::error_code ignored;
    if (!ec) {
      stream.set_deadline(Deadline::after(std::min(tally->idle(), kAckWait)));
      stream.shutdown_send(ignored);
    }
    resumed = tls->resumed();
    if (!ec && !tally->has_tls()) tally->note_tls(tls->session_info());
  } else if (tls != nullptr) {
    // A clean close: OpenSSL forgets a session whose connection ended without close_notify.
    std::error_code ignored;
    if (!ec) tls->send_close_notify(ignored);
    resumed = tls->resumed();
    received = tls->bytes_read();
    sent = tls->bytes_written();
    if (!ec && !tally->has_tls()) tally->note_tls(tls->session_info());  // once: it reads the certificates
  }
  tally->note_port(stream.port_path());
  const double now_cpu_s = measure::thread_cpu_s();
  tally->end({failure, resumed, failure.empty() ? 1u : 0u, received, sent, now_cpu_s - cpu_mark});
  cpu_mark = now_cpu_s;
}

namespace {

// The server's log line for a crr test: its counts, or the client's figure
// that disagreed with them.
std::string describe_crr_test(const protocol::TestRequest& request, const ConnectionTally::Totals& totals,
                              const SideResult& theirs, double elapsed_us, const std::string& stopped,
                              const std::string& disagreement) {
  const std::string what = fmt::format("crr {} {}/{}", to_string(request.mode), request.test.rr.request_bytes,
                                       request.test.rr.response_bytes);
  if (!disagreement.empty()) {
    return fmt::format("{}{} failed: {}", what,
                       request.round > 0 ? fmt::format(" round {}", request.round) : "", disagreement);
  }
  std::string line = fmt::format("{}: {} connections", what, totals.connections);
  if (is_tls_stream(request.mode)) line += fmt::format(" ({} resumed)", totals.resumed);
  line += fmt::format(" from {} connector{} in {:.3f} s", request.test.streams,
                      request.test.streams == 1 ? "" : "s", elapsed_us / 1e6);
  if (totals.failed > 0)
    line += fmt::format(", {} failed here, the first: {}", totals.failed, totals.first_failure);
  if (theirs.failed > 0) line += fmt::format(", {} failed on the client", theirs.failed);
  if (!stopped.empty()) line += "; " + stopped;
  return line;
}

}  // namespace

namespace {
// This host's calibration, with the first TLS connection's parameters; a
// test most of whose connections resumed is calibrated with resumed
// handshakes. None for TCP.
std::optional<measure::TransactionCalibration> calibrate_here(const protocol::TestRequest& request,
                                                              const CrrTally& tally,
                                                              const ConnectionTally::Totals& totals) {
  const std::optional<tls::SessionInfo> info = tally.tls();
  if (!info || totals.connections == 0) return std::nullopt;
  return transaction_calibration_for(library_of(request), info->cipher,
                                     connection_shape(request.test, info->certificate_key_type, info->group,
                                                      2 * totals.resumed > totals.connections));
}

// --compare-key-types: the certificate of the key type asked for, made
// before the test is accepted, or the test refused saying why.
void make_key_type_certificate(Stream& control, const protocol::TestRequest& request,
                               session::ServerSide& side) {
  if (request.key_type.empty()) return;
  try {
    side.prepare_key_type(request.key_type);
  } catch (const Error& e) {
    session::refuse_test(control, e.what());
  }
}
}  // namespace

std::string serve_crr_test(Stream& control, const protocol::TestRequest& request, session::ServerSide& side) {
  const RunClock clock;  // the run on this side, for judging the client's figures
  const session::Timeouts& t = side.config().timeouts;
  make_key_type_certificate(control, request, side);
  const auto tally =
      std::make_shared<CrrTally>(request.test.rr.request_bytes, request.test.rr.response_bytes, t.idle);
  const auto ticket = side.open_ticket(tally);
  // Each connector has one connection in setup at a time; twice that, for
  // the moment between one's preamble and the next one's connect.
  std::string busy;
  const auto budget = side.reserve_connections(2 * request.test.streams, busy);
  if (!budget) session::refuse_test(control, busy);
  session::send_message(control, side.acceptance(ticket->cookie()), "the test acceptance");
  const std::int64_t start_ns = measure::now_ns();
  // The accepting threads serve every test: of them, only the host's CPU over this one.
  measure::RunWatch watch(0);

  // Wait for the client's count, watching the connections meanwhile.
  const std::string stopped =
      await_client_count(control, *tally, request, side, fmt::format("crr {}", to_string(request.mode)));
  control.set_deadline(Deadline::after(t.control));
  const auto theirs = session::receive<SideResult>(control, "the client's connection count");
  tally->close();
  // The last connections' threads may still be adding theirs.
  const ConnectionTally::Totals totals = tally->settle(Deadline::after(t.control));
  const double elapsed_us = measure::ns_to_us(measure::now_ns() - start_ns);
  SideResult mine = server_count(totals, elapsed_us);
  mine.error = stopped;
  mine.facts.host_cpu = watch.finish();
  mine.transaction_calibration = calibrate_here(request, *tally, totals);
  // The client's count, judged here: a disagreement fails the test on both sides.
  std::string disagreement;
  if (mine.error.empty() && theirs.error.empty()) {
    disagreement = check_peer_count(PeerJudge(Peer::client, clock.elapsed_us()), request, mine, theirs);
    mine.error = disagreement;
  }
  session::send_message(control, mine, "the server's connection count");
  side.record(mine, theirs);

  return describe_crr_test(request, totals, theirs, elapsed_us, stopped, disagreement);
}

}  // namespace tlscmp::kinds
