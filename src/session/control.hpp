#pragma once

// Control messages over a stream: framing on top of protocol/ encode/decode.

#include <chrono>
#include <string>

#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "tls/context.hpp"
#include "transport/stream.hpp"

namespace tlscmp::session {

// Both throw tlscmp::Error (ProtocolError for malformed input) with a one-line
// reason; `what` names the exchange ("the test request") for that reason.
void send_message(Stream& stream, const protocol::Message& message, const char* what);
protocol::Message receive_message(Stream& stream, const char* what);
template <protocol::KindResultType T>
void send_message(Stream& stream, const T& result, const char* what) {
  send_message(stream, protocol::kind_result(result), what);
}

// After a failure on its own side, how long one side waits for the other's
// result before its own account stands: the other may be unreachable.
inline constexpr std::chrono::milliseconds kResultGrace{500};

// Receives a message that must be of type T. A Refusal arriving instead is
// thrown as tlscmp::Error carrying the peer's reason.
// A kind's result (protocol::KindResultType) is read back through its walk.
template <typename T>
T receive(Stream& stream, const char* what) {
  protocol::Message message = receive_message(stream, what);
  if constexpr (protocol::KindResultType<T>) {
    if (auto* m = std::get_if<protocol::KindResult>(&message); m && m->type == T::kWireType)
      return protocol::read_result<T>(*m);
  } else {
    if (auto* m = std::get_if<T>(&message)) return std::move(*m);
  }
  if (auto* refusal = std::get_if<protocol::Refusal>(&message)) {
    // "server busy: ..." says it all; other refusals say who refused.
    throw Error(refusal->reason.rfind("server busy", 0) == 0 ? refusal->reason
                                                             : "refused: " + refusal->reason);
  }
  throw protocol::ProtocolError(std::string("unexpected message instead of ") + what);
}

// How far the server's wall clock is ahead of this host's (negative:
// behind), in seconds, from one exchange on a new control connection: the
// server's time against the middle of the round trip. Throws tlscmp::Error
// (a server older than --start-at says so).
double server_clock_offset_s(const ClientConfig& config);
// What the server says of itself in a control session that runs no test
// (a ClockRequest): its clock and whether it serves quic.
protocol::ClockReply ask_server(const ClientConfig& config);

// Tells the client why its test cannot run (a Refusal; the client may be gone
// already), then throws tlscmp::Error with that reason for the server's log.
[[noreturn]] void refuse_test(Stream& control, const std::string& reason);

// The test a client asks for when it runs `mode` with `config`: the one
// description that both halves read (the server from the wire). Stream and
// datagram kinds; the kind's own fields (a seed, the round) are added by it.
// `tls`: the variant's TLS context, whose server library the request names.
protocol::TestRequest test_request(const ClientConfig& config, Mode mode, const tls::Context* tls);

// The client's start of a test on its control connection: sends the
// preamble and the request, checks the server's preamble, returns the
// server's acceptance (a refusal is thrown with its reason) and notes the
// server's half of the environment.
protocol::TestAccept start_test(TcpStream& control, const protocol::TestRequest& request,
                                const Timeouts& timeouts, measure::Environment& environment);

// The client's end of a test's control session: waits (at most `wait`) for
// the server to close it. By then the server has counted the test as done,
// so that the next test cannot find it still running (--max-clients 1).
void await_close(Stream& control, std::chrono::milliseconds wait);

// Writes this build's 8-byte preamble for a connection of `kind`.
void send_preamble(Stream& stream, protocol::ConnectionKind kind);

// Reads the 8-byte connection preamble; throws ProtocolError if it is not
// tlscmp's. The version is not judged here: see protocol::check_version.
// `what` names the exchange for messages ("the server's answer").
protocol::PreambleInfo receive_preamble(Stream& stream, const char* what = "the connection preamble");
// Its bytes as they came, whatever they are: the server's dispatch reads
// them so, as another protocol's first bytes may stand in their place (a
// kind's `claims`, kinds/kind.hpp). Throws Error as receive_preamble does.
protocol::Preamble read_preamble(Stream& stream, const char* what = "the connection preamble");

}  // namespace tlscmp::session
