// --requests-per-connection, the client's part against any server: -P
// connectors, each opening a connection after another (the dial is the
// server's make's: see url.cpp and reconnect_client.cpp), R requests on
// each, the share --resume-ratio of them offering the connector's last
// session; the connections' set-up timed full and resumed apart.

#include <fmt/format.h>
#include <algorithm>
#include <thread>

#include "kinds/data_connections.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"

namespace tlscmp::kinds {
namespace {

// One connection's figures into its connector's.
void add_connection(HttpSideResult& total, const HttpSideResult& r) {
  total.transactions += r.transactions;
  total.bytes_received += r.bytes_received;
  total.latency += r.latency;
  total.first_byte += r.first_byte;
  total.wire_sent += r.wire_sent;
  total.wire_received += r.wire_received;
  total.end_ns = std::max(total.end_ns, r.end_ns);
}

// One connector: a connection after another, each `per` requests (the last
// what is left of its share), the share `resume_percent` of them offering
// the last session, until its share is made or its time is up. The CPU is
// its thread's over all of it, the connections' set-up with the requests.
// A timed run opens no connection at or after the stop; one opened makes
// its R requests. The first connection of `describe`'s connector names the
// run's TLS parameters and ALPN.
HttpSideResult connector(const session::ClientConfig& config, bool tls, const HttpClientSpec& spec,
                         const HttpDial& dial, HttpRun* describe) {
  const std::uint32_t per = config.test.http.requests_per_connection;
  const std::uint64_t percent = config.test.http.resume_percent;
  std::uint64_t could = 0;  // connections so far that had a session to offer
  HttpSideResult total;
  tls::Session saved;
  const measure::CpuTimes cpu_start = measure::thread_cpu_times();
  total.start_ns = total.end_ns = spec.rate_rps > 0 ? spec.start_ns : measure::now_ns();
  // Open loop (--rate): each connection's R requests are the next R of
  // the connector's grid; it is dialled when the first of them is due, so
  // that its set-up counts in that request's latency, as a browser's first
  // request waits for its connection.
  const double period_ns = spec.rate_rps > 0 ? 1e9 / spec.rate_rps : 0;
  std::int64_t due_ns = spec.start_ns;
  while (spec.rate_rps > 0   ? due_ns < spec.stop_ns
         : spec.requests > 0 ? total.transactions < spec.requests
                             : measure::now_ns() < spec.stop_ns) {
    if (spec.rate_rps > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(due_ns - measure::now_ns()));
    // The share spread evenly (0.8: four of each five), not drawn: each
    // run offers as many as asked.
    bool offer = false;
    if (tls && static_cast<bool>(saved)) {
      offer = (could + 1) * percent / 100 > could * percent / 100;
      ++could;
    }
    double us = 0;
    std::unique_ptr<Stream> stream;
    try {
      stream = dial(offer ? saved : tls::Session(), us);
    } catch (const Error& e) {
      total.error = e.what();
      break;
    }
    const bool resumed = stream->tls() != nullptr && stream->tls()->resumed();
    if (describe != nullptr && total.connections == 0) {
      describe->tls = tls_parameters(*stream, config.test.record_size);
      if (const tls::TlsStream* t = stream->tls()) describe->alpn = t->session_info().alpn;
    }
    (resumed ? total.handshake_resumed : total.handshake_full).add(us);
    ++total.connections;
    total.resumed += resumed ? 1 : 0;
    HttpClientSpec one = spec;
    one.requests = spec.requests > 0 ? std::min<std::uint64_t>(per, spec.requests - total.transactions) : per;
    if (spec.rate_rps > 0) {
      one.start_ns = due_ns;
      due_ns = one.stop_ns =
          std::min(spec.stop_ns, due_ns + static_cast<std::int64_t>(static_cast<double>(per) * period_ns));
    }
    const HttpSideResult r = run_http_client(*stream, one);
    if (const tls::TlsStream* t = stream->tls(); t != nullptr && (t->has_new_session() || !saved))
      saved = t->session();
    add_connection(total, r);
    if (!r.error.empty()) {
      total.error = r.error;
      break;
    }
  }
  const measure::CpuTimes cpu = measure::thread_cpu_times() - cpu_start;
  total.cpu_user_s = cpu.user_s;
  total.cpu_system_s = cpu.system_s;
  return total;
}

}  // namespace

std::vector<HttpSideResult> run_connectors(const session::ClientConfig& config, bool tls,
                                           const std::vector<HttpClientSpec>& specs, const HttpDial& dial,
                                           HttpRun& run) {
  std::vector<HttpSideResult> mine(specs.size());
  const std::vector<int> no_sockets(specs.size(), -1);
  std::vector<RunFacts> facts = run_data_threads(no_sockets, config.client_cpu, [&](std::size_t i) {
    mine[i] = connector(config, tls, specs[i], dial, i == 0 ? &run : nullptr);
  });
  measure::LatencyHistogram full;
  measure::LatencyHistogram resumed;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    mine[i].facts = std::move(facts[i]);
    run.connections_opened += mine[i].connections;
    run.resumed_connections += mine[i].resumed;
    full += mine[i].handshake_full;
    resumed += mine[i].handshake_resumed;
  }
  run.handshake_full_us = full.summary();
  run.handshake_resumed_us = resumed.summary();
  const double all = static_cast<double>(run.handshake_full_us.count + run.handshake_resumed_us.count);
  if (all > 0)
    run.handshake_us = (run.handshake_full_us.mean * static_cast<double>(run.handshake_full_us.count) +
                        run.handshake_resumed_us.mean * static_cast<double>(run.handshake_resumed_us.count)) /
                       all;
  return mine;
}

}  // namespace tlscmp::kinds
