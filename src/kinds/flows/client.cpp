// The client half of a many-connection test (see kinds/flows/flows.hpp).

#include <poll.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <thread>

#include "kinds/data_connections.hpp"
#include "kinds/flows/flows.hpp"
#include "kinds/flows/loop.hpp"
#include "measure/clock.hpp"
#include "measure/host.hpp"
#include "measure/memory.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

constexpr std::chrono::milliseconds kPoll{10};

using Loops = FlowLoops;

// Whatever the server said on the control connection while the flows ran
// ends the run: a refusal, or its result with an error.
[[noreturn]] void server_spoke(Stream& control) {
  const protocol::Message message = session::receive_message(control, "the server's result");
  if (const auto* refusal = std::get_if<protocol::Refusal>(&message)) throw Error(refusal->reason);
  if (const auto* theirs = std::get_if<protocol::KindResult>(&message);
      theirs && theirs->type == FlowsResult::kWireType && !theirs->error().empty())
    throw Error("server: " + theirs->error());
  throw protocol::ProtocolError("the server spoke before the flows were done");
}

// Waits until `done` holds, watching the control connection and Ctrl-C;
// false when interrupted.
template <typename Done>
bool wait_for(Stream& control, session::InterruptWatch& interrupt, Done done) {
  while (!done()) {
    if (interrupt.interrupted()) return false;
    if (wait_fd(control.native_handle(), POLLIN, Deadline::after(kPoll)) != TransportErrc::timeout)
      server_spoke(control);
  }
  return true;
}

// The name the server's certificate must have: the host, or for an
// embedded server "localhost".
std::string plan_host(const session::ClientConfig& config) {
  return config.host.empty() ? "localhost" : config.host;
}

FlowPlan client_plan(const session::ClientConfig& config, const session::Variant& variant,
                     const protocol::TestAccept& accept, const Stream& control) {
  FlowPlan plan;
  plan.client = true;
  plan.work = config.test.flows.work;
  plan.cpu = config.client_cpu;
  const bool stream = plan.work == spec::FlowWork::stream;
  plan.sends = stream && config.test.stream.direction == Direction::client_to_server;
  plan.chunk_bytes = config.test.chunk_bytes;
  plan.reset_close = config.test.crr.close == spec::Close::reset;
  plan.request_bytes = config.test.rr.request_bytes;
  plan.response_bytes = config.test.rr.response_bytes;
  plan.http = {config.test.http.version, fmt::format("{}:{}", plan_host(config), config.port),
               fmt::format("/{}", config.test.rr.response_bytes), config.test.rr.request_bytes};
  plan.mode = variant.mode;
  plan.tls = variant.tls ? &*variant.tls : nullptr;
  plan.quic = facts(variant.mode).over_udp;
  plan.host = plan_host(config);
  plan.release_buffers = variant.release_buffers;
  plan.record_size = config.test.record_size;
  plan.sndbuf_bytes = config.test.sndbuf_bytes;
  plan.rcvbuf_bytes = config.test.rcvbuf_bytes;
  plan.connect_timeout = config.timeouts.connect;
  plan.handshake_timeout = config.timeouts.handshake;
  plan.idle_timeout = config.timeouts.idle;
  plan.server = peer_socket_address(control.native_handle());
  for (const std::string& address : config.source_addresses) {
    const std::optional<SocketAddress> from = literal_address(address);
    if (from) plan.sources.push_back(*from);
  }
  if (plan.sources.empty() && !config.bind_address.empty())
    plan.sources.push_back(local_socket_address(control.native_handle()));
  plan.cookie = accept.cookie;
  plan.quota = stream ? config.test.stream.bytes : config.test.rr.transactions;
  plan.rate_tps = config.test.rr.rate_tps;
  plan.flows = config.test.flows.flows;
  return plan;
}

Loops start_loops(const FlowPlan& plan, const spec::Test& test) {
  const std::uint32_t threads = flow_threads(test, plan.cpu);
  Loops loops;
  for (std::uint32_t t = 0; t < threads; ++t)
    loops.push_back(std::make_unique<FlowLoop>(plan));
  for (std::uint32_t i = 0; i < test.flows.flows; ++i)
    loops[i % threads]->assign(i, plan.quota > 0 ? share(plan.quota, test.flows.flows, i) : 0);
  for (const auto& loop : loops)
    loop->start();
  return loops;
}

// Every flow's transactions, their spread and Jain's index; the windows.
void aggregate(const std::vector<LoopTally>& tallies, FlowsRun& run, std::string& first_failure) {
  std::vector<double> per_flow;
  std::int64_t first_start = INT64_MAX, last_established = 0;
  measure::LatencyHistogram latency, connect, handshake;
  for (const LoopTally& t : tallies) {
    for (const auto& [index, count] : t.per_flow)
      per_flow.push_back(static_cast<double>(count));
    first_start = std::min(first_start, t.first_start_ns);
    last_established = std::max(last_established, t.last_established_ns);
    latency += t.latency;
    connect += t.connect;
    handshake += t.handshake;
    if (first_failure.empty()) first_failure = t.first_failure;
    if (run.tls.version.empty()) run.tls = t.tls;
    if (t.udp_path) measure::add_udp_path(run.client_facts.udp_path, *t.udp_path);
  }
  double total = 0, squares = 0;
  for (double x : per_flow) {
    total += x;
    squares += x * x;
  }
  run.transactions = static_cast<std::uint64_t>(total);
  std::sort(per_flow.begin(), per_flow.end());
  if (!per_flow.empty()) {
    run.flow_min = per_flow.front();
    run.flow_max = per_flow.back();
    run.flow_p50 = per_flow[(per_flow.size() - 1) / 2];
    run.fairness = squares > 0 ? total * total / (static_cast<double>(per_flow.size()) * squares) : 0;
  }
  run.establish_us = last_established > first_start ? measure::ns_to_us(last_established - first_start) : 0;
  run.elapsed_us = traffic_window_us(tallies);
  run.latency = latency.summary();
  run.connect = connect.summary();
  run.handshake = handshake.summary();
}

// The server's account against this side's: its error first (a flow that
// failed there is counted, as this side's are), then its count, which a
// closed loop makes equal to ours: requests answered (rr, crr), or the bytes
// of a stream (a timed one the server sends goes on past our end).
void judge_server(const FlowsResult& theirs, const FlowPlan& plan, FlowsRun& run) {
  if (theirs.role != Role::receiver) throw protocol::ProtocolError("the server's result is not a server's");
  if (!theirs.error.empty() && theirs.failed == 0) throw Error("server: " + theirs.error);
  if (run.failed_flows == 0 && theirs.failed > 0) {
    run.failed_flows = theirs.failed;
    run.first_failure = "on the server, " + theirs.error;
  }
  const bool stream = plan.work == spec::FlowWork::stream;
  if (run.failed_flows > 0 || (stream && !plan.sends && plan.quota == 0)) return;
  if (theirs.transactions != run.transactions) {
    throw Error(stream ? fmt::format("the server {} {} bytes and this side {} {}",
                                     plan.sends ? "received" : "sent", theirs.transactions,
                                     plan.sends ? "sent" : "received", run.transactions)
                       : fmt::format("the server answered {} requests and this side took {} responses",
                                     theirs.transactions, run.transactions));
  }
  // The receiver's window is the stream's: the server's, where it received.
  if (stream && plan.sends) run.elapsed_us = theirs.elapsed_us;
}

// Every flow established, or the run fails naming the first that was not;
// false when interrupted.
bool establish(Stream& control, session::InterruptWatch& interrupt, Loops& loops, std::uint32_t n) {
  const auto all_in = [&] {
    return sum(loops, [](const FlowLoop& l) { return l.established() + l.failed(); }) >= n;
  };
  if (!wait_for(control, interrupt, all_in)) return false;
  const std::uint64_t failed = sum(loops, [](const FlowLoop& l) { return l.failed(); });
  if (failed == 0) return true;
  std::string first;
  for (auto& loop : loops) {
    loop->stop();
    if (first.empty()) first = loop->tally().first_failure;
  }
  throw Error(fmt::format("{} of {} flows could not be established; {}", failed, n, first));
}

// The traffic, from every loop's go to every flow's last response; the
// client's CPU and figures into `run`; false when interrupted.
bool make_traffic(Stream& control, const session::ClientRun& where, const FlowPlan& plan, Loops& loops,
                  FlowsRun& run) {
  const double cpu_before = loops_cpu_s(loops);
  const std::int64_t duration_ns = static_cast<std::int64_t>(where.target.test.duration_ms) * 1'000'000;
  const std::int64_t go_ns = measure::now_ns();
  const std::int64_t end_ns = duration_ns > 0 ? go_ns + duration_ns : 0;
  for (const auto& loop : loops)
    loop->begin(go_ns, end_ns);
  // A stream the server sends starts on our go, after our idle reading,
  // with our flows already reading.
  if (plan.work == spec::FlowWork::stream && !plan.sends)
    session::send_message(control, protocol::Ready{}, "the go");
  const bool whole = wait_for(control, where.interrupt, [&] {
    return sum(loops, [](const FlowLoop& l) { return l.finished(); }) >= run.flows;
  });
  run.client.cpu_user_s = loops_cpu_s(loops) - cpu_before;
  return whole;
}

// After the traffic, the flows still held: this side's figures, then both sides' results.
void finish_run(Stream& control, const session::ClientConfig& config, const FlowPlan& plan, Loops& loops,
                FlowsRun& run, const measure::MemoryReading& before, const measure::MemoryReading& idle,
                std::string& first_failure) {
  const measure::MemoryReading after = measure::read_memory();
  std::vector<LoopTally> tallies;
  for (auto& loop : loops) {
    loop->stop();
    tallies.push_back(loop->tally());
  }
  aggregate(tallies, run, first_failure);
  run.client.window_us = run.elapsed_us;
  run.failed_flows = sum(loops, [](const FlowLoop& l) { return l.failed(); });
  run.first_failure = first_failure;
  if (run.partial) return;
  const FlowsResult mine{Role::sender,     run.flows,          run.failed_flows,
                         run.transactions, run.elapsed_us,     run.client.cpu_user_s,
                         run.establish_us, run.client_threads, memory_readings(before, idle, after),
                         first_failure,    run.client_facts};
  control.set_deadline(Deadline::after(config.timeouts.control));
  session::send_message(control, mine, "the client's result");
  const auto theirs = session::receive<FlowsResult>(control, "the server's result");
  judge_server(theirs, plan, run);
  run.server.cpu_user_s = theirs.cpu_s;
  run.server.window_us = theirs.elapsed_us;
  run.server_threads = theirs.threads;
  run.server_facts = theirs.facts;
  if (plan.work == spec::FlowWork::crr) return;  // no flow is held: memory per connection means nothing
  run.client_memory = memory_per_flow(mine.memory, run.flows);
  run.server_memory = memory_per_flow(theirs.memory, run.flows);
}

}  // namespace

FlowsRun run_flows_test(const session::ClientRun& where, const session::Variant& variant,
                        measure::Environment& environment) {
  const session::ClientConfig& config = where.target;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(config.timeouts.connect), config.bind_address));
  const session::InterruptWatch::Guard control_guard(where.interrupt, control.native_handle());
  protocol::TestRequest request =
      session::test_request(config, variant.mode, variant.tls ? &*variant.tls : nullptr);
  request.round = static_cast<std::uint32_t>(where.round);
  request.release_buffers = variant.release_buffers;
  request.flow_sources = config.source_addresses;
  measure::release_free_memory();
  const measure::MemoryReading before = measure::read_memory();
  const protocol::TestAccept accept = session::start_test(control, request, config.timeouts, environment);

  FlowsRun run;
  run.mode = variant.mode;
  run.work = config.test.flows.work;
  run.release_buffers = variant.release_buffers;
  run.flows = config.test.flows.flows;
  const FlowPlan plan = client_plan(config, variant, accept, control);
  Loops loops = start_loops(plan, config.test);
  run.client_threads = static_cast<std::uint32_t>(loops.size());
  // crr's connectors connect when the traffic begins: there is nothing to establish.
  if (run.work != spec::FlowWork::crr && !establish(control, where.interrupt, loops, run.flows)) {
    run.partial = true;
    return run;
  }
  control.set_deadline(Deadline::after(config.timeouts.control + config.timeouts.handshake));
  session::send_message(control, protocol::Ready{}, "the flows' readiness");
  session::receive<protocol::Ready>(control, "the server's readiness");
  const measure::MemoryReading idle = measure::read_memory();
  std::string first_failure;
  run.partial = !make_traffic(control, where, plan, loops, run);
  finish_run(control, config, plan, loops, run, before, idle, first_failure);
  if (run.partial) return run;
  loops.clear();  // every flow closes before the control connection does
  session::await_close(control, config.timeouts.control);
  return run;
}

}  // namespace tlscmp::kinds
