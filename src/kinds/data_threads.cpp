#include "kinds/data_threads.hpp"

#include <algorithm>
#include <thread>

#include "measure/host.hpp"
#include "tls/tls_stream.hpp"
#include "transport/datagram.hpp"
#include "transport/tcp_info.hpp"

namespace tlscmp::kinds {

std::function<std::optional<UdpPath>()> port_of(const Stream& stream) {
  if (!stream.port_path()) return {};
  return [&stream] { return stream.port_path(); };
}

std::vector<RunFacts> run_data_threads(const std::vector<int>& fds, int cpu,
                                       const std::function<void(std::size_t)>& work, bool watch_udp,
                                       const std::function<std::optional<UdpPath>()>& port) {
  std::vector<RunFacts> facts(fds.size());
  const std::optional<HostUdp> udp_before = watch_udp ? read_host_udp() : std::nullopt;
  const std::optional<UdpPath> port_before = port ? port() : std::nullopt;
  measure::RunWatch watch(fds.size());
  const auto one = [&](std::size_t i) {
    const measure::ThreadPin pin(cpu);
    if (cpu >= 0 && pin.error().empty()) facts[i].pinned_cpu = cpu;
    watch.attach(i, fds[i]);
    work(i);
    if (fds[i] >= 0) facts[i].tcp = read_tcp_info(fds[i]);
    watch.detach(i);
  };
  {
    std::vector<std::jthread> others;
    others.reserve(fds.size());
    for (std::size_t i = 1; i < fds.size(); ++i)
      others.emplace_back(one, i);
    if (!fds.empty()) one(0);
  }  // joins the others
  const std::optional<HostCpu> host_cpu = watch.finish();
  std::optional<HostUdp> host_udp;
  if (udp_before) {
    if (const std::optional<HostUdp> after = read_host_udp())
      host_udp = measure::host_udp_between(*udp_before, *after);
  }
  if (port_before && !facts.empty()) {
    if (const std::optional<UdpPath> after = port())
      facts.front().udp_path = measure::udp_path_between(*port_before, *after);
  }
  for (std::size_t i = 0; i < facts.size(); ++i) {
    facts[i].host_cpu = host_cpu;
    facts[i].host_udp = host_udp;
    facts[i].cpu_samples = watch.cpu_samples(i);
    if (facts[i].tcp) facts[i].tcp->cwnd_max = std::max(facts[i].tcp->cwnd_max, watch.cwnd_max(i));
  }
  return facts;
}

}  // namespace tlscmp::kinds
