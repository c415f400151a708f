// --requests-per-connection against a tlscmp server: the connectors'
// connections each introduced by their preamble and the test's cookie
// (protocol::ConnectionKind::http), HTTP after it; at the end each side's
// count goes to the other, as crr's: connections, resumed ones, requests
// and bodies, CPU, which each side holds against its own.

#include <fmt/format.h>
#include <algorithm>

#include "kinds/data_connections.hpp"
#include "kinds/http/http.hpp"
#include "kinds/tls_failure.hpp"
#include "measure/clock.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// One connection of the test, its handshake done (timed in `us`, connect
// and handshake), and said to the server: preamble and cookie.
std::unique_ptr<Stream> dial_server(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                                    const protocol::TestAccept& accept, int control_fd,
                                    const tls::Session& resume, double& us) {
  std::unique_ptr<Stream> stream = connect_data_stream(config, tls, mode, accept, control_fd, us, resume);
  set_nodelay(stream->native_handle(), true);
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::http);
  std::vector<std::byte> head(preamble.begin(), preamble.end());
  head.insert(head.end(), accept.cookie.begin(), accept.cookie.end());
  std::error_code ec;
  stream->write_all(head, ec);
  if (ec)
    throw Error(fmt::format("the server did not take the connection: {}{}",
                            describe(ec, stream->error_detail()), rejection_hint(*stream, config)));
  return stream;
}

// This side's count as it goes to the server.
SideResult client_count(const HttpRun& run, const std::vector<HttpSideResult>& mine) {
  SideResult count;
  count.role = Role::sender;
  count.connections = run.connections_opened;
  count.resumed = run.resumed_connections;
  count.messages = run.requests;
  count.elapsed_us = run.elapsed_us;
  count.cpu_user_s = run.client.cpu_user_s;
  count.cpu_system_s = run.client.cpu_system_s;
  count.wire_bytes_sent = run.wire_sent;
  for (const HttpSideResult& r : mine) {
    count.bytes += r.bytes_received;
    if (count.error.empty() && !r.error.empty()) count.error = r.error;
  }
  return count;
}

}  // namespace

HttpRun run_http_reconnecting(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                              session::InterruptWatch& interrupt, int round,
                              measure::Environment& environment) {
  const RunClock clock;
  const session::Timeouts& timeouts = config.timeouts;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address));
  const session::InterruptWatch::Guard control_guard(interrupt, control.native_handle());
  protocol::TestRequest request = session::test_request(config, mode, tls);
  request.round = static_cast<std::uint32_t>(round);
  const protocol::TestAccept accept = session::start_test(control, request, timeouts, environment);

  HttpRun run;
  run.mode = mode;
  const std::vector<HttpClientSpec> specs = http_client_specs(config, request.test, measure::now_ns());
  const HttpDial dial = [&](const tls::Session& resume, double& us) {
    if (interrupt.interrupted()) throw Error("interrupted");
    return dial_server(config, tls, mode, accept, control.native_handle(), resume, us);
  };
  const std::vector<HttpSideResult> mine = run_connectors(config, tls != nullptr, specs, dial, run);
  aggregate_http(run, mine);
  if (interrupt.interrupted()) {
    run.partial = true;
    return run;
  }
  const SideResult count = client_count(run, mine);
  control.set_deadline(Deadline::after(
      count.error.empty() ? timeouts.control : std::min(timeouts.control, session::kResultGrace)));
  SideResult theirs;
  try {
    session::send_message(control, count, "the client's connection count");
    theirs = session::receive<SideResult>(control, "the server's connection count");
  } catch (const Error&) {
    if (count.error.empty()) throw;
    throw Error(count.error + " (the client)");
  }
  if (!count.error.empty()) throw Error(count.error + " (the client)");
  if (!theirs.error.empty()) throw Error(theirs.error + " (the server)");
  if (std::string line =
          check_http_count(PeerJudge(Peer::server, clock.elapsed_us()), request, count, theirs);
      !line.empty())
    throw Error(line);
  run.server.cpu_user_s = theirs.cpu_user_s;
  run.server.window_us = theirs.elapsed_us;
  run.server.facts = theirs.facts;
  session::await_close(control, timeouts.control);
  return run;
}

}  // namespace tlscmp::kinds
