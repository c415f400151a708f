#pragma once

// The host around a run: its CPU split over the run (/proc/stat), where the
// data threads ran (sampled), their congestion windows (sampled), and
// pinning them (-A).

#include <sys/types.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "run_facts.hpp"

namespace tlscmp::measure {

// /proc/stat's first line: the ticks of all CPUs so far, by kind.
struct HostTicks {
  // user, nice, system, idle, iowait, irq, softirq, steal
  std::array<std::uint64_t, 8> ticks{};
};
std::optional<HostTicks> read_host_ticks();
// Parses /proc/stat's text; nullopt if it has no "cpu " line of at least eight counts.
std::optional<HostTicks> parse_host_ticks(const std::string& proc_stat);
// The split between two readings; nullopt when no tick passed.
std::optional<HostCpu> host_cpu_between(const HostTicks& before, const HostTicks& after);

// What the host's UDP counters (transport/datagram.hpp's read_host_udp)
// moved by between two readings.
HostUdp host_udp_between(const HostUdp& before, const HostUdp& after);
// What a QUIC server's port counts (tls::TlsStream::port_path) moved by
// between two readings: the largest datagram and GSO as they stand after,
// port_connections the more of the two.
UdpPath udp_path_between(const UdpPath& before, const UdpPath& after);
// Adds a connection's datagrams to `sum`'s (none yet: `p`'s): the largest
// datagram and GSO the more of the two.
void add_udp_path(std::optional<UdpPath>& sum, const UdpPath& p);

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();
// "0-3,6": a CPU list as the kernel writes one.
std::string cpu_list(const std::vector<int>& cpus);
// Pins the calling thread to `cpu` while it lives (-1: leaves it be), then
// gives it back the CPUs it had.
class ThreadPin {
 public:
  explicit ThreadPin(int cpu);
  ~ThreadPin();
  ThreadPin(const ThreadPin&) = delete;
  ThreadPin& operator=(const ThreadPin&) = delete;
  // "" once pinned (or asked for none), else why not.
  const std::string& error() const { return error_; }

 private:
  bool pinned_ = false;
  std::vector<int> before_;
  std::string error_;
};
// Why `cpu` cannot be pinned to on this host ("CPU 7 is not one this
// process may use: 0-1"), or "".
std::string check_cpu(int cpu);

// One side's facts over several data connections: TCP_INFO added up
// (retransmits, delivery rate, limited times), the highest windows, the
// mean round trip; the first host split (they share the host); the CPUs
// together.
RunFacts merge_facts(const std::vector<RunFacts>& each);
// The same over anything with a `facts` member (results of each stream, each connection).
template <typename Results>
RunFacts merge_facts_of(const Results& results) {
  std::vector<RunFacts> each;
  for (const auto& r : results)
    each.push_back(r.facts);
  return merge_facts(each);
}

// The processor field (39) of /proc/self/task/TID/stat: the CPU the thread
// last ran on; -1 if unknown. `stat` is that file's text.
int last_cpu_from_stat(const std::string& stat);

// Watches one side of a run: the host's ticks from construction to
// finish(), and, every `period` while it runs (1 ms a thread at least),
// each attached data thread's CPU and its socket's congestion window. Data threads attach as they start
// and detach before their socket closes.
class RunWatch {
 public:
  explicit RunWatch(std::size_t slots, std::chrono::milliseconds period = std::chrono::milliseconds(10));
  ~RunWatch();
  RunWatch(const RunWatch&) = delete;
  RunWatch& operator=(const RunWatch&) = delete;

  // On the data thread of `slot`: watch it and its socket `fd` (-1: none).
  void attach(std::size_t slot, int fd);
  // On the same thread, before its socket closes: last samples, then no more.
  void detach(std::size_t slot);
  // Stops the sampling; the host's split since construction. Once.
  std::optional<HostCpu> finish();

  // After finish(): the CPUs `slot`'s thread was seen on, and its socket's highest window.
  const std::map<int, std::uint32_t>& cpu_samples(std::size_t slot) const { return slots_[slot].cpus; }
  std::uint32_t cwnd_max(std::size_t slot) const { return slots_[slot].cwnd_max; }

 private:
  struct Slot {
    pid_t tid = 0;
    int fd = -1;
    bool active = false;
    std::map<int, std::uint32_t> cpus;  // samples per CPU
    std::uint32_t cwnd_max = 0;
  };
  void sample(Slot& slot);  // with mutex_ held
  void run();
  void stop_sampling();  // and waits for the sampler to end

  std::optional<HostTicks> start_;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<Slot> slots_;
  std::thread sampler_;
};

}  // namespace tlscmp::measure
