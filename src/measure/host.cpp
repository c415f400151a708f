#include "measure/host.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "transport/tcp_info.hpp"

namespace tlscmp::measure {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What a counter moved by from `before` to `after`: none if it went back.
std::uint64_t moved(std::uint64_t before, std::uint64_t after) {
  return after >= before ? after - before : 0;
}

}  // namespace

std::optional<HostTicks> parse_host_ticks(const std::string& proc_stat) {
  if (proc_stat.rfind("cpu ", 0) != 0) return std::nullopt;
  std::istringstream line(proc_stat.substr(4, proc_stat.find('\n') - 4));
  HostTicks t;
  for (std::uint64_t& count : t.ticks) {
    if (!(line >> count)) return std::nullopt;
  }
  return t;
}

std::optional<HostTicks> read_host_ticks() {
  return parse_host_ticks(read_file("/proc/stat"));
}

HostUdp host_udp_between(const HostUdp& before, const HostUdp& after) {
  return {moved(before.in_datagrams, after.in_datagrams), moved(before.out_datagrams, after.out_datagrams),
          moved(before.in_errors, after.in_errors), moved(before.rcvbuf_errors, after.rcvbuf_errors),
          moved(before.sndbuf_errors, after.sndbuf_errors)};
}

UdpPath udp_path_between(const UdpPath& before, const UdpPath& after) {
  UdpPath path = after;  // the largest datagram, GSO: as they stand at the end
  path.datagrams_sent = moved(before.datagrams_sent, after.datagrams_sent);
  path.datagrams_received = moved(before.datagrams_received, after.datagrams_received);
  path.bytes_sent = moved(before.bytes_sent, after.bytes_sent);
  path.bytes_received = moved(before.bytes_received, after.bytes_received);
  path.send_calls = moved(before.send_calls, after.send_calls);
  if (before.port_connections && after.port_connections)
    path.port_connections = std::max(*before.port_connections, *after.port_connections);
  return path;
}

std::optional<HostCpu> host_cpu_between(const HostTicks& before, const HostTicks& after) {
  std::array<double, 8> d{};
  double total = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    d[i] = after.ticks[i] >= before.ticks[i] ? static_cast<double>(after.ticks[i] - before.ticks[i]) : 0;
    total += d[i];
  }
  if (total <= 0) return std::nullopt;
  const auto percent = [&](double ticks) { return 100.0 * ticks / total; };
  HostCpu cpu;
  cpu.user = percent(d[0] + d[1]);
  cpu.system = percent(d[2]);
  cpu.idle = percent(d[3] + d[4]);
  cpu.irq = percent(d[5]);
  cpu.softirq = percent(d[6]);
  cpu.steal = percent(d[7]);
  cpu.ticks = static_cast<std::uint64_t>(total);
  return cpu;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(static_cast<std::size_t>(cpu), &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    if (!text.empty()) text += ',';
    text += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return text;
}

std::string check_cpu(int cpu) {
  const std::vector<int> cpus = allowed_cpus();
  if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) return {};
  return fmt::format("CPU {} is not one this process may run on here: {}", cpu, cpu_list(cpus));
}

namespace {

bool set_affinity(const std::vector<int>& cpus, int& error) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus)
    CPU_SET(static_cast<std::size_t>(cpu), &set);
  error = ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
  return error == 0;
}

}  // namespace

ThreadPin::ThreadPin(int cpu) {
  if (cpu < 0) return;
  error_ = check_cpu(cpu);  // also a CPU past CPU_SETSIZE
  if (!error_.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::pthread_getaffinity_np(::pthread_self(), sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(static_cast<std::size_t>(c), &set)) before_.push_back(c);
    }
  }
  int error = 0;
  if (!set_affinity({cpu}, error)) {
    error_ = fmt::format("cannot pin to CPU {}: {}", cpu, std::strerror(error));
    return;
  }
  pinned_ = true;
}

ThreadPin::~ThreadPin() {
  int ignored = 0;
  if (pinned_ && !before_.empty()) set_affinity(before_, ignored);
}

void add_udp_path(std::optional<UdpPath>& sum, const UdpPath& p) {
  UdpPath& s = sum ? *sum : sum.emplace();
  s.datagrams_sent += p.datagrams_sent;
  s.datagrams_received += p.datagrams_received;
  s.bytes_sent += p.bytes_sent;
  s.bytes_received += p.bytes_received;
  s.send_calls += p.send_calls;
  s.largest_sent = std::max(s.largest_sent, p.largest_sent);
  s.gso_segment = std::max(s.gso_segment, p.gso_segment);
  if (p.port_connections) s.port_connections = std::max(s.port_connections.value_or(0), *p.port_connections);
}

RunFacts merge_facts(const std::vector<RunFacts>& each) {
  if (each.size() == 1) return each.front();
  RunFacts all;
  double rtt = 0;
  double rttvar = 0;
  int with_tcp = 0;
  const auto add = [](std::optional<std::uint64_t>& to, const std::optional<std::uint64_t>& part) {
    if (part) to = to.value_or(0) + *part;
  };
  for (std::size_t i = 0; i < each.size(); ++i) {
    const RunFacts& f = each[i];
    if (!all.host_cpu) all.host_cpu = f.host_cpu;
    if (!all.host_udp) all.host_udp = f.host_udp;
    if (f.udp_path) add_udp_path(all.udp_path, *f.udp_path);
    add(all.transaction_streams, f.transaction_streams);
    if (i == 0) all.pinned_cpu = f.pinned_cpu;
    for (const auto& [cpu, n] : f.cpu_samples)
      all.cpu_samples[cpu] += n;
    if (!f.tcp) continue;
    const TcpInfo& t = *f.tcp;
    TcpInfo& sum = all.tcp ? *all.tcp : all.tcp.emplace();
    ++with_tcp;
    sum.total_retrans += t.total_retrans;
    sum.bytes_retrans += t.bytes_retrans;
    sum.snd_cwnd = std::max(sum.snd_cwnd, t.snd_cwnd);
    sum.cwnd_max = std::max(sum.cwnd_max, t.cwnd_max);
    sum.delivery_rate += t.delivery_rate;
    add(sum.busy_us, t.busy_us);
    add(sum.rwnd_limited_us, t.rwnd_limited_us);
    add(sum.sndbuf_limited_us, t.sndbuf_limited_us);
    rtt += t.rtt_us;
    rttvar += t.rttvar_us;
  }
  if (all.tcp) {
    all.tcp->rtt_us = static_cast<std::uint32_t>(rtt / with_tcp + 0.5);
    all.tcp->rttvar_us = static_cast<std::uint32_t>(rttvar / with_tcp + 0.5);
  }
  return all;
}

int last_cpu_from_stat(const std::string& stat) {
  // pid (comm) state ...: comm may hold spaces and parentheses; fields
  // count from after its last ')'. The processor is field 39, the 37th after it.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 39; ++i) {
    if (!(fields >> field)) return -1;
  }
  try {
    return std::stoi(field);
  } catch (const std::exception&) {
    return -1;
  }
}

RunWatch::RunWatch(std::size_t slots, std::chrono::milliseconds period)
    : start_(read_host_ticks()),
      // A sample reads a file and a socket option per thread: with many
      // threads, fewer samples, so that watching costs about 1% of a core.
      period_(std::max(period, std::chrono::milliseconds(static_cast<std::int64_t>(slots)))),
      slots_(slots) {
  if (!slots_.empty()) sampler_ = std::thread([this] { run(); });  // none to sample: the host's split alone
}

RunWatch::~RunWatch() {
  stop_sampling();
}

void RunWatch::stop_sampling() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (sampler_.joinable()) sampler_.join();
}

void RunWatch::attach(std::size_t slot, int fd) {
  std::lock_guard lock(mutex_);
  Slot& s = slots_.at(slot);
  s.tid = ::gettid();
  s.fd = fd;
  s.active = true;
  if (const int cpu = ::sched_getcpu(); cpu >= 0) ++s.cpus[cpu];
}

void RunWatch::detach(std::size_t slot) {
  std::lock_guard lock(mutex_);
  Slot& s = slots_.at(slot);
  if (!s.active) return;
  if (const int cpu = ::sched_getcpu(); cpu >= 0) ++s.cpus[cpu];
  if (s.fd >= 0) s.cwnd_max = std::max(s.cwnd_max, read_snd_cwnd(s.fd));
  s.active = false;
}

void RunWatch::sample(Slot& slot) {
  const int cpu = last_cpu_from_stat(read_file(fmt::format("/proc/self/task/{}/stat", slot.tid)));
  if (cpu >= 0) ++slot.cpus[cpu];
  if (slot.fd >= 0) slot.cwnd_max = std::max(slot.cwnd_max, read_snd_cwnd(slot.fd));
}

void RunWatch::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period_, [&] { return stop_; })) {
    for (Slot& s : slots_) {
      if (s.active) sample(s);
    }
  }
}

std::optional<HostCpu> RunWatch::finish() {
  stop_sampling();
  const std::optional<HostTicks> end = read_host_ticks();
  if (!start_ || !end) return std::nullopt;
  return host_cpu_between(*start_, *end);
}

}  // namespace tlscmp::measure
