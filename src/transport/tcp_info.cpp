// Its own file: <linux/tcp.h>, which has the kernel's whole struct tcp_info,
// cannot be included beside <netinet/tcp.h>, whose struct is older.
#include "transport/tcp_info.hpp"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace tlscmp {
namespace {

// Did the kernel fill `field`? It copies as much of its struct as it has,
// and says how much in `length`.
#define TLSCMP_HAS(field) (length >= offsetof(tcp_info, field) + sizeof(tcp_info::field))

}  // namespace

std::optional<TcpInfo> read_tcp_info(int fd) {
  tcp_info raw{};
  socklen_t length = sizeof raw;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &raw, &length) != 0) return std::nullopt;
  if (!TLSCMP_HAS(tcpi_total_retrans)) return std::nullopt;
  TcpInfo info;
  info.total_retrans = raw.tcpi_total_retrans;
  info.rtt_us = raw.tcpi_rtt;
  info.rttvar_us = raw.tcpi_rttvar;
  info.snd_cwnd = raw.tcpi_snd_cwnd;
  info.cwnd_max = raw.tcpi_snd_cwnd;
  if (TLSCMP_HAS(tcpi_delivery_rate)) info.delivery_rate = raw.tcpi_delivery_rate;
  if (TLSCMP_HAS(tcpi_sndbuf_limited)) {
    info.busy_us = raw.tcpi_busy_time;
    info.rwnd_limited_us = raw.tcpi_rwnd_limited;
    info.sndbuf_limited_us = raw.tcpi_sndbuf_limited;
  }
  if (TLSCMP_HAS(tcpi_bytes_retrans)) info.bytes_retrans = raw.tcpi_bytes_retrans;
  return info;
}

std::uint32_t read_snd_cwnd(int fd) {
  tcp_info raw{};
  socklen_t length = sizeof raw;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &raw, &length) != 0 || !TLSCMP_HAS(tcpi_snd_cwnd)) return 0;
  return raw.tcpi_snd_cwnd;
}

#undef TLSCMP_HAS

}  // namespace tlscmp
