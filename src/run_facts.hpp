#pragma once

// What the kernel says about one side of a run beyond bytes and time: the
// data sockets' TCP_INFO at the end of the transfer, the host's CPU split
// over the run, the CPUs the data threads ran on, and for QUIC the
// datagrams and the host's UDP drops. They explain why two
// runs differ (retransmits, steal, where the scheduler put the two ends).
// Plain values: measured in measure/ and transport/, carried by protocol/,
// shown by report/.

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tlscmp {

// A data socket's TCP_INFO (tcp(7)) read as its transfer ended. With -P,
// the connections added up (retransmits, delivery rate, limited times), the
// highest window, and the mean round trip.
struct TcpInfo {
  std::uint32_t total_retrans = 0;  // segments retransmitted over the connection's life
  std::uint64_t bytes_retrans = 0;  // their bytes (kernel 4.19 and later, else 0)
  std::uint32_t rtt_us = 0;         // smoothed round trip time
  std::uint32_t rttvar_us = 0;      // its mean deviation
  std::uint32_t snd_cwnd = 0;       // congestion window at the end, segments
  // The highest congestion window seen: sampled while the data moved, and at the end.
  std::uint32_t cwnd_max = 0;
  std::uint64_t delivery_rate = 0;  // bytes/s, the kernel's last estimate (4.9 and later)
  // Time the sender had data in flight, and of it the time it was held back
  // by the receiver's window or by its own send buffer (kernel 4.10 and
  // later: nullopt where the kernel does not say).
  std::optional<std::uint64_t> busy_us;
  std::optional<std::uint64_t> rwnd_limited_us;
  std::optional<std::uint64_t> sndbuf_limited_us;

  double rwnd_limited_share() const { return share(rwnd_limited_us); }
  double sndbuf_limited_share() const { return share(sndbuf_limited_us); }

 private:
  double share(const std::optional<std::uint64_t>& part) const {
    return part && busy_us && *busy_us > 0 ? static_cast<double>(*part) / static_cast<double>(*busy_us) : 0;
  }
};

// The host's CPU time over a run, from /proc/stat (all CPUs, every process
// and interrupt), in percent of it. Process CPU misses interrupt time, and
// kTLS moves crypto into the kernel: this is where both show.
struct HostCpu {
  double user = 0;  // with nice
  double system = 0;
  double irq = 0;
  double softirq = 0;
  double steal = 0;  // taken by the hypervisor for other guests
  double idle = 0;   // with iowait
  // The ticks the shares are of (USER_HZ, 100 a second per CPU): a run of
  // 50 ms on 2 CPUs has 10, so short runs give coarse shares.
  std::uint64_t ticks = 0;
};

// A QUIC client's datagrams over a run, counted where its QUIC stack hands
// them to the kernel (BIO_sendmmsg) and takes them back: packets, headers
// and all. With -P, its connections added up. A server's are its port's
// over its data threads' run: every connection on the port, the run's and
// any other test's at the same time (port_connections says how many).
struct UdpPath {
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_received = 0;
  std::uint64_t bytes_sent = 0;  // UDP payload
  std::uint64_t bytes_received = 0;
  std::uint32_t largest_sent = 0;  // the largest datagram sent, bytes: the size in use
  // The library's send calls: as many as datagrams where it sends one at a
  // time, fewer where it batches (sendmmsg).
  std::uint64_t send_calls = 0;
  std::uint32_t gso_segment = 0;  // UDP_SEGMENT on the socket at the end (0: no GSO)
  // The server's: the QUIC connections on its port as the run began or
  // ended, whichever was more (more than the run's own: the counts include
  // other tests'); the client's: none.
  std::optional<std::uint32_t> port_connections;
};

// The host's UDP counters over a run (/proc/net/snmp's Udp line): every UDP
// socket of the network namespace, another program's too. The errors are
// datagrams the kernel dropped.
struct HostUdp {
  std::uint64_t in_datagrams = 0;
  std::uint64_t out_datagrams = 0;
  std::uint64_t in_errors = 0;      // dropped on receipt, the two below among them
  std::uint64_t rcvbuf_errors = 0;  // a socket's receive buffer was full
  std::uint64_t sndbuf_errors = 0;  // a socket's send buffer was full
};

struct RunFacts {
  std::optional<TcpInfo> tcp;       // stream and rr runs, where the kernel answered
  std::optional<HostCpu> host_cpu;  // where /proc/stat could be read
  std::optional<UdpPath> udp_path;  // QUIC: the client's datagrams
  std::optional<HostUdp> host_udp;  // QUIC: the host's UDP counters, where /proc/net/snmp could be read
  // rr --stream-per-tx over QUIC: the transactions' streams this side
  // opened (client) or took (server), one per transaction.
  std::optional<std::uint64_t> transaction_streams;
  // The CPUs the side's data threads were seen on, each with how many
  // samples saw a thread there (every 10 ms, and as each thread began and ended).
  std::map<int, std::uint32_t> cpu_samples;
  int pinned_cpu = -1;  // -A: the CPU they were pinned to, else -1

  // The CPU that holds at least two thirds of the samples, else nullopt
  // (the threads moved, or ran on several).
  std::optional<int> main_cpu() const {
    std::uint64_t total = 0;
    for (const auto& [cpu, n] : cpu_samples)
      total += n;
    for (const auto& [cpu, n] : cpu_samples) {
      if (3 * std::uint64_t{n} >= 2 * total) return cpu;
    }
    return std::nullopt;
  }
};

}  // namespace tlscmp
