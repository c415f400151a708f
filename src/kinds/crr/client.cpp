// The client half of a connection-per-transaction test (see kinds/crr/crr.hpp).

#include <poll.h>

#include <fmt/format.h>
#include <algorithm>
#include <barrier>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "kinds/calibration.hpp"
#include "kinds/crr/crr.hpp"
#include "kinds/data_connections.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/exchange.hpp"
#include "measure/clock.hpp"
#include "measure/environment.hpp"
#include "measure/host.hpp"
#include "measure/latency.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "stacks/stack.hpp"
#include "transport/datagram.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// A connector that fails this many connections in a row stops: the server
// is gone, full, or refusing, and more attempts would only say so again.
constexpr int kMaxFailuresInARow = 20;

// What one connector counted.
struct Connector {
  measure::LatencyHistogram connect;
  measure::LatencyHistogram handshake;
  measure::LatencyHistogram response;
  measure::LatencyHistogram total;
  std::uint64_t connections = 0;
  std::uint64_t failed = 0;
  std::uint64_t resumed = 0;
  std::uint64_t refused = 0;
  std::uint64_t primed = 0;         // connections made for a first session, not counted
  std::uint64_t primed_failed = 0;  // such a connection that failed (the connector stopped)
  std::map<std::string, std::uint64_t> failures;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  double cpu_s = 0;  // CPU seconds of the connector's thread, user and system
  std::int64_t end_ns = 0;
  std::string resumed_by;
  std::optional<measure::TlsParameters> tls;  // of its first full handshake
  std::string stopped;                        // why it stopped early, or ""
};

// What every connector of a run shares.
struct Plan {
  const session::ClientConfig& config;
  const tls::Context* tls;
  const CrrVariant& variant;
  SocketAddress to;
  std::optional<SocketAddress> from;  // -B
  std::string server_name;            // SNI: the key type's name, or "" for the host
  std::vector<std::byte> head;        // preamble, cookie, and the request's first piece
  std::uint64_t request_rest = 0;     // request bytes after the head
  std::uint64_t response_bytes = 0;
  session::InterruptWatch& interrupt;
};

// A resumed variant's next session to offer: this connection's own ticket.
// A TLS 1.3 ticket over TCP comes before the response; over QUIC it may come
// in a later packet than the response, and a ticket offered twice may be
// refused, so a connection waits a while for its own before it closes (as
// a client that means to resume must). Where none came, the session it
// resumed is offered again.
void take_session(Stream& stream, tls::TlsStream& tls, tls::Session& session) {
  constexpr std::chrono::milliseconds kTicketWait{1000};
  if (facts(stream.mode()).over_udp) {
    const Deadline until = Deadline::after(kTicketWait);
    std::error_code ignored;
    // Readable: the server's end came, and with it what it had to send.
    while (!tls.has_new_session() && !until.expired() &&
           !stream.readable_within(std::chrono::milliseconds(5), ignored)) {
    }
  }
  if (tls.has_new_session() || !session) session = tls.session();
}

// One connection, from connect to close. Counted in `c` when `counted`.
// Returns "" when it completed, else its failure's cause ("connect:
// Connection refused"), which is also the key it is counted under.
std::string one_connection(const Plan& plan, Connector& c, tls::Session& session, bool counted,
                           std::vector<std::byte>& buffer) {
  const session::Timeouts& t = plan.config.timeouts;
  const std::int64_t start = measure::now_ns();
  std::error_code ec;
  const char* where = "connect";
  const bool quic = facts(plan.variant.mode).over_udp;
  // QUIC: a connected UDP socket, no round trip; its handshake is the connection's.
  UniqueFd fd = quic ? connect_udp(plan.to, plan.from ? &*plan.from : nullptr, ec)
                     : connect_to(plan.to, plan.from ? &*plan.from : nullptr,
                                  plan.config.test.crr.close == spec::Close::reset,
                                  Deadline::after(t.connect), ec, where);
  if (!fd.valid()) return fmt::format("{}: {}", where, describe(ec));
  const std::int64_t connected = measure::now_ns();

  const bool offered = plan.variant.resume && static_cast<bool>(session);
  std::unique_ptr<Stream> stream =
      stacks::client_stream(plan.variant.mode, std::move(fd), plan.tls,
                            {plan.config.host, offered ? session : tls::Session{}, plan.server_name,
                             plan.tls != nullptr ? plan.tls->server_library() : std::string()});
  stream->set_deadline(Deadline::after(t.handshake));
  if (const std::error_code failed = stream->handshake())
    return fmt::format("handshake: {}", describe(failed, stream->error_detail()));
  tls::TlsStream* tls_stream = stream->tls();
  const std::int64_t shaken = measure::now_ns();

  const Deadline idle = Deadline::after(t.idle);
  stream->set_deadline(idle);
  stream->write_all(plan.head, ec);
  if (!ec) write_message(*stream, plan.request_rest, t.idle, ec);
  // The response cannot be there yet: wait for it before the first read
  // (which would only say EAGAIN), unless TLS holds some of it already.
  if (!ec && !quic && !stream->has_buffered()) ec = wait_fd(stream->native_handle(), POLLIN, idle);
  if (!ec) read_message(*stream, plan.response_bytes, buffer, t.idle, ec);
  if (ec) {
    return fmt::format("{}: {}", ec == TransportErrc::eof ? "response" : "request/response",
                       ec == TransportErrc::eof ? "the server closed the connection before its response"
                                                : describe(ec, stream->error_detail()));
  }
  const std::int64_t answered = measure::now_ns();

  std::uint64_t sent = plan.head.size() + plan.request_rest;
  std::uint64_t received = plan.response_bytes;
  if (tls_stream != nullptr) {
    if (plan.variant.resume) take_session(*stream, *tls_stream, session);
    const bool resumed = tls_stream->resumed();
    if (counted && resumed) {
      ++c.resumed;
      c.resumed_by = tls_stream->resumed_by();
    }
    if (counted && offered && !resumed) ++c.refused;
    if (!c.tls && !resumed) c.tls = tls_parameters(*stream, 0);
    // close_notify, as the ceiling's SSL_shutdown sends it; OpenSSL keeps a
    // server's session for resumption only after a clean close.
    std::error_code ignored;
    if (!quic) tls_stream->send_close_notify(ignored);  // QUIC: the stream's end closes rapidly
    sent = tls_stream->bytes_written();
    received = tls_stream->bytes_read();
  }
  stream.reset();  // --close reset: SO_LINGER 0, RST, and no TIME_WAIT on this host
  if (!counted) return {};
  c.end_ns = measure::now_ns();
  ++c.connections;
  c.connect.add(measure::ns_to_us(connected - start));
  if (tls_stream != nullptr) c.handshake.add(measure::ns_to_us(shaken - connected));
  c.response.add(measure::ns_to_us(answered - shaken));
  c.total.add(measure::ns_to_us(answered - start));
  c.bytes_sent += sent;
  c.bytes_received += received;
  return {};
}

// A connector: one first connection for a session to offer (tls-resumed),
// then, once every connector is ready, `attempts` connections (0: until
// `stop_ns`), each counted or its failure counted.
void run_connector(const Plan& plan, Connector& c, std::uint64_t attempts,
                   std::barrier<std::function<void()>>& start, const std::int64_t& stop_ns) {
  std::vector<std::byte> buffer(std::clamp<std::uint64_t>(plan.response_bytes, 1, kMaxMessagePiece));
  tls::Session session;
  if (plan.variant.resume) {
    const std::string failure = one_connection(plan, c, session, /*counted=*/false, buffer);
    if (failure.empty()) {
      ++c.primed;
    } else {
      ++c.primed_failed;
      c.stopped = "the first connection, for a session to resume, failed: " + failure;
    }
  }
  start.arrive_and_wait();  // the completion sets stop_ns
  c.end_ns = measure::now_ns();
  if (!c.stopped.empty()) return;
  const double cpu_start = measure::thread_cpu_s();
  int in_a_row = 0;
  for (std::uint64_t i = 0; attempts == 0 || i < attempts; ++i) {
    if (plan.interrupt.interrupted() || (attempts == 0 && measure::now_ns() >= stop_ns)) break;
    const std::string failure = one_connection(plan, c, session, /*counted=*/true, buffer);
    if (failure.empty()) {
      in_a_row = 0;
      continue;
    }
    ++c.failed;
    ++c.failures[failure];
    c.end_ns = measure::now_ns();
    if (++in_a_row == kMaxFailuresInARow) {
      c.stopped = fmt::format("{} connections in a row failed, the last with {}", in_a_row, failure);
      break;
    }
  }
  c.cpu_s = measure::thread_cpu_s() - cpu_start;
}

// The connectors' figures as the run's.
void aggregate(CrrRun& run, const std::vector<Connector>& connectors, std::int64_t go_ns) {
  measure::LatencyHistogram connect, handshake, response, total;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::int64_t end_ns = go_ns;
  for (const Connector& c : connectors) {
    run.connections += c.connections;
    run.failed += c.failed;
    run.resumed += c.resumed;
    run.refused += c.refused;
    for (const auto& [cause, count] : c.failures)
      run.failures[cause] += count;
    if (!c.resumed_by.empty()) run.resumed_by = c.resumed_by;
    if (c.tls && run.tls.version.empty()) run.tls = *c.tls;
    connect += c.connect;
    handshake += c.handshake;
    response += c.response;
    total += c.total;
    sent += c.bytes_sent;
    received += c.bytes_received;
    run.client.cpu_user_s += c.cpu_s;  // the total: see CrrRun
    end_ns = std::max(end_ns, c.end_ns);
  }
  run.elapsed_us = measure::ns_to_us(end_ns - go_ns);
  run.client.window_us = run.elapsed_us;
  run.connect = connect.summary();
  run.handshake = handshake.summary();
  run.response = response.summary();
  run.total = total.summary();
  if (run.connections > 0) {
    run.bytes_sent = static_cast<double>(sent) / static_cast<double>(run.connections);
    run.bytes_received = static_cast<double>(received) / static_cast<double>(run.connections);
  }
}

// This side's count as it goes to the server: every connection tried, the
// first ones for a session included (the server served them as any).
// `primed` is set to how many of those completed.
SideResult client_count(const CrrRun& run, const std::vector<Connector>& connectors, std::uint64_t& primed) {
  std::uint64_t primed_failed = 0;
  for (const Connector& c : connectors) {
    primed += c.primed;
    primed_failed += c.primed_failed;
  }
  SideResult mine;
  mine.role = Role::sender;
  mine.connections = run.connections + primed;
  mine.resumed = run.resumed;
  mine.failed = run.failed + primed_failed;
  mine.bytes = static_cast<std::uint64_t>(run.bytes_received * static_cast<double>(run.connections));
  mine.elapsed_us = run.elapsed_us;
  return mine;
}

// Preamble, cookie and the request's first piece: one write for a small request.
std::vector<std::byte> request_head(const protocol::Cookie& cookie, std::uint64_t request_bytes) {
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::crr);
  std::vector<std::byte> head(preamble.size() + cookie.size() +
                              std::min<std::uint64_t>(request_bytes, kMaxMessagePiece));
  std::copy(cookie.begin(), cookie.end(), std::copy(preamble.begin(), preamble.end(), head.begin()));
  return head;
}

// What every connector of the test shares: the address the control
// connection reached, resolved once for every connection, and the request.
Plan make_plan(const session::ClientConfig& config, const tls::Context* tls, const CrrVariant& variant,
               session::InterruptWatch& interrupt, TcpStream& control, const protocol::TestAccept& accept,
               const protocol::TestRequest& request) {
  Plan plan{config,
            tls,
            variant,
            peer_socket_address(control.native_handle()),
            std::nullopt,
            variant.key_type.empty() ? std::string() : protocol::key_type_server_name(variant.key_type),
            request_head(accept.cookie, request.test.rr.request_bytes),
            0,
            request.test.rr.response_bytes,
            interrupt};
  if (!config.bind_address.empty()) plan.from = local_socket_address(control.native_handle());
  plan.request_rest = request.test.rr.request_bytes -
                      std::min<std::uint64_t>(request.test.rr.request_bytes, kMaxMessagePiece);

  return plan;
}

}  // namespace

CrrRun run_crr_test(const session::ClientConfig& config, const tls::Context* tls, const CrrVariant& variant,
                    session::InterruptWatch& interrupt, int round, measure::Environment& environment) {
  const RunClock clock;  // the run on this side, for judging the server's figures
  const session::Timeouts& timeouts = config.timeouts;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address));
  const session::InterruptWatch::Guard control_guard(interrupt, control.native_handle());
  protocol::TestRequest request = session::test_request(config, variant.mode, tls);
  request.round = static_cast<std::uint32_t>(round);
  request.key_type = variant.key_type;
  const protocol::TestAccept accept = session::start_test(control, request, timeouts, environment);

  const Plan plan = make_plan(config, tls, variant, interrupt, control, accept, request);
  CrrRun run;
  run.mode = variant.mode;
  run.resumption = variant.resume;
  run.key_type = variant.key_type;
  run.connectors = request.test.streams;
  run.time_wait_before = measure::time_wait_sockets();

  const std::uint32_t count = request.test.streams;
  std::vector<Connector> connectors(count);
  std::int64_t go_ns = 0;
  std::int64_t stop_ns = 0;
  std::barrier<std::function<void()>> start(static_cast<std::ptrdiff_t>(count), [&]() noexcept {
    go_ns = measure::now_ns();
    stop_ns = go_ns + std::chrono::nanoseconds(config.test.duration()).count();
  });
  // A connector's connections come and go: no socket to watch, but its CPU and placement.
  const std::vector<RunFacts> facts =
      run_data_threads(std::vector<int>(count, -1), config.client_cpu, [&](std::size_t i) {
        const std::uint64_t attempts =
            request.test.rr.transactions > 0
                ? share(request.test.rr.transactions, count, static_cast<std::uint32_t>(i))
                : 0;
        run_connector(plan, connectors[i], attempts, start, stop_ns);
      });
  aggregate(run, connectors, go_ns);
  run.client.facts = measure::merge_facts(facts);
  run.time_wait_after = measure::time_wait_sockets();
  if (interrupt.interrupted()) {
    run.partial = true;
    return run;
  }

  // The counts both ways; the server's account first, as it may explain the
  // connections that failed here (--max-duration, say).
  std::uint64_t primed = 0;
  const SideResult mine = client_count(run, connectors, primed);
  control.set_deadline(Deadline::after(timeouts.control));
  session::send_message(control, mine, "the client's connection count");
  // The server then waits up to a control timeout for its last connections
  // to be counted, and calibrates: twice the timeout for its answer.
  control.set_deadline(Deadline::after(2 * timeouts.control));
  const auto theirs = session::receive<SideResult>(control, "the server's connection count");
  if (!theirs.error.empty()) throw Error("the server: " + theirs.error);
  const auto stopped = std::find_if(connectors.begin(), connectors.end(),
                                    [](const Connector& c) { return !c.stopped.empty(); });
  if (run.connections == 0 && stopped != connectors.end()) throw Error(stopped->stopped);
  if (const std::string line =
          check_peer_count(PeerJudge(Peer::server, clock.elapsed_us()), request, mine, theirs);
      !line.empty()) {
    throw Error(line);
  }
  run.server_connections = theirs.connections >= primed ? theirs.connections - primed : 0;
  run.server_resumed = theirs.resumed;
  run.server.cpu_user_s = theirs.cpu_user_s + theirs.cpu_system_s;
  run.server.window_us = theirs.elapsed_us;
  run.server.facts = theirs.facts;
  session::await_close(control, timeouts.control);
  // This host's calibration; the server's came with its count.
  if (!run.tls.cipher.empty()) {
    run.client.transaction_calibration = transaction_calibration_for(
        tls->backend(), run.tls.cipher,
        connection_shape(request.test, run.tls.certificate_key_type, run.tls.group, variant.resume));
    run.server.transaction_calibration = theirs.transaction_calibration;
  }
  return run;
}

}  // namespace tlscmp::kinds
