// The server half of a bulk stream test (see kinds/stream/stream.hpp).

#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <optional>

#include "kinds/calibration.hpp"
#include "kinds/data_connections.hpp"
#include "kinds/stream/stream.hpp"
#include "kinds/stream/streams.hpp"
#include "kinds/stream/transfer.hpp"
#include "measure/units.hpp"
#include "session/control.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

using session::kResultGrace;
using session::receive;
using session::send_message;

// The server's log line for one test. `client` is empty when the client's
// result never came (the exchange failed with `exchange_error`).
std::string describe_test(const protocol::TestRequest& request, const SideResult& server,
                          const std::optional<SideResult>& client, const std::string& exchange_error,
                          const std::string& tls_description) {
  const std::string what =
      fmt::format("{} {}", to_string(request.mode), to_string(request.test.stream.direction));
  // Failures name the client's round too, as the client's own line does.
  const std::string failed =
      fmt::format("{}{} failed", what, request.round > 0 ? fmt::format(" round {}", request.round) : "");
  // A side's own error already names how many bytes it moved.
  if (!server.error.empty()) return fmt::format("{}: {}", failed, server.error);
  if (client && !client->error.empty()) return fmt::format("{} on the client: {}", failed, client->error);
  if (!client) {
    const std::string of = request.test.stream.bytes > 0
                               ? fmt::format("{} of {}", server.bytes, request.test.stream.bytes)
                               : std::to_string(server.bytes);
    return fmt::format("{} after {} bytes {}: {}", failed, of,
                       server.role == Role::receiver ? "received" : "sent", exchange_error);
  }
  const SideResult& receiver = server.role == Role::receiver ? server : *client;
  const SideResult& sender = server.role == Role::sender ? server : *client;
  std::string text = fmt::format(
      "{} {} bytes in {:.0f} us ({:.1f} MB/s), sender {:.0f} us", what, receiver.bytes, receiver.elapsed_us,
      receiver.elapsed_us > 0 ? static_cast<double>(receiver.bytes) / receiver.elapsed_us : 0.0,
      sender.elapsed_us);
  if (!tls_description.empty()) text += ", " + tls_description;
  return text;
}

// The buffers this server holds for the test: each stream's chunk (or its
// read buffer), and on a stream it receives the longest message it may have
// to assemble (--max-msg, or the test's message size if smaller).
std::uint64_t buffer_bytes(const protocol::TestRequest& request, std::uint64_t max_msg) {
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < request.test.streams; ++i) {
    const bool receives = stream_role(request.test.stream.direction, request.test.stream.bidir, i,
                                      /*server_side=*/true) == Role::receiver;
    total += receives && request.test.stream.read_size > 0 ? request.test.stream.read_size
                                                           : request.test.chunk_bytes;
    if (receives && request.test.stream.msg_size > 0)
      total += std::min(request.test.stream.msg_size, max_msg);
  }
  return total;
}

// Room for the test's data connections and buffers, or the test is refused
// with the reason.
std::vector<std::shared_ptr<void>> reserve(Stream& control, const protocol::TestRequest& request,
                                           session::ServerSide& side) {
  const session::ServerConfig& config = side.config();
  const std::uint64_t bytes = buffer_bytes(request, config.max_msg);
  if (bytes > config.max_test_memory) {
    session::refuse_test(
        control,
        fmt::format(
            "the test would hold {} of buffers on this server ({} stream{} of {} chunks{}); it "
            "allows {} a test (--max-test-memory): use fewer streams or smaller {}",
            measure::format_bytes(bytes), request.test.streams, request.test.streams == 1 ? "" : "s",
            measure::format_bytes(request.test.chunk_bytes),
            request.test.stream.msg_size > 0
                ? fmt::format(" and messages of up to {}",
                              measure::format_bytes(std::min(request.test.stream.msg_size, config.max_msg)))
                : "",
            measure::format_bytes(config.max_test_memory),
            request.test.stream.msg_size > 0 ? "messages" : "chunks"));
  }
  std::string busy;
  std::vector<std::shared_ptr<void>> held{side.reserve_memory(bytes, busy)};
  if (!held.back()) session::refuse_test(control, busy);
  held.push_back(reserve_data_connections(control, request, side));
  return held;
}

// The client's figures, where neither side failed: the first that
// disagrees is this side's error on its stream, so that the test is logged
// and recorded as failed.
void judge_client_streams(const PeerJudge& judge, std::vector<SideResult>& mine,
                          const std::vector<SideResult>& theirs) {
  const auto failed = [](const SideResult& r) { return !r.error.empty(); };
  if (theirs.empty() || std::any_of(mine.begin(), mine.end(), failed) ||
      std::any_of(theirs.begin(), theirs.end(), failed)) {
    return;
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (std::string line = check_peer_stream(judge, mine[i], theirs[i]); !line.empty()) {
      mine[i].error = std::move(line);
      return;
    }
  }
}

// A TLS test's calibration on this host, with each stream's result, where
// every stream moved its bytes in user space (kTLS has no record layer here).
void add_calibration(const protocol::TestRequest& request, const std::string& suite,
                     std::vector<SideResult>& mine) {
  const auto whole = [](const SideResult& r) { return r.error.empty() && !r.ktls_send && !r.ktls_receive; };
  if (suite.empty() || !std::all_of(mine.begin(), mine.end(), whole)) return;
  const std::optional<measure::TlsCalibration> calibration =
      calibration_for(library_of(request), suite, request.test.chunk_bytes, request.test.record_size,
                      request.test.stream.read_size);
  for (SideResult& result : mine)
    result.calibration = calibration;
}

}  // namespace

std::string serve_stream_test(Stream& control, const protocol::TestRequest& request,
                              session::ServerSide& side) {
  const RunClock clock;  // the run on this side, for judging the client's figures
  const session::Timeouts& t = side.config().timeouts;
  const auto reserved = reserve(control, request, side);
  const auto ticket_holder = side.open_ticket(request.test.streams, 0);
  session::PendingTests::Ticket& ticket = *ticket_holder;
  session::send_message(control, side.acceptance(ticket.cookie()), "the test acceptance");

  std::vector<std::unique_ptr<Stream>> data = await_data_connections(control, request, side, ticket);

  std::vector<SideResult> mine;
  std::string tls_description;
  std::string suite;  // TLS: as negotiated
  {
    std::vector<std::unique_ptr<session::ServerSide::LiveSocket>> live;
    std::vector<StreamWork> work;
    for (std::uint32_t i = 0; i < data.size(); ++i) {
      Stream& stream = *data[i];
      live.push_back(
          std::make_unique<session::ServerSide::LiveSocket>(side.register_live(stream.native_handle())));
      if (tls::TlsStream* tls_stream = stream.tls()) {
        const tls::SessionInfo info = tls_stream->session_info();
        tls_description = fmt::format("{} {} {}", info.version, info.cipher, info.group);
        suite = info.cipher;
        if (!info.client_certificate_key_type.empty()) {
          tls_description += fmt::format(", client certificate {}", info.client_certificate_key_type);
        }
        if (request.test.record_size != 0) tls_stream->set_max_record_size(request.test.record_size);
      }
      set_socket_buffers(stream.native_handle(), request.test.sndbuf_bytes, request.test.rcvbuf_bytes);
      send_ready(stream, t.handshake);
      TransferSpec spec = transfer_spec(
          request,
          stream_role(request.test.stream.direction, request.test.stream.bidir, i, /*server_side=*/true),
          t.idle);
      spec.max_duration = side.config().max_duration;
      spec.max_msg = std::min(spec.max_msg, side.config().max_msg);
      spec.min_rate = side.config().min_rate;
      work.push_back({&stream, spec});
    }
    mine = run_streams(work, request.server_cpu);
    live.clear();  // before the sockets close
  }
  data.clear();
  add_calibration(request, suite, mine);

  // Results both ways, stream by stream. A client that vanished is logged with what this side saw.
  std::vector<SideResult> theirs;
  std::string exchange_error;
  // After a failure here (a stall, say) the client's result may never come:
  // a short grace, then this side's account goes to the log.
  const bool failed_here =
      std::any_of(mine.begin(), mine.end(), [](const SideResult& m) { return !m.error.empty(); });
  try {
    control.set_deadline(Deadline::after(failed_here ? std::min(t.control, kResultGrace) : t.control));
    for (const SideResult& result : mine)
      send_message(control, result, "the server's result");
    for (std::size_t i = 0; i < mine.size(); ++i) {
      theirs.push_back(receive<SideResult>(control, "the client's result"));
      if (theirs.back().stream != i || theirs.back().role == mine[i].role) {
        throw protocol::ProtocolError("the client's results do not match the streams");
      }
    }
  } catch (const Error& e) {
    theirs.clear();
    exchange_error = e.what();
  }
  judge_client_streams(PeerJudge(Peer::client, clock.elapsed_us(), request.test.streams), mine, theirs);
  side.record(mine, theirs);
  const std::optional<SideResult> client = theirs.empty() ? std::nullopt : std::optional(combine(theirs));
  return fmt::format("{}{}", describe_test(request, combine(mine), client, exchange_error, tls_description),
                     mine.size() > 1 ? fmt::format(", {} streams{}", mine.size(),
                                                   request.test.stream.bidir ? " both ways" : "")
                                     : "");
}

}  // namespace tlscmp::kinds
