#include "kinds/stream/streams.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <thread>
#include <utility>

#include "kinds/data_threads.hpp"
#include "kinds/stream/tls_facts.hpp"
#include "measure/host.hpp"

namespace tlscmp::kinds {
namespace {

SideResult run_one(const StreamWork& work) {
  const tls::TlsStream* tls = std::as_const(*work.stream).tls();
  const tls::SessionInfo before = tls != nullptr ? tls->session_info() : tls::SessionInfo{};
  SideResult result = run_transfer(*work.stream, work.spec);
  if (tls != nullptr) add_tls_facts(result, *tls, before);
  return result;
}

}  // namespace

Role stream_role(Direction direction, bool bidir, std::uint32_t index, bool server_side) {
  bool client_sends = direction == Direction::client_to_server;
  if (bidir && index % 2 == 1) client_sends = !client_sends;
  return client_sends != server_side ? Role::sender : Role::receiver;
}

std::vector<SideResult> run_streams(const std::vector<StreamWork>& work, int cpu) {
  std::vector<SideResult> results(work.size());
  std::vector<int> fds;
  for (const StreamWork& w : work)
    fds.push_back(w.stream->native_handle());
  const bool quic = !work.empty() && facts(work.front().stream->mode()).over_udp;
  std::vector<RunFacts> facts = run_data_threads(
      fds, cpu, [&](std::size_t i) { results[i] = run_one(work[i]); }, quic,
      work.empty() ? nullptr : port_of(*work.front().stream));
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].facts = std::move(facts[i]);
    if (!results[i].facts.udp_path) results[i].facts.udp_path = work[i].stream->udp_path();
  }
  std::int64_t earliest = INT64_MAX;
  for (const SideResult& r : results) {
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

namespace {

// Counts over streams: none as soon as one stream has none.
std::optional<std::uint64_t> add_counts(const std::optional<std::uint64_t>& sum,
                                        const std::optional<std::uint64_t>& more) {
  if (!sum || !more) return std::nullopt;
  return *sum + *more;
}

}  // namespace

SideResult combine(const std::vector<SideResult>& results) {
  if (results.empty()) return {};
  if (results.size() == 1) return results.front();
  SideResult total = results.front();
  total.bytes = total.messages = total.payload_bytes = total.tls_bytes = 0;
  total.cpu_user_s = total.cpu_system_s = total.elapsed_us = 0;
  total.read_calls = total.write_calls = 0;
  total.error.clear();
  total.facts = measure::merge_facts_of(results);
  for (const SideResult& r : results) {
    total.bytes += r.bytes;
    total.messages += r.messages;
    total.payload_bytes += r.payload_bytes;
    total.tls_bytes += r.tls_bytes;
    total.read_calls = add_counts(total.read_calls, r.read_calls);
    total.write_calls = add_counts(total.write_calls, r.write_calls);
    total.cpu_user_s += r.cpu_user_s;
    total.cpu_system_s += r.cpu_system_s;
    total.elapsed_us = std::max(total.elapsed_us, r.offset_us + r.elapsed_us);
    if (total.error.empty() && !r.error.empty())
      total.error = fmt::format("stream {}: {}", r.stream, r.error);
  }
  return total;
}

}  // namespace tlscmp::kinds
