// The server half of handshake tests (see kinds/handshake/handshake.hpp).

#include <poll.h>

#include <fmt/format.h>

#include "kinds/data_connections.hpp"
#include "kinds/handshake/handshake.hpp"
#include "session/control.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// How often the server looks at a handshake test's progress while it waits for the count.
constexpr std::chrono::milliseconds kHandshakeCheck{250};

}  // namespace

// One connection of a handshake test: the TLS handshake is done; count it,
// answer with one byte (so that the client takes in its session tickets),
// and close.
void serve_handshake_connection(Stream& stream, session::PendingTests& pending) {
  if (!stream.is_tls()) throw protocol::ProtocolError("a handshake connection must be TLS");
  protocol::Cookie cookie{};
  std::error_code ec;
  stream.read_exact(cookie, ec);
  if (ec)
    throw Error(
        fmt::format("handshake connection without a cookie: {}", describe(ec, stream.error_detail())));
  if (!pending.probe(cookie))
    throw protocol::ProtocolError("handshake connection for an unknown or finished test");
  stream.write_all({&kReadyByte, 1}, ec);
  // A clean close: OpenSSL forgets a session whose connection ended without close_notify.
  if (!ec) stream.shutdown_send(ec);
}

// A handshake test's control session: the client makes its connections, then
// says how many; both counts must agree.
std::string serve_handshake_test(Stream& control, const protocol::TestRequest& request,
                                 session::ServerSide& side) {
  const session::Timeouts& t = side.config().timeouts;
  // The client's connections come one after another: room for two, the one
  // ending and the next.
  std::string busy;
  const auto budget = side.reserve_connections(2, busy);
  if (!budget) session::refuse_test(control, busy);
  const std::uint64_t connections = 2 * std::uint64_t{request.test.handshake.handshakes};  // full and resumed
  const auto ticket = side.open_ticket(0, connections);
  session::send_message(control, side.acceptance(ticket->cookie()), "the test acceptance");
  // The client's count comes once its handshakes are done. Meanwhile each
  // handshake may take up to a connect and a handshake timeout from the last
  // one, and all of them the server's --max-duration: a client cannot hold
  // the test open with one handshake now and then.
  const auto gap = t.connect + t.handshake;
  const Deadline overall = Deadline::after(side.config().max_duration);
  Deadline next = Deadline::after(gap + t.control);
  std::uint64_t seen = 0;
  while (wait_fd(control.native_handle(), POLLIN,
                 Deadline::earlier(next, Deadline::after(kHandshakeCheck))) == TransportErrc::timeout) {
    if (side.stopping()) throw Error("the server is stopping");
    if (const std::uint64_t now = ticket->probes(); now != seen) {
      seen = now;
      next = Deadline::after(gap + t.control);
    }
    if (next.expired()) {
      throw Error(fmt::format("tls handshake test: no handshake for {:g} s after {} of {}",
                              std::chrono::duration<double>(gap + t.control).count(), seen, connections));
    }
    if (overall.expired()) {
      throw Error(
          fmt::format("tls handshake test: past this server's --max-duration of {:g} s after {} of {}",
                      std::chrono::duration<double>(side.config().max_duration).count(), seen, connections));
    }
  }
  control.set_deadline(Deadline::after(t.control));
  const auto theirs = session::receive<SideResult>(control, "the client's handshake count");
  SideResult mine;
  mine.role = Role::receiver;
  mine.bytes = ticket->probes();
  // The client's count, judged here: a disagreement fails the test on both sides.
  if (theirs.error.empty())
    mine.error = check_peer_handshakes(PeerJudge(Peer::client, /*wall_us=*/0), mine, theirs);
  control.set_deadline(Deadline::after(t.control));
  session::send_message(control, mine, "the server's handshake count");
  side.record(mine, theirs);
  if (!mine.error.empty()) return "tls handshake test failed: " + mine.error;
  return fmt::format("tls handshake test: {} of {} connections served{}", mine.bytes, connections,
                     theirs.error.empty() ? "" : ", client: " + theirs.error);
}

}  // namespace tlscmp::kinds
