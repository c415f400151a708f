#include "session/control.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <vector>

#include "measure/clock.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"
#include "version.hpp"

namespace tlscmp::session {
namespace {

[[noreturn]] void io_failure(const Stream& stream, const std::error_code& ec, const char* doing,
                             const char* what) {
  if (ec == TransportErrc::eof)
    throw Error(fmt::format("the peer closed the connection while {} {}", doing, what));
  throw Error(fmt::format("{} {}: {}", doing, what, describe(ec, stream.error_detail())));
}

// The server's preamble, as its bytes come: bytes that cannot begin one are
// another protocol, named at once (an HTTP server's answer to our request, an
// SSH banner) rather than after the timeout, and a server that sends nothing
// is told apart from one that sent something else, and a server of another
// protocol version is refused. `timeout` is the deadline the caller set, for
// the message.
void receive_server_preamble(Stream& control, std::chrono::milliseconds timeout) {
  // Taken first: a server that reset the connection has no peer address any more.
  const std::string server = peer_address(control.native_handle());
  protocol::Preamble preamble{};
  std::size_t got = 0;
  while (got < preamble.size()) {
    std::error_code ec;
    got += control.read_some(std::span(preamble).subspan(got), ec);
    const std::span<const std::byte> first(preamble.data(), got);
    if (!protocol::could_begin_preamble(first)) {
      // What else has come already, for the message: the first line of an answer.
      std::array<std::byte, 40> more{};
      std::copy(first.begin(), first.end(), more.begin());
      control.set_deadline(Deadline::after(std::chrono::milliseconds(100)));
      std::error_code ignored;
      const std::size_t extra = control.read_some(std::span(more).subspan(got), ignored);
      throw protocol::ProtocolError(
          fmt::format("the server at {} is not a tlscmp server: it sent {}; check the host and the port (-p)",
                      server, protocol::describe_foreign_bytes(std::span(more).first(got + extra))));
    }
    if (ec == TransportErrc::timeout) {
      const double seconds = std::chrono::duration<double>(timeout).count();
      throw Error(got == 0
                      ? fmt::format("the server at {} accepted the connection but sent nothing within {:g} "
                                    "s (--control-timeout): is it a tlscmp server, and is it running?",
                                    server, seconds)
                      : fmt::format("the server at {} sent {} bytes of a tlscmp preamble, then nothing "
                                    "within {:g} s (--control-timeout)",
                                    server, got, seconds));
    }
    if (ec) io_failure(control, ec, "receiving", "the server's answer");
  }
  const protocol::PreambleInfo info = protocol::parse_preamble(preamble);
  if (info.version != protocol::kVersion) {
    throw Error(
        fmt::format("the server speaks tlscmp protocol version {}, this client speaks version {}: run "
                    "the same tlscmp release on both hosts",
                    info.version, protocol::kVersion));
  }
}

}  // namespace

void send_message(Stream& stream, const protocol::Message& message, const char* what) {
  const std::vector<std::byte> frame = protocol::encode(message);
  std::error_code ec;
  stream.write_all(frame, ec);
  if (ec) io_failure(stream, ec, "sending", what);
}

protocol::Message receive_message(Stream& stream, const char* what) {
  std::array<std::byte, protocol::kFrameHeaderBytes> header{};
  std::error_code ec;
  stream.read_exact(header, ec);
  if (ec) io_failure(stream, ec, "receiving", what);
  // Checked against kMaxFrameBytes before anything is allocated.
  std::vector<std::byte> body(protocol::decode_frame_length(header));
  stream.read_exact(body, ec);
  if (ec) io_failure(stream, ec, "receiving", what);
  return protocol::decode(body);
}

void send_preamble(Stream& stream, protocol::ConnectionKind kind) {
  std::error_code ec;
  stream.write_all(protocol::encode_preamble(kind), ec);
  if (ec) io_failure(stream, ec, "sending", "the connection preamble");
}

protocol::Preamble read_preamble(Stream& stream, const char* what) {
  protocol::Preamble preamble{};
  std::error_code ec;
  stream.read_exact(preamble, ec);
  if (ec) io_failure(stream, ec, "receiving", what);
  return preamble;
}

protocol::PreambleInfo receive_preamble(Stream& stream, const char* what) {
  return protocol::parse_preamble(read_preamble(stream, what));
}

// Starts a test on its control connection: sends the request, returns the
// server's answer and notes the server's environment.
namespace {

// The libraries the server's TLS runs used, in order of first use ("; "
// between them); until a TLS run, the server's default.
void note_server_library(measure::Environment& environment, const std::string& library, bool encrypted) {
  std::vector<std::string>& used = environment.server_tls_libraries;
  if (encrypted && std::find(used.begin(), used.end(), library) == used.end()) used.push_back(library);
  environment.server_tls_library = used.empty() ? library : fmt::format("{}", fmt::join(used, "; "));
}

}  // namespace

protocol::TestAccept start_test(TcpStream& control, const protocol::TestRequest& request,
                                const Timeouts& timeouts, measure::Environment& environment) {
  set_nodelay(control.native_handle(), true);
  control.set_deadline(Deadline::after(timeouts.control));
  send_preamble(control, protocol::ConnectionKind::control);
  send_message(control, request, "the test request");
  // The server's preamble comes first: a server of another protocol version says which.
  receive_server_preamble(control, timeouts.control);
  protocol::TestAccept accept = receive<protocol::TestAccept>(control, "the server's answer");
  if (!request.tls_library.empty() && accept.tls_library_name != request.tls_library) {
    throw Error(fmt::format(
        "the server serves this test with {}, not the {} asked for: a run that names the server's TLS "
        "library (--tls-lib, --server-tls-lib) needs a server of tlscmp {} or later",
        accept.tls_library, request.tls_library, kVersion));
  }
  // The server's half of the environment, as it reported itself.
  environment.server_version = accept.server_version;
  note_server_library(environment, accept.tls_library, is_encrypted(request.mode));
  environment.server_cpu_model = accept.cpu_model;
  environment.server_cpu_features = accept.cpu_features;
  environment.server_kernel = accept.kernel;
  environment.server_tls_ulps = accept.tls_ulps;
  return accept;
}

namespace {

// The exchange, with when the request went and the reply came (wall clock).
protocol::ClockReply exchange_clock(const ClientConfig& config, std::int64_t& sent, std::int64_t& received) {
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(config.timeouts.connect), config.bind_address));
  set_nodelay(control.native_handle(), true);
  control.set_deadline(Deadline::after(config.timeouts.control));
  send_preamble(control, protocol::ConnectionKind::control);
  sent = measure::wall_ns();
  send_message(control, protocol::ClockRequest{}, "the clock request");
  receive_server_preamble(control, config.timeouts.control);
  protocol::ClockReply reply;
  try {
    reply = receive<protocol::ClockReply>(control, "the server's clock");
  } catch (const Error& e) {
    throw Error(fmt::format("the server did not tell its clock ({}): a server of tlscmp {} or later does",
                            e.what(), kVersion));
  }
  received = measure::wall_ns();
  return reply;
}

}  // namespace

double server_clock_offset_s(const ClientConfig& config) {
  std::int64_t sent = 0;
  std::int64_t received = 0;
  const protocol::ClockReply reply = exchange_clock(config, sent, received);
  return static_cast<double>(reply.realtime_ns - (sent + (received - sent) / 2)) / 1e9;
}

protocol::ClockReply ask_server(const ClientConfig& config) {
  std::int64_t sent = 0;
  std::int64_t received = 0;
  return exchange_clock(config, sent, received);
}

protocol::TestRequest test_request(const ClientConfig& config, Mode mode, const tls::Context* tls) {
  protocol::TestRequest r;
  r.test = config.test;
  r.mode = mode;
  r.client_version = kVersion;
  r.server_cpu = config.server_cpu;
  if (facts(mode).tls_over_tcp) r.cipher = config.tls_policy.cipher;
  if (facts(mode).tls_over_tcp && tls != nullptr) r.tls_library = tls->server_library();
  return r;
}

void await_close(Stream& control, std::chrono::milliseconds wait) {
  control.set_deadline(Deadline::after(wait));
  std::array<std::byte, 256> sink{};
  std::error_code ec;
  while (!ec)
    control.read_some(sink, ec);
}

void refuse_test(Stream& control, const std::string& reason) {
  try {
    send_message(control, protocol::Refusal{reason}, "the refusal");
  } catch (const Error&) {
    // The client may be gone already; the log line says why we stopped.
  }
  throw Error(reason);
}

}  // namespace tlscmp::session
