// The server half of a many-connection test (see kinds/flows/flows.hpp).
// The accepting threads read each flow's preamble and header and hand its
// socket to one of the test's event loops (flow i to loop i mod T): one
// acceptor that hands them out, so that flows share the server's one port
// and its caps. The loops do the TLS handshakes.

#include <poll.h>

#include <fmt/format.h>
#include <algorithm>
#include <mutex>
#include <numeric>
#include <thread>

#include "kinds/flows/flows.hpp"
#include "kinds/flows/loop.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/host.hpp"
#include "measure/memory.hpp"
#include "measure/units.hpp"
#include "session/control.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

constexpr std::chrono::milliseconds kFlowsCheck{100};

// A running flows test, as its connections find it by cookie: its loops,
// and which flows have come.
class FlowsSink final : public session::PendingTests::ConnectionSink {
 public:
  FlowsSink(const FlowPlan& plan, std::uint32_t threads, std::uint32_t flows)
      : repeats_(plan.work == spec::FlowWork::crr), taken_(flows, false) {
    for (std::uint32_t t = 0; t < threads; ++t)
      loops_.push_back(std::make_unique<FlowLoop>(plan));
    for (const auto& loop : loops_)
      loop->start();
  }
  ~FlowsSink() override { stop(); }
  FlowsSink(const FlowsSink&) = delete;
  FlowsSink& operator=(const FlowsSink&) = delete;

  // Why the connection is not taken (its socket then closes), or "": an
  // index out of range, or one that came already. crr's connectors come
  // again and again: a connector's new connection takes its old one's place
  // on the loop (the client closed it; the loop may not know yet), and no
  // more than two a connector are held at once.
  template <typename Connection>  // a socket, or a QUIC stream
  std::string take(std::uint32_t index, Connection connection) {
    std::lock_guard lock(mutex_);
    if (index >= taken_.size()) return fmt::format("flow {} is out of its test's range", index);
    if (taken_[index] && !repeats_) return fmt::format("flow {} came twice", index);
    if (repeats_ && kinds::sum(loops_, [](const FlowLoop& l) { return l.held(); }) >= 2 * taken_.size())
      return fmt::format("more than two connections at once for each of the test's {} connectors",
                         taken_.size());
    taken_[index] = true;
    loops_[index % loops_.size()]->adopt(index, std::move(connection));
    return {};
  }
  template <typename Count>
  std::uint64_t sum(Count count) const {
    return kinds::sum(loops_, count);
  }
  double cpu_s() const { return loops_cpu_s(loops_); }
  void begin(std::int64_t now) {
    for (const auto& loop : loops_)
      loop->begin(now, 0);
  }
  void stop() {
    for (const auto& loop : loops_)
      loop->stop();
  }
  std::vector<LoopTally> tallies() const {
    std::vector<LoopTally> out;
    for (const auto& loop : loops_)
      out.push_back(loop->tally());
    return out;
  }
  std::uint32_t threads() const { return static_cast<std::uint32_t>(loops_.size()); }

 private:
  bool repeats_;
  std::mutex mutex_;
  std::vector<bool> taken_;
  FlowLoops loops_;
};

FlowPlan server_plan(const protocol::TestRequest& request, session::ServerSide& side) {
  FlowPlan plan;
  plan.client = false;
  plan.work = request.test.flows.work;
  plan.cpu = request.server_cpu;
  const bool stream = plan.work == spec::FlowWork::stream;
  plan.sends = stream && request.test.stream.direction == Direction::server_to_client;
  plan.bytes = stream ? request.test.stream.bytes : 0;
  plan.flows = request.test.flows.flows;
  plan.chunk_bytes = request.test.chunk_bytes;
  plan.request_bytes = request.test.rr.request_bytes;
  plan.response_bytes = request.test.rr.response_bytes;
  plan.http.version = request.test.http.version;
  // TLS over TCP shakes hands on the loops; a stack over UDP (QUIC) has its
  // connections from the server's listener.
  plan.mode = request.mode;
  plan.part = side.stack_part(request.mode);
  plan.quic = facts(request.mode).over_udp;
  plan.release_buffers = request.release_buffers;
  plan.library = request.tls_library;
  plan.record_size = request.test.record_size;
  plan.sndbuf_bytes = request.test.sndbuf_bytes;
  plan.rcvbuf_bytes = request.test.rcvbuf_bytes;
  plan.handshake_timeout = side.config().timeouts.handshake;
  plan.idle_timeout = side.config().timeouts.idle;
  return plan;
}

// Waits for the client's next message, watching the flows meanwhile: a
// client whose flows stop coming for the handshake timeout is gone; a
// stopping server, or a test past `most`, ends the test.
void await_client(Stream& control, session::ServerSide& side, const FlowsSink& sink, bool establishing,
                  std::chrono::milliseconds most) {
  const std::int64_t start_ns = measure::now_ns();
  std::int64_t last_progress_ns = start_ns;
  std::uint64_t seen = 0;
  const auto seconds = [](std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); };
  for (;;) {
    if (wait_fd(control.native_handle(), POLLIN, Deadline::after(kFlowsCheck)) != TransportErrc::timeout)
      return;
    if (side.stopping()) throw Error("the server is stopping");
    const std::int64_t now = measure::now_ns();
    if (establishing) {
      if (const std::uint64_t came = sink.sum([](const FlowLoop& l) { return l.flows(); }); came != seen) {
        seen = came;
        last_progress_ns = now;
      } else if (now - last_progress_ns >
                 std::chrono::nanoseconds(side.config().timeouts.handshake).count()) {
        session::refuse_test(control, fmt::format("flows: the client opened no flow for {:g} s",
                                                  seconds(side.config().timeouts.handshake)));
      }
    }
    if (now - start_ns > std::chrono::nanoseconds(most).count()) {
      session::refuse_test(control, fmt::format("the test ran past this server's --max-duration of {:g} s",
                                                seconds(side.config().max_duration)));
    }
  }
}

// After the client's ready: every flow that came established, or the test refused.
void await_established(Stream& control, const FlowsSink& sink, std::uint32_t flows,
                       std::chrono::milliseconds wait) {
  // The wait starts over while flows still come (QUIC's are handshaken one
  // thread each here, at about 500 a second on a small host).
  Deadline deadline = Deadline::after(wait);
  for (std::uint64_t seen = 0;;) {
    const std::uint64_t done = sink.sum([](const FlowLoop& l) { return l.established() + l.failed(); });
    if (done >= flows || deadline.remaining_ms() <= 0) break;
    if (done != seen) deadline = Deadline::after(wait);
    seen = done;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::uint64_t established = sink.sum([](const FlowLoop& l) { return l.established(); });
  if (established >= flows) return;
  std::string first;
  for (const LoopTally& t : sink.tallies()) {
    if (first.empty()) first = t.first_failure;
  }
  session::refuse_test(control, fmt::format("{} of {} flows were established on the server{}", established,
                                            flows, first.empty() ? "" : "; " + first));
}

// A stream the client sent: every byte it sent received (the ones in
// flight when it finished), or no byte more for the idle timeout.
void await_bytes(const FlowsSink& sink, std::uint64_t sent, std::chrono::milliseconds idle) {
  std::uint64_t seen = sink.sum([](const FlowLoop& l) { return l.bytes(); });
  Deadline deadline = Deadline::after(idle);
  while (seen < sent && deadline.remaining_ms() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::uint64_t now = sink.sum([](const FlowLoop& l) { return l.bytes(); });
    if (now != seen) deadline = Deadline::after(idle);
    seen = now;
  }
}

// The server's account, its loops stopped: units of work over every flow
// (and crr's closed connections), its flows, its first failure; a stream
// it received, over its window of first byte to last.
FlowsResult server_result(FlowsSink& sink, const FlowPlan& plan, std::int64_t elapsed_ns) {
  sink.stop();
  FlowsResult mine;
  mine.role = Role::receiver;
  mine.elapsed_us = measure::ns_to_us(elapsed_ns);
  const std::vector<LoopTally> tallies = sink.tallies();
  for (const LoopTally& t : tallies) {
    mine.transactions +=
        t.retired + std::accumulate(t.per_flow.begin(), t.per_flow.end(), std::uint64_t{0},
                                    [](std::uint64_t a, const auto& f) { return a + f.second; });
    mine.flows += t.established;
    mine.failed += t.failed;
    if (mine.error.empty()) mine.error = t.first_failure;
    mine.establish_us =
        std::max(mine.establish_us, measure::ns_to_us(t.last_established_ns - t.first_start_ns));
  }
  if (plan.work == spec::FlowWork::stream && !plan.sends) mine.elapsed_us = traffic_window_us(tallies);
  mine.threads = sink.threads();
  return mine;
}

std::string describe_test(const protocol::TestRequest& request, const FlowsResult& mine) {
  const std::optional<double> idle = memory_per_flow(mine.memory, mine.flows).idle_rss;
  const spec::FlowWork work = request.test.flows.work;
  return fmt::format("flows {} {}{} round {}: {} {} on {} loops, {} {}{}{}", to_string(work),
                     to_string(request.mode), request.release_buffers ? " (release buffers)" : "",
                     request.round, mine.flows, work == spec::FlowWork::crr ? "connections" : "flows",
                     mine.threads, mine.transactions,
                     work == spec::FlowWork::stream ? "bytes" : "transactions",
                     idle ? fmt::format(", {:.1f} KiB a flow idle", *idle / 1024) : std::string(),
                     mine.failed > 0 ? fmt::format(", {} failed: {}", mine.failed, mine.error) : "");
}

}  // namespace

void serve_flow_connection(std::unique_ptr<Stream>& stream, session::PendingTests& pending,
                           double& cpu_mark) {
  protocol::DataHeader header{};
  std::error_code ec;
  stream->read_exact(header, ec);
  if (ec)
    throw Error(
        fmt::format("flow connection without a cookie and index: {}", describe(ec, stream->error_detail())));
  const protocol::DataHeaderInfo info = protocol::decode_data_header(header);
  const auto sink = std::dynamic_pointer_cast<FlowsSink>(pending.sink(info.cookie));
  if (sink == nullptr) throw protocol::ProtocolError("flow connection for an unknown or finished test");
  // A TCP connection goes to its loop as a socket (TLS starts there); a
  // QUIC stream, its handshake done, as itself.
  const std::string refused = facts(stream->mode()).over_udp
                                  ? sink->take(info.stream, std::move(stream))
                                  : sink->take(info.stream, stream->release_socket());
  if (!refused.empty()) throw protocol::ProtocolError(refused);
  cpu_mark = measure::thread_cpu_s();
}

std::string serve_flows_test(Stream& control, const protocol::TestRequest& request,
                             session::ServerSide& side) {
  const session::ServerConfig& config = side.config();
  const std::uint32_t n = request.test.flows.flows;
  const spec::FlowWork work = request.test.flows.work;
  std::string busy;
  const auto room = side.reserve_flows(n, request.flow_sources, request.mode, busy);
  if (!room) session::refuse_test(control, busy);
  measure::release_free_memory();
  const measure::MemoryReading before = measure::read_memory();
  const FlowPlan plan = server_plan(request, side);
  // QUIC: the port's datagrams over the test, every connection's on it.
  const std::optional<UdpPath> port_before = plan.part != nullptr ? plan.part->port_path() : std::nullopt;
  // QUIC: one loop, which runs a round of events of each of the port's
  // listeners its flows are on (stacks::QuicPollSet): loops sharing the
  // listeners would each run those rounds, contending for their locks.
  const std::uint32_t threads = plan.quic ? 1 : flow_threads(request.test, request.server_cpu);
  const auto sink = std::make_shared<FlowsSink>(plan, threads, n);
  const auto ticket = side.open_ticket(sink);
  session::send_message(control, side.acceptance(ticket->cookie()), "the test acceptance");

  await_client(control, side, *sink, work != spec::FlowWork::crr, config.max_duration);
  control.set_deadline(Deadline::after(config.timeouts.control));
  session::receive<protocol::Ready>(control, "the flows' readiness");
  if (work != spec::FlowWork::crr) await_established(control, *sink, n, config.timeouts.handshake);
  const measure::MemoryReading idle = measure::read_memory();
  const double cpu_before = sink->cpu_s();
  const std::int64_t start_ns = measure::now_ns();
  if (work == spec::FlowWork::stream && !plan.sends) sink->begin(start_ns);
  session::send_message(control, protocol::Ready{}, "the server's readiness");
  if (work == spec::FlowWork::stream && plan.sends) {  // the client reads its idle memory first, then says go
    session::receive<protocol::Ready>(control, "the client's go");
    sink->begin(measure::now_ns());
  }

  const auto most = config.max_duration +
                    (request.test.duration_ms > 0
                         ? std::chrono::duration_cast<std::chrono::milliseconds>(session::kTimedDrainGrace)
                         : std::chrono::milliseconds(0));
  await_client(control, side, *sink, false, most);
  control.set_deadline(Deadline::after(config.timeouts.control));
  const auto theirs = session::receive<FlowsResult>(control, "the client's result");
  if (work == spec::FlowWork::stream && !plan.sends)
    await_bytes(*sink, theirs.transactions, config.timeouts.idle);
  const double cpu_s = sink->cpu_s() - cpu_before;  // while the loops' threads live
  const measure::MemoryReading after = measure::read_memory();
  FlowsResult mine = server_result(*sink, plan, measure::now_ns() - start_ns);
  mine.cpu_s = cpu_s;
  if (work != spec::FlowWork::crr) mine.memory = memory_readings(before, idle, after);
  if (const std::optional<UdpPath> port_after = plan.part != nullptr ? plan.part->port_path() : std::nullopt;
      port_before && port_after)
    mine.facts.udp_path = measure::udp_path_between(*port_before, *port_after);
  session::send_message(control, mine, "the server's result");
  side.record(mine, theirs);
  return describe_test(request, mine);
}

}  // namespace tlscmp::kinds
