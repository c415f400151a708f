// The client half of a bulk stream test (see kinds/stream/stream.hpp).

#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <optional>

#include "endpoint.hpp"
#include "kinds/calibration.hpp"
#include "kinds/data_connections.hpp"
#include "kinds/stream/stream.hpp"
#include "kinds/stream/streams.hpp"
#include "kinds/stream/transfer.hpp"
#include "measure/clock.hpp"
#include "measure/stats.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

using session::ClientConfig;
using session::InterruptWatch;
using session::kResultGrace;
using session::receive;
using session::receive_message;
using session::send_message;
using session::start_test;
using session::Timeouts;

// One test on its own control connection: parameters, data connection,
// transfer, results. config.host and config.port name the server to use.
class TestRun {
 public:
  TestRun(const ClientConfig& config, const tls::Context* tls, Mode mode, InterruptWatch& interrupt,
          measure::TransferObserver* observer, std::uint64_t verify_seed, int round)
      : config_(config),
        tls_(tls),
        mode_(mode),
        interrupt_(interrupt),
        observer_(observer),
        verify_seed_(verify_seed),
        round_(round) {}

  StreamRun run(measure::Environment& environment);

 private:
  protocol::TestRequest request() const;

  const ClientConfig& config_;
  const tls::Context* tls_;
  Mode mode_;
  InterruptWatch& interrupt_;
  measure::TransferObserver* observer_;
  std::uint64_t verify_seed_;
  int round_;                    // for the server's log
  protocol::TestAccept accept_;  // the server's answer, with its TLS offer
};

protocol::TestRequest TestRun::request() const {
  protocol::TestRequest request = session::test_request(config_, mode_, tls_);
  request.verify_seed = verify_seed_;
  request.round = static_cast<std::uint32_t>(round_);
  return request;
}

// A failed stream, as one line: what happened, and on which side.
std::string stream_failure(const SideResult& side, bool client_side, std::uint32_t streams) {
  return fmt::format("{} (the {}, {}{})", side.error, client_side ? "client" : "server",
                     side.role == Role::sender ? "sending" : "receiving",
                     streams > 1 ? fmt::format(", stream {}", side.stream) : "");
}

measure::SideCost side_cost(const SideResult& side) {
  return {side.elapsed_us, side.cpu_user_s, side.cpu_system_s, side.sndbuf_bytes, side.rcvbuf_bytes,
          side.mss_bytes,  side.congestion, side.ktls_send,    side.ktls_receive, side.tls_bytes,
          side.facts,      side.read_calls, side.write_calls,  side.calibration,  std::nullopt};
}

std::vector<measure::Interval> intervals_of(const SideResult& receiver) {
  std::vector<measure::Interval> intervals;
  double start_s = 0;
  for (const ByteInterval& i : receiver.intervals) {
    const double end_s = i.end_us / 1e6;
    intervals.push_back({start_s, end_s, i.bytes});
    start_s = end_s;
  }
  return intervals;
}

// The window of the streams whose `role` side is `side`: from the earliest
// start to the latest end among them, on that side's clock.
double window_us(const std::vector<SideResult>& side, Role role) {
  double first = -1;
  double last = 0;
  for (const SideResult& r : side) {
    if (r.role != role) continue;
    first = first < 0 ? r.offset_us : std::min(first, r.offset_us);
    last = std::max(last, r.offset_us + r.elapsed_us);
  }
  return first < 0 ? 0 : last - first;
}

// Totals over a test's streams, each checked already: bytes and messages
// added up; per direction, the receiving side's window from the first go to
// the last byte; per side, CPU added up over its streams.
// The receivers' intervals of the streams that go the way of stream 0, added
// up period by period.
std::vector<measure::Interval> summed_intervals(const std::vector<const SideResult*>& receivers,
                                                std::uint64_t interval_ms) {
  std::vector<std::vector<measure::Interval>> each;
  for (const SideResult* r : receivers)
    each.push_back(intervals_of(*r));
  return measure::sum_intervals(each, static_cast<double>(interval_ms) / 1e3);
}

void aggregate_streams(StreamRun& result, const std::vector<SideResult>& client,
                       const std::vector<SideResult>& server, std::uint64_t interval_ms) {
  std::vector<const SideResult*> forward_receivers;
  for (std::size_t i = 0; i < client.size(); ++i) {
    const SideResult& receiver = client[i].role == Role::receiver ? client[i] : server[i];
    const SideResult& sender = client[i].role == Role::sender ? client[i] : server[i];
    result.bytes += receiver.bytes;
    result.messages += receiver.messages;
    result.payload_bytes += receiver.payload_bytes;
    if (client[i].role == client.front().role) forward_receivers.push_back(&receiver);
    if (client.size() > 1) {
      result.streams.push_back(
          {static_cast<std::uint32_t>(i),
           client[i].role == Role::sender ? Direction::client_to_server : Direction::server_to_client,
           receiver.bytes, receiver.elapsed_us, sender.elapsed_us, receiver.messages,
           intervals_of(receiver)});
    }
  }
  // Each direction's window on its receiver's clock; the run's is the longer.
  result.transfer_us = std::max(window_us(client, Role::receiver), window_us(server, Role::receiver));
  result.sender_us = std::max(window_us(client, Role::sender), window_us(server, Role::sender));
  result.client = side_cost(combine(client));
  result.server = side_cost(combine(server));
  result.intervals = summed_intervals(forward_receivers, interval_ms);
}

// This side's results to the server, the server's back, one per stream.
// After a failure here, the server gets a short grace, and this side's
// failure is the error if the exchange fails.
std::vector<SideResult> trade_results(Stream& control, const std::vector<SideResult>& mine,
                                      const Timeouts& timeouts) {
  const auto streams = static_cast<std::uint32_t>(mine.size());
  const auto failed_here =
      std::find_if(mine.begin(), mine.end(), [](const SideResult& m) { return !m.error.empty(); });
  control.set_deadline(Deadline::after(failed_here == mine.end() ? timeouts.control
                                                                 : std::min(timeouts.control, kResultGrace)));
  std::vector<SideResult> theirs;
  try {
    for (const SideResult& m : mine)
      send_message(control, m, "the client's result");
    for (std::uint32_t i = 0; i < streams; ++i) {
      theirs.push_back(receive<SideResult>(control, "the server's result"));
      if (theirs.back().stream != i || theirs.back().role == mine[i].role) {
        throw protocol::ProtocolError("the server's results do not match the streams");
      }
    }
  } catch (const Error&) {
    if (failed_here == mine.end()) throw;
    throw Error(stream_failure(*failed_here, /*client_side=*/true, streams));
  }

  return theirs;
}

// Stream by stream: the receiver's account of what failed comes first (it
// saw what arrived), then the server's figures against this side's, and
// nothing is silently lost.
void judge_streams(const protocol::TestRequest& test, const std::vector<SideResult>& mine,
                   const std::vector<SideResult>& theirs, double wall_us, std::chrono::milliseconds idle) {
  const auto streams = static_cast<std::uint32_t>(mine.size());
  const PeerJudge judge(Peer::server, wall_us, streams);
  const std::uint64_t expected = stream_bytes(transfer_spec(test, Role::sender, idle));
  for (std::uint32_t i = 0; i < streams; ++i) {
    const SideResult& receiver = mine[i].role == Role::receiver ? mine[i] : theirs[i];
    const SideResult& sender = mine[i].role == Role::sender ? mine[i] : theirs[i];
    for (const auto* side : {&receiver, &sender}) {
      if (!side->error.empty()) throw Error(stream_failure(*side, side == &mine[i], streams));
    }
    if (const std::string line = check_peer_stream(judge, mine[i], theirs[i]); !line.empty())
      throw Error(line);
    if (expected > 0 && receiver.bytes != expected) {
      throw Error(fmt::format("the receiver{} counted {} bytes, {} were due",
                              streams > 1 ? fmt::format(" of stream {}", i) : "", receiver.bytes, expected));
    }
  }
}

StreamRun TestRun::run(measure::Environment& environment) {
  const RunClock clock;  // the run on this side, for judging the server's figures
  const Timeouts& timeouts = config_.timeouts;
  TcpStream control(
      connect_tcp(config_.host, config_.port, Deadline::after(timeouts.connect), config_.bind_address));
  const InterruptWatch::Guard control_guard(interrupt_, control.native_handle());
  const protocol::TestRequest test = request();
  accept_ = start_test(control, test, timeouts, environment);
  const protocol::TestAccept& accept = accept_;

  StreamRun result;
  result.mode = mode_;
  const std::uint32_t streams = test.test.streams;
  DataConnections connections = open_data_connections(config_, tls_, mode_, accept, streams, control);
  std::vector<std::unique_ptr<Stream>>& data = connections.streams;
  result.handshake_us = measure::summarize(connections.handshake_us).mean;
  result.setup_us = connections.setup_us;
  result.setup_at_once = connections.at_once;
  if (data.front()->is_tls()) result.tls = tls_parameters(*data.front(), config_.test.record_size);

  std::vector<SideResult> mine;
  {
    std::vector<std::unique_ptr<InterruptWatch::Guard>> guards;
    std::vector<StreamWork> work;
    // The live view follows the streams that go the test's way, added up.
    const Role live_role =
        stream_role(test.test.stream.direction, test.test.stream.bidir, 0, /*server_side=*/false);
    const std::uint32_t live_streams = test.test.forward_streams();
    std::optional<measure::JoinedObserver> joined;
    if (observer_ != nullptr && live_streams > 1) joined.emplace(*observer_, live_streams);
    for (std::uint32_t i = 0, live = 0; i < streams; ++i) {
      guards.push_back(std::make_unique<InterruptWatch::Guard>(interrupt_, data[i]->native_handle()));
      const Role role =
          stream_role(test.test.stream.direction, test.test.stream.bidir, i, /*server_side=*/false);
      TransferSpec spec = transfer_spec(test, role, timeouts.idle);
      if (role == live_role) spec.observer = joined ? joined->stream(live++) : observer_;
      work.push_back({data[i].get(), spec});
    }
    mine = run_streams(work, config_.client_cpu);
  }
  data.clear();

  if (interrupt_.interrupted()) {
    // Ctrl-C: what this side measured until then, marked partial.
    const SideResult total = combine(mine);
    result.partial = true;
    result.bytes = total.bytes;
    (total.role == Role::receiver ? result.transfer_us : result.sender_us) = total.elapsed_us;
    result.client = side_cost(total);
    std::vector<const SideResult*> receivers;
    for (const SideResult& m : mine) {
      if (m.role == Role::receiver && m.role == mine.front().role) receivers.push_back(&m);
    }
    result.intervals = summed_intervals(receivers, test.test.interval_ms);
    return result;
  }

  // After a failure on this side (a stall, a reset) the server's result may
  // never come: the link may be dead, the server stopped. It gets a short
  // grace, then this side's own account stands.
  const std::vector<SideResult> theirs = trade_results(control, mine, timeouts);
  judge_streams(test, mine, theirs, clock.elapsed_us(), timeouts.idle);
  aggregate_streams(result, mine, theirs, test.test.interval_ms);
  session::await_close(control, timeouts.control);
  // TLS in user space: this host's calibration for the suite and shape (the
  // server's came with its results).
  if (!result.tls.cipher.empty() && !result.client.ktls_send && !result.client.ktls_receive) {
    result.client.calibration = calibration_for(tls_->backend(), result.tls.cipher, test.test.chunk_bytes,
                                                test.test.record_size, test.test.stream.read_size);
  }
  return result;
}

}  // namespace

StreamRun run_stream_test(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                          session::InterruptWatch& interrupt, measure::TransferObserver* observer,
                          std::uint64_t verify_seed, int round, measure::Environment& environment) {
  TestRun test(config, tls, mode, interrupt, observer, verify_seed, round);
  return test.run(environment);
}

}  // namespace tlscmp::kinds
