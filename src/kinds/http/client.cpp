// The client half of an HTTP test (see kinds/http/http.hpp).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/data_connections.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "measure/host.hpp"
#include "measure/stats.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {

std::vector<HttpClientSpec> http_client_specs(const session::ClientConfig& config, const spec::Test& test,
                                              std::int64_t go_ns) {
  const std::uint32_t connections = test.streams;
  std::vector<HttpClientSpec> specs(connections);
  for (std::uint32_t i = 0; i < connections; ++i) {
    HttpClientSpec& s = specs[i];
    s.version = test.http.version;
    s.authority = fmt::format("{}:{}", config.host, config.port);
    s.path = http_path(test.rr.response_bytes);
    s.request_bytes = test.rr.request_bytes;
    s.response_bytes = test.rr.response_bytes;
    s.requests = test.rr.transactions > 0 ? share(test.rr.transactions, connections, i) : 0;
    s.streams = test.http.streams;
    s.stop_ns = go_ns + std::chrono::nanoseconds(config.test.duration()).count();
    if (test.rr.rate_tps > 0) {
      // --rate over every connection: each its share, their schedules
      // interleaved so that requests leave evenly spaced.
      s.rate_rps = test.rr.rate_tps / connections;
      s.start_ns = go_ns + static_cast<std::int64_t>(1e9 * i / test.rr.rate_tps);
    }
    s.idle_timeout = config.timeouts.idle;
  }
  return specs;
}

void aggregate_http(HttpRun& run, const std::vector<HttpSideResult>& mine) {
  measure::LatencyHistogram latency;
  measure::LatencyHistogram first_byte;
  std::int64_t first = INT64_MAX;
  std::int64_t last = INT64_MIN;
  for (const HttpSideResult& r : mine) {
    run.requests += r.transactions;
    first = std::min(first, r.start_ns);
    last = std::max(last, r.end_ns);
    run.client.cpu_user_s += r.cpu_user_s;
    run.client.cpu_system_s += r.cpu_system_s;
    run.wire_sent += r.wire_sent;
    run.wire_received += r.wire_received;
    latency += r.latency;
    first_byte += r.first_byte;
    const double seconds = static_cast<double>(r.end_ns - r.start_ns) / 1e9;
    run.connection_rates.push_back(seconds > 0 ? static_cast<double>(r.transactions) / seconds : 0);
  }
  run.elapsed_us = mine.empty() ? 0 : measure::ns_to_us(last - first);
  run.client.window_us = run.elapsed_us;
  run.latency = latency.summary();
  run.first_byte = first_byte.summary();
  run.client.facts = measure::merge_facts_of(mine);
}

namespace {

std::string http_connection_failure(const std::string& error, const char* side, std::uint32_t index,
                                    std::uint32_t connections) {
  return fmt::format("{} (the {}{})", error, side,
                     connections > 1 ? fmt::format(", connection {}", index) : "");
}

// This side's results to the server, the server's back; then the server's
// account against this side's, connection by connection.
void trade_and_judge(Stream& control, const protocol::TestRequest& request,
                     const std::vector<HttpSideResult>& mine, std::int64_t go_ns,
                     const session::Timeouts& timeouts, double wall_us, HttpRun& run) {
  const auto connections = static_cast<std::uint32_t>(mine.size());
  std::vector<SideResult> my_sides;
  for (std::uint32_t i = 0; i < connections; ++i)
    my_sides.push_back(to_side_result(mine[i], Role::sender, i, go_ns));
  const auto failed_here =
      std::find_if(mine.begin(), mine.end(), [](const HttpSideResult& r) { return !r.error.empty(); });
  control.set_deadline(Deadline::after(
      failed_here == mine.end() ? timeouts.control : std::min(timeouts.control, session::kResultGrace)));
  std::vector<SideResult> theirs;
  try {
    for (const SideResult& side : my_sides)
      session::send_message(control, side, "the client's result");
    for (std::uint32_t i = 0; i < connections; ++i) {
      theirs.push_back(session::receive<SideResult>(control, "the server's result"));
      if (theirs.back().stream != i || theirs.back().role != Role::receiver)
        throw protocol::ProtocolError("the server's results do not match the connections");
    }
  } catch (const Error&) {
    if (failed_here == mine.end()) throw;
    throw Error(http_connection_failure(failed_here->error, "client",
                                        static_cast<std::uint32_t>(failed_here - mine.begin()), connections));
  }
  for (std::uint32_t i = 0; i < connections; ++i) {
    if (!theirs[i].error.empty())
      throw Error(http_connection_failure(theirs[i].error, "server", i, connections));
  }
  const PeerJudge judge(Peer::server, wall_us, connections);
  for (std::uint32_t i = 0; i < connections; ++i) {
    if (!mine[i].error.empty()) throw Error(http_connection_failure(mine[i].error, "client", i, connections));
    if (std::string line = check_http_peer(judge, request, my_sides[i], theirs[i]); !line.empty())
      throw Error(line);
    run.server.cpu_user_s += theirs[i].cpu_user_s;
    run.server.cpu_system_s += theirs[i].cpu_system_s;
    run.server.window_us = std::max(run.server.window_us, theirs[i].offset_us + theirs[i].elapsed_us);
  }
  run.server.facts = measure::merge_facts_of(theirs);
}

}  // namespace

HttpRun run_http_test(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                      session::InterruptWatch& interrupt, int round, measure::Environment& environment) {
  if (!config.urls.empty()) return run_http_url(config, tls, mode, interrupt);
  if (config.test.http.requests_per_connection > 0)
    return run_http_reconnecting(config, tls, mode, interrupt, round, environment);
  const RunClock clock;
  const session::Timeouts& timeouts = config.timeouts;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address));
  const session::InterruptWatch::Guard control_guard(interrupt, control.native_handle());
  protocol::TestRequest request = session::test_request(config, mode, tls);
  request.round = static_cast<std::uint32_t>(round);
  const protocol::TestAccept accept = session::start_test(control, request, timeouts, environment);

  const std::uint32_t connections = request.test.streams;
  DataConnections data = open_data_connections(config, tls, mode, accept, connections, control);
  HttpRun run;
  run.mode = mode;
  run.handshake_us = measure::summarize(data.handshake_us).mean;
  run.tls = tls_parameters(*data.streams.front(), config.test.record_size);
  if (const tls::TlsStream* tls_stream = data.streams.front()->tls())
    run.alpn = tls_stream->session_info().alpn;
  const std::int64_t go_ns = measure::now_ns();
  const std::vector<HttpClientSpec> specs = http_client_specs(config, request.test, go_ns);
  std::vector<HttpSideResult> mine(connections);
  {
    std::vector<std::unique_ptr<session::InterruptWatch::Guard>> guards;
    std::vector<int> fds;
    for (const auto& stream : data.streams) {
      guards.push_back(std::make_unique<session::InterruptWatch::Guard>(interrupt, stream->native_handle()));
      fds.push_back(stream->native_handle());
    }
    std::vector<RunFacts> facts = run_data_threads(fds, config.client_cpu, [&](std::size_t i) {
      mine[i] = run_http_client(*data.streams[i], specs[i]);
    });
    for (std::size_t i = 0; i < mine.size(); ++i)
      mine[i].facts = std::move(facts[i]);
  }
  data.streams.clear();
  aggregate_http(run, mine);
  if (interrupt.interrupted()) {
    run.partial = true;
    return run;
  }
  trade_and_judge(control, request, mine, go_ns, timeouts, clock.elapsed_us(), run);
  session::await_close(control, timeouts.control);
  return run;
}

}  // namespace tlscmp::kinds
