#include "kinds/stream/streams.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <thread>
#include <utility>

#include "kinds/stream/tls_facts.hpp"
#include "measure/host.hpp"
#include "transport/tcp_info.hpp"

namespace tlscmp::kinds {
namespace {

// Stream `slot` on this thread: pinned (-A) and watched while it runs; its
// socket's TCP_INFO as the transfer ends.
protocol::SideResult run_one(const StreamWork& work, int cpu, measure::RunWatch& watch, std::size_t slot) {
  const measure::ThreadPin pin(cpu);
  if (!pin.error().empty()) {
    protocol::SideResult failed;
    failed.role = work.spec.role;
    failed.error = pin.error();
    return failed;
  }
  const int fd = work.stream->native_handle();
  watch.attach(slot, fd);
  const tls::TlsStream* tls = std::as_const(*work.stream).tls();
  const tls::SessionInfo before = tls != nullptr ? tls->session_info() : tls::SessionInfo{};
  protocol::SideResult result = run_transfer(*work.stream, work.spec);
  result.facts.tcp = read_tcp_info(fd);
  watch.detach(slot);
  result.facts.pinned_cpu = cpu;
  if (tls != nullptr) add_tls_facts(result, *tls, before);
  return result;
}

}  // namespace

Role stream_role(Direction direction, bool bidir, std::uint32_t index, bool server_side) {
  bool client_sends = direction == Direction::client_to_server;
  if (bidir && index % 2 == 1) client_sends = !client_sends;
  return client_sends != server_side ? Role::sender : Role::receiver;
}

std::uint32_t forward_streams(bool bidir, std::uint32_t streams) {
  return bidir ? (streams + 1) / 2 : streams;
}

std::vector<protocol::SideResult> run_streams(const std::vector<StreamWork>& work, int cpu) {
  std::vector<protocol::SideResult> results(work.size());
  measure::RunWatch watch(work.size());
  {
    std::vector<std::jthread> others;
    others.reserve(work.size());
    for (std::size_t i = 1; i < work.size(); ++i) {
      others.emplace_back([&, i] { results[i] = run_one(work[i], cpu, watch, i); });
    }
    if (!work.empty()) results[0] = run_one(work[0], cpu, watch, 0);
  }  // joins the others
  const std::optional<HostCpu> host_cpu = watch.finish();
  for (std::size_t i = 0; i < results.size(); ++i) {
    RunFacts& facts = results[i].facts;
    facts.host_cpu = host_cpu;
    facts.cpu_samples = watch.cpu_samples(i);
    if (facts.tcp) facts.tcp->cwnd_max = std::max(facts.tcp->cwnd_max, watch.cwnd_max(i));
  }
  std::int64_t earliest = INT64_MAX;
  for (const protocol::SideResult& r : results) {
    if (r.window_start_ns != 0) earliest = std::min(earliest, r.window_start_ns);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].stream = static_cast<std::uint32_t>(i);
    if (results[i].window_start_ns != 0) {
      results[i].offset_us = static_cast<double>(results[i].window_start_ns - earliest) / 1e3;
    }
  }
  return results;
}

protocol::SideResult combine(const std::vector<protocol::SideResult>& results) {
  if (results.empty()) return {};
  if (results.size() == 1) return results.front();
  protocol::SideResult total = results.front();
  total.bytes = total.messages = total.payload_bytes = total.tls_bytes = 0;
  total.cpu_user_s = total.cpu_system_s = total.elapsed_us = 0;
  total.error.clear();
  std::vector<RunFacts> facts;
  for (const protocol::SideResult& r : results)
    facts.push_back(r.facts);
  total.facts = measure::merge_facts(facts);
  for (const protocol::SideResult& r : results) {
    total.bytes += r.bytes;
    total.messages += r.messages;
    total.payload_bytes += r.payload_bytes;
    total.tls_bytes += r.tls_bytes;
    total.cpu_user_s += r.cpu_user_s;
    total.cpu_system_s += r.cpu_system_s;
    total.elapsed_us = std::max(total.elapsed_us, r.offset_us + r.elapsed_us);
    if (total.error.empty() && !r.error.empty())
      total.error = fmt::format("stream {}: {}", r.stream, r.error);
  }
  return total;
}

}  // namespace tlscmp::kinds
