// The server half of a request/response test (see kinds/rr/rr.hpp).

#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <thread>

#include "kinds/calibration.hpp"
#include "kinds/data_connections.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/exchange.hpp"
#include "kinds/rr/rr.hpp"
#include "measure/clock.hpp"
#include "session/control.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// The server's log line: what ran, and how it ended.
std::string describe_test(const protocol::TestRequest& request, const std::vector<RrSideResult>& mine,
                          const std::vector<SideResult>& theirs, const std::string& exchange_error,
                          const std::string& tls_description) {
  const std::string what = fmt::format("rr {} {}/{}", to_string(request.mode), request.test.rr.request_bytes,
                                       request.test.rr.response_bytes);
  const std::string failed =
      fmt::format("{}{} failed", what, request.round > 0 ? fmt::format(" round {}", request.round) : "");
  std::uint64_t transactions = 0;
  std::int64_t first = INT64_MAX;
  std::int64_t last = INT64_MIN;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const std::string which = mine.size() > 1 ? fmt::format(" on connection {}", i) : "";
    if (!mine[i].error.empty()) return fmt::format("{}{}: {}", failed, which, mine[i].error);
    if (i < theirs.size() && !theirs[i].error.empty())
      return fmt::format("{} on the client{}: {}", failed, which, theirs[i].error);
    transactions += mine[i].transactions;
    first = std::min(first, mine[i].start_ns);
    last = std::max(last, mine[i].end_ns);
  }
  if (theirs.empty()) {
    return fmt::format("{} after {} transactions answered: {}", failed, transactions, exchange_error);
  }
  const double seconds = static_cast<double>(last - first) / 1e9;
  std::string text = fmt::format("{} {} transactions on {} connection{} in {:.3f} s", what, transactions,
                                 mine.size(), mine.size() == 1 ? "" : "s", seconds);
  if (request.test.rr.rate_tps > 0) text += fmt::format(", open loop at {:g}/s", request.test.rr.rate_tps);
  if (request.test.rr.stream_per_tx && facts(request.mode).streams) text += ", a stream per transaction";
  if (!tls_description.empty()) text += ", " + tls_description;
  return text;
}

// The client's figures, where neither side failed: the first that
// disagrees is this side's error on its connection (in `mine` for the log,
// in `my_sides` for the record), so that the test shows as failed.
void judge_client_connections(const PeerJudge& judge, const protocol::TestRequest& request,
                              std::vector<RrSideResult>& mine, std::vector<SideResult>& my_sides,
                              const std::vector<SideResult>& theirs) {
  const auto failed = [](const auto& r) { return !r.error.empty(); };
  if (theirs.empty() || std::any_of(mine.begin(), mine.end(), failed) ||
      std::any_of(theirs.begin(), theirs.end(), failed)) {
    return;
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (std::string line = check_peer_connection(judge, request, my_sides[i], theirs[i]); !line.empty()) {
      mine[i].error = my_sides[i].error = std::move(line);
      return;
    }
  }
}

// Connection `i`'s part of the test on this side.
RrServerSpec server_spec(const protocol::TestRequest& request, const session::ServerConfig& config,
                         std::uint32_t i) {
  RrServerSpec spec;
  spec.connection = i;
  spec.request_bytes = request.test.rr.request_bytes;
  spec.response_bytes = request.test.rr.response_bytes;
  spec.closed_loop = request.test.rr.rate_tps == 0;
  spec.stream_per_tx = request.test.rr.stream_per_tx;
  if (request.test.verify) spec.verify_seed = request.verify_seed;
  spec.idle_timeout = config.timeouts.idle;
  spec.min_rate = config.min_rate;
  spec.max_duration = config.max_duration;
  // A timed test asked for no more than the cap (or it was refused); the
  // responses to its last requests may come a little after it.
  if (request.test.duration_ms > 0) spec.max_duration_grace = session::kTimedDrainGrace;
  return spec;
}

// "TLSv1.3 TLS_AES_256_GCM_SHA384 X25519" for the log; "" over TCP.
std::string describe_tls(const Stream& stream) {
  const tls::TlsStream* tls_stream = stream.tls();
  if (tls_stream == nullptr) return {};
  const tls::SessionInfo info = tls_stream->session_info();
  return fmt::format("{} {} {}", info.version, info.cipher, info.group);
}

// This host's calibration of the test's transactions on its library and
// `suite` (none for plain TCP, or kTLS: no suite in user space).
std::optional<measure::TransactionCalibration> rr_calibration(const protocol::TestRequest& request,
                                                              const std::string& suite) {
  if (suite.empty()) return std::nullopt;
  return transaction_calibration_for(library_of(request), suite, transaction_shape(request.test));
}

}  // namespace

std::string serve_rr_test(Stream& control, const protocol::TestRequest& request, session::ServerSide& side) {
  const RunClock clock;  // the run on this side, for judging the client's figures
  const session::Timeouts& t = side.config().timeouts;
  const auto reserved = reserve_data_connections(control, request, side);
  // --stream-per-tx: a QUIC connection's streams after its first are its transactions'.
  const auto ticket =
      side.open_ticket(request.test.streams, 0, request.test.rr.stream_per_tx && facts(request.mode).streams);
  session::send_message(control, side.acceptance(ticket->cookie()), "the test acceptance");
  std::vector<std::unique_ptr<Stream>> data = await_data_connections(control, request, side, *ticket);

  const std::string tls_description = describe_tls(*data.front());
  const std::string suite = user_space_suite(*data.front());  // calibrated below
  std::vector<RrSideResult> mine(data.size());
  {
    std::vector<std::unique_ptr<session::ServerSide::LiveSocket>> live;
    std::vector<RrServerSpec> specs(data.size());
    for (std::uint32_t i = 0; i < data.size(); ++i) {
      Stream& stream = *data[i];
      live.push_back(
          std::make_unique<session::ServerSide::LiveSocket>(side.register_live(stream.native_handle())));
      set_nodelay(stream.native_handle(), true);  // each response goes at once
      set_socket_buffers(stream.native_handle(), request.test.sndbuf_bytes, request.test.rcvbuf_bytes);
      if (request.test.record_size != 0 && stream.tls() != nullptr)
        stream.tls()->set_max_record_size(request.test.record_size);
      send_ready(stream, t.handshake);
      specs[i] = server_spec(request, side.config(), i);
    }
    std::vector<int> fds;
    for (const auto& stream : data)
      fds.push_back(stream->native_handle());
    take_facts(mine, run_data_threads(
                         fds, request.server_cpu,
                         [&](std::size_t i) { mine[i] = run_rr_server(*data[i], specs[i]); },
                         facts(data.front()->mode()).over_udp, port_of(*data.front())));
    live.clear();  // before the sockets close
  }
  data.clear();
  // This host's calibration, once per process and shape, with each result.
  const std::optional<measure::TransactionCalibration> calibration = rr_calibration(request, suite);
  const auto side_result = [&](std::uint32_t i, std::int64_t earliest) {
    SideResult result = to_side_result(mine[i], Role::receiver, i, earliest);
    result.transaction_calibration = calibration;
    return result;
  };

  // Results both ways, connection by connection. A client that vanished is
  // logged with what this side saw.
  std::int64_t earliest = INT64_MAX;
  for (const RrSideResult& r : mine)
    earliest = std::min(earliest, r.start_ns);
  std::vector<SideResult> theirs;
  std::string exchange_error;
  const bool failed_here =
      std::any_of(mine.begin(), mine.end(), [](const RrSideResult& r) { return !r.error.empty(); });
  try {
    control.set_deadline(
        Deadline::after(failed_here ? std::min(t.control, session::kResultGrace) : t.control));
    for (std::uint32_t i = 0; i < mine.size(); ++i) {
      session::send_message(control, side_result(i, earliest), "the server's result");
    }
    for (std::uint32_t i = 0; i < mine.size(); ++i) {
      theirs.push_back(session::receive<SideResult>(control, "the client's result"));
      if (theirs.back().stream != i || theirs.back().role != Role::sender) {
        throw protocol::ProtocolError("the client's results do not match the connections");
      }
    }
  } catch (const Error& e) {
    theirs.clear();
    exchange_error = e.what();
  }
  std::vector<SideResult> my_sides;
  for (std::uint32_t i = 0; i < mine.size(); ++i)
    my_sides.push_back(side_result(i, earliest));
  judge_client_connections(PeerJudge(Peer::client, clock.elapsed_us(), request.test.streams), request, mine,
                           my_sides, theirs);
  side.record(my_sides, theirs);
  return describe_test(request, mine, theirs, exchange_error, tls_description);
}

}  // namespace tlscmp::kinds
