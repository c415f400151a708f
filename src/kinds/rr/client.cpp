// The client half of a request/response test (see kinds/rr/rr.hpp).

#include <fmt/format.h>
#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "kinds/calibration.hpp"
#include "kinds/data_connections.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/exchange.hpp"
#include "kinds/rr/rr.hpp"
#include "measure/clock.hpp"
#include "measure/host.hpp"
#include "measure/stats.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// The connections' figures as the run's: transactions added up, the window
// from the first request to the last response, the latencies merged, the
// CPU of every connection thread added up.
void aggregate(RrRun& run, const std::vector<RrSideResult>& mine) {
  measure::LatencyHistogram latency;
  std::int64_t first = INT64_MAX;
  std::int64_t last = INT64_MIN;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const RrSideResult& r = mine[i];
    run.transactions += r.transactions;
    first = std::min(first, r.start_ns);
    last = std::max(last, r.end_ns);
    run.client.cpu_user_s += r.cpu_user_s;
    run.client.cpu_system_s += r.cpu_system_s;
    latency += r.latency;
    if (mine.size() > 1) {
      run.connections.push_back({static_cast<std::uint32_t>(i), r.transactions,
                                 measure::ns_to_us(r.end_ns - r.start_ns), r.latency.summary()});
    }
  }
  run.elapsed_us = mine.empty() ? 0 : measure::ns_to_us(last - first);
  run.client.window_us = run.elapsed_us;
  run.latency = latency.summary();
  run.client.facts = measure::merge_facts_of(mine);
}

// The live view of a run: a thread that hands each interval to the observer
// shortly after it ends (by then every connection has added its share), and
// the rest once the run is over.
class LiveTicks {
 public:
  LiveTicks(RrIntervalBoard* board, measure::TransferObserver* observer)
      : board_(board), observer_(observer) {
    if (board_ != nullptr) thread_ = std::jthread([this] { run(); });
  }
  ~LiveTicks() { stop(); }
  LiveTicks(const LiveTicks&) = delete;
  LiveTicks& operator=(const LiveTicks&) = delete;

  // The run ended at `end_ns`: the intervals not yet shown, then the end.
  void finish(std::int64_t end_ns) {
    if (board_ == nullptr) return;
    stop();
    const std::vector<measure::RrInterval> all = board_->intervals(end_ns);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      total += all[i].transactions;
      if (i < shown_) continue;
      observer_->on_transactions({all[i].start_s, all[i].end_s, all[i].transactions, all[i].p99_us, total});
    }
    observer_->on_end();
  }

 private:
  // Time for the connections to add an interval's last transactions.
  static constexpr std::chrono::milliseconds kGrace{50};

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      const std::int64_t due_ns = board_->go_ns() +
                                  static_cast<std::int64_t>(shown_ + 1) * board_->period_ns() +
                                  std::chrono::nanoseconds(kGrace).count();
      const std::chrono::steady_clock::time_point due{std::chrono::nanoseconds(due_ns)};
      if (stop_cv_.wait_until(lock, due, [this] { return stopping_; })) return;
      observer_->on_transactions(board_->tick(shown_));
      ++shown_;
    }
  }
  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  RrIntervalBoard* board_;
  measure::TransferObserver* observer_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::size_t shown_ = 0;  // intervals handed to the observer
  std::jthread thread_;
};

// A failed connection, as one line: what happened, and on which side.
std::string connection_failure(const std::string& error, const char* side, std::uint32_t index,
                               std::uint32_t connections) {
  return fmt::format("{} (the {}{})", error, side,
                     connections > 1 ? fmt::format(", connection {}", index) : "");
}

// Each connection's part of the test: its share of the transactions, its
// place in the open-loop schedule, its stop time and its boards.
std::vector<RrClientSpec> client_specs(const session::ClientConfig& config,
                                       const protocol::TestRequest& request, std::int64_t go_ns,
                                       RrIntervalBoard* board, RrIntervalBoard* live) {
  const std::uint32_t connections = request.test.streams;
  std::vector<RrClientSpec> specs(connections);
  for (std::uint32_t i = 0; i < connections; ++i) {
    RrClientSpec& spec = specs[i];
    spec.connection = i;
    spec.request_bytes = request.test.rr.request_bytes;
    spec.response_bytes = request.test.rr.response_bytes;
    spec.transactions =
        request.test.rr.transactions > 0 ? share(request.test.rr.transactions, connections, i) : 0;
    spec.rate_tps = request.test.rr.rate_tps / connections;
    spec.stream_per_tx = request.test.rr.stream_per_tx;
    spec.start_ns =
        go_ns +
        (request.test.rr.rate_tps > 0 ? static_cast<std::int64_t>(1e9 * i / request.test.rr.rate_tps) : 0);
    spec.stop_ns = go_ns + std::chrono::nanoseconds(config.test.duration()).count();
    if (request.test.verify) spec.verify_seed = request.verify_seed;
    spec.idle_timeout = config.timeouts.idle;
    spec.intervals = board;
    spec.live = live;
  }
  return specs;
}

// This side's results to the server, the server's back, one per connection.
// After a failure here, the server gets a short grace, and this side's
// failure is the error if the exchange fails.
std::vector<SideResult> trade_results(Stream& control, const std::vector<RrSideResult>& mine,
                                      const std::vector<SideResult>& my_sides,
                                      const session::Timeouts& timeouts) {
  const auto connections = static_cast<std::uint32_t>(mine.size());
  const auto failed_here =
      std::find_if(mine.begin(), mine.end(), [](const RrSideResult& r) { return !r.error.empty(); });
  control.set_deadline(Deadline::after(
      failed_here == mine.end() ? timeouts.control : std::min(timeouts.control, session::kResultGrace)));
  std::vector<SideResult> theirs;
  try {
    for (const SideResult& side : my_sides)
      session::send_message(control, side, "the client's result");
    for (std::uint32_t i = 0; i < connections; ++i) {
      theirs.push_back(session::receive<SideResult>(control, "the server's result"));
      if (theirs.back().stream != i || theirs.back().role != Role::receiver) {
        throw protocol::ProtocolError("the server's results do not match the connections");
      }
    }
  } catch (const Error&) {
    if (failed_here == mine.end()) throw;
    const auto index = static_cast<std::uint32_t>(failed_here - mine.begin());
    throw Error(connection_failure(failed_here->error, "client", index, connections));
  }
  return theirs;
}

// The server's account first: a server that stopped (--max-duration, say)
// explains the closed connection this side saw. Then each connection's
// failure here, the server's figures against this side's, and its CPU.
void judge_server(const protocol::TestRequest& request, const std::vector<RrSideResult>& mine,
                  const std::vector<SideResult>& my_sides, const std::vector<SideResult>& theirs,
                  double wall_us, RrRun& run) {
  const auto connections = static_cast<std::uint32_t>(mine.size());
  for (std::uint32_t i = 0; i < connections; ++i) {
    if (!theirs[i].error.empty()) throw Error(connection_failure(theirs[i].error, "server", i, connections));
  }
  const PeerJudge judge(Peer::server, wall_us, connections);
  for (std::uint32_t i = 0; i < connections; ++i) {
    if (!mine[i].error.empty()) throw Error(connection_failure(mine[i].error, "client", i, connections));
    if (const std::string line = check_peer_connection(judge, request, my_sides[i], theirs[i]); !line.empty())
      throw Error(line);
    run.server.cpu_user_s += theirs[i].cpu_user_s;
    run.server.cpu_system_s += theirs[i].cpu_system_s;
    run.server.window_us = std::max(run.server.window_us, theirs[i].offset_us + theirs[i].elapsed_us);
  }
}

// TLS in user space: this host's calibration for the suite and sizes, and
// the server's, which came with its results.
void add_calibrations(RrRun& run, const tls::Context* tls, const std::string& suite, const spec::Test& test,
                      const SideResult& theirs) {
  if (suite.empty() || tls == nullptr) return;
  run.client.transaction_calibration =
      transaction_calibration_for(tls->backend(), suite, transaction_shape(test));
  run.server.transaction_calibration = theirs.transaction_calibration;
}

}  // namespace

RrRun run_rr_test(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                  session::InterruptWatch& interrupt, measure::TransferObserver* observer,
                  std::uint64_t verify_seed, int round, measure::Environment& environment) {
  const RunClock clock;  // the run on this side, for judging the server's figures
  const session::Timeouts& timeouts = config.timeouts;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address));
  const session::InterruptWatch::Guard control_guard(interrupt, control.native_handle());
  protocol::TestRequest request = session::test_request(config, mode, tls);
  request.verify_seed = verify_seed;
  request.round = static_cast<std::uint32_t>(round);
  const protocol::TestAccept accept = session::start_test(control, request, timeouts, environment);

  const std::uint32_t connections = request.test.streams;
  DataConnections data = open_data_connections(config, tls, mode, accept, connections, control);
  RrRun run;
  run.mode = mode;
  run.handshake_us = measure::summarize(data.handshake_us).mean;
  run.tls = tls_parameters(*data.streams.front(), config.test.record_size);

  // Every connection starts now; open loop, their schedules interleave, so
  // that the requests of all of them together come evenly spaced.
  const std::int64_t go_ns = measure::now_ns();
  std::optional<RrIntervalBoard> board;
  if (config.test.interval().count() > 0) board.emplace(go_ns, config.test.interval(), connections);
  // A live view's board: the -i one where their periods agree.
  std::optional<RrIntervalBoard> live_board;
  RrIntervalBoard* live = nullptr;
  if (observer != nullptr && observer->tick_period().count() > 0) {
    if (board && observer->tick_period() == config.test.interval()) {
      live = &*board;
    } else {
      live = &live_board.emplace(go_ns, observer->tick_period(), connections);
    }
  }
  const std::vector<RrClientSpec> specs =
      client_specs(config, request, go_ns, board ? &*board : nullptr, live);
  LiveTicks ticks(live, observer);
  std::vector<RrSideResult> mine(connections);
  {
    std::vector<std::unique_ptr<session::InterruptWatch::Guard>> guards;
    for (const auto& stream : data.streams)
      guards.push_back(std::make_unique<session::InterruptWatch::Guard>(interrupt, stream->native_handle()));
    std::vector<int> fds;
    for (const auto& stream : data.streams)
      fds.push_back(stream->native_handle());
    std::vector<RunFacts> facts = run_data_threads(
        fds, config.client_cpu, [&](std::size_t i) { mine[i] = run_rr_client(*data.streams[i], specs[i]); },
        tlscmp::facts(data.streams.front()->mode()).over_udp);
    take_facts(mine, std::move(facts));
    for (std::size_t i = 0; i < mine.size(); ++i)
      mine[i].facts.udp_path = data.streams[i]->udp_path();
  }
  const std::string suite = user_space_suite(*data.streams.front());  // calibrated once the run is over
  data.streams.clear();
  aggregate(run, mine);
  std::int64_t end_ns = go_ns;
  for (const RrSideResult& r : mine)
    end_ns = std::max(end_ns, r.end_ns);
  ticks.finish(end_ns);
  if (board) run.intervals = board->intervals(end_ns);
  if (interrupt.interrupted()) {
    run.partial = true;  // what this side counted until Ctrl-C
    return run;
  }

  std::vector<SideResult> my_sides;
  for (std::uint32_t i = 0; i < connections; ++i)
    my_sides.push_back(to_side_result(mine[i], Role::sender, i, go_ns));
  const std::vector<SideResult> theirs = trade_results(control, mine, my_sides, timeouts);
  judge_server(request, mine, my_sides, theirs, clock.elapsed_us(), run);
  run.server.facts = measure::merge_facts_of(theirs);
  session::await_close(control, timeouts.control);
  add_calibrations(run, tls, suite, request.test, theirs.front());
  return run;
}

}  // namespace tlscmp::kinds
