// The server half of --requests-per-connection (see reconnect_client.cpp):
// each connection served by the thread that accepted it, its requests,
// bodies, CPU and resumption added to the test's tally; the control session
// waits for the client's count, then answers with its own.

#include <fmt/format.h>

#include "kinds/connection_tally.hpp"
#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/host.hpp"
#include "session/control.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// An http test's account on the server, with what its connections are served by.
class HttpTally final : public ConnectionTally {
 public:
  HttpTally(std::uint32_t version, std::chrono::milliseconds idle) : version_(version), idle_(idle) {}
  std::uint32_t version() const { return version_; }
  std::chrono::milliseconds idle() const { return idle_; }

 private:
  const std::uint32_t version_;
  const std::chrono::milliseconds idle_;
};

// The server's log line: its counts, or what failed.
std::string describe_test(const protocol::TestRequest& request, const ConnectionTally::Totals& totals,
                          const SideResult& theirs, double elapsed_us, const std::string& failed) {
  const std::string what =
      fmt::format("http {} {} {}/{}, {} requests a connection", http_version_name(request.test.http.version),
                  to_string(request.mode), request.test.rr.request_bytes, request.test.rr.response_bytes,
                  request.test.http.requests_per_connection);
  if (!failed.empty())
    return fmt::format("{}{} failed: {}", what,
                       request.round > 0 ? fmt::format(" round {}", request.round) : "", failed);
  std::string line =
      fmt::format("{}: {} requests answered on {} connections", what, totals.requests, totals.connections);
  if (is_tls_stream(request.mode)) line += fmt::format(" ({} resumed)", totals.resumed);
  line += fmt::format(" from {} connector{} in {:.3f} s", request.test.streams,
                      request.test.streams == 1 ? "" : "s", elapsed_us / 1e6);
  if (!theirs.error.empty()) line += fmt::format("; the client: {}", theirs.error);
  return line;
}

// This side's count from the tally: the shared part's, with the requests
// answered, and its connections' failures as its error.
SideResult http_server_count(const ConnectionTally::Totals& totals, double elapsed_us) {
  SideResult mine = server_count(totals, elapsed_us);
  mine.messages = totals.requests;
  if (totals.failed > 0)
    mine.error = fmt::format("{} connection{} failed here, the first: {}", totals.failed,
                             totals.failed == 1 ? "" : "s", totals.first_failure);
  return mine;
}

}  // namespace

void serve_http_connection(std::unique_ptr<Stream>& stream, session::PendingTests& pending,
                           double& cpu_mark) {
  protocol::Cookie cookie{};
  std::error_code ec;
  stream->read_exact(cookie, ec);
  if (ec)
    throw Error(fmt::format("http connection without a cookie: {}", describe(ec, stream->error_detail())));
  const auto tally = std::dynamic_pointer_cast<HttpTally>(pending.sink(cookie));
  if (tally == nullptr) throw protocol::ProtocolError("http connection for an unknown or finished test");
  if (!tally->begin()) {  // past the test's time: closed unanswered, the client's run fails
    cpu_mark = measure::thread_cpu_s();
    return;
  }
  set_nodelay(stream->native_handle(), true);
  const HttpSideResult r = run_http_server(*stream, tally->version(), tally->idle());
  ConnectionTally::Ended ended{r.error, false, r.transactions, r.bytes_received, r.wire_sent, 0};
  if (const tls::TlsStream* tls = stream->tls()) {
    ended.resumed = tls->resumed();
    if (r.error.empty() && !tally->has_tls()) tally->note_tls(tls->session_info());
  }
  const double now_cpu_s = measure::thread_cpu_s();
  ended.cpu_s = now_cpu_s - cpu_mark;
  tally->end(ended);
  cpu_mark = now_cpu_s;
}

std::string serve_http_reconnecting(Stream& control, const protocol::TestRequest& request,
                                    session::ServerSide& side) {
  const RunClock clock;
  const session::Timeouts& t = side.config().timeouts;
  const auto tally = std::make_shared<HttpTally>(request.test.http.version, t.idle);
  const auto ticket = side.open_ticket(tally);
  // Each connector has one connection at a time; twice that, for the moment
  // between one's end and the next one's connect.
  std::string busy;
  const auto budget = side.reserve_connections(2 * request.test.streams, busy);
  if (!budget) session::refuse_test(control, busy);
  session::send_message(control, side.acceptance(ticket->cookie()), "the test acceptance");
  const std::int64_t start_ns = measure::now_ns();
  measure::RunWatch watch(0);  // the accepting threads serve every test: the host's CPU over this one
  const std::string stopped =
      await_client_count(control, *tally, request, side, fmt::format("http {}", to_string(request.mode)));
  control.set_deadline(Deadline::after(t.control));
  const auto theirs = session::receive<SideResult>(control, "the client's connection count");
  tally->close();
  const ConnectionTally::Totals totals = tally->settle(Deadline::after(t.control));
  const double elapsed_us = measure::ns_to_us(measure::now_ns() - start_ns);
  SideResult mine = http_server_count(totals, elapsed_us);
  if (mine.error.empty()) mine.error = stopped;
  mine.facts.host_cpu = watch.finish();
  if (mine.error.empty() && theirs.error.empty())
    mine.error = check_http_count(PeerJudge(Peer::client, clock.elapsed_us()), request, mine, theirs);
  session::send_message(control, mine, "the server's connection count");
  side.record(mine, theirs);
  return describe_test(request, totals, theirs, elapsed_us, mine.error);
}

}  // namespace tlscmp::kinds
