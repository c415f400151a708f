#pragma once

// UDP sockets for datagram tests, and batched I/O: recvmmsg(2) and
// sendmmsg(2), so that one system call moves many small datagrams.

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

#include "run_facts.hpp"
#include "transport/socket.hpp"
#include "transport/unique_fd.hpp"

namespace tlscmp {

// A non-blocking UDP socket bound to a free port on the local address of the
// connected TCP socket `beside` (the control connection), so that the client
// reaches it as it reached the server. `port` is set to the port bound.
// Throws tlscmp::Error.
UniqueFd bind_udp_beside(int beside, std::uint16_t& port);

// A non-blocking UDP socket connected to the remote address of `beside`, at `port`.
UniqueFd connect_udp_beside(int beside, std::uint16_t port);

// A non-blocking UDP socket connected to `to` (from `from`'s address, a
// port of its own, where given); on failure an invalid fd and `ec`.
UniqueFd connect_udp(const SocketAddress& to, const SocketAddress* from, std::error_code& ec);

// SO_RXQ_OVFL: each received datagram then carries the socket's drop count.
void enable_drop_counter(int fd);

// Asks for SO_RCVBUF / SO_SNDBUF (0 leaves the default); returns what the kernel applied.
int set_receive_buffer(int fd, std::uint32_t bytes);
int set_send_buffer(int fd, std::uint32_t bytes);

// UDP segmentation offload (UDP_SEGMENT): from now on a send of more than
// `segment_bytes` is cut into datagrams of that size by the kernel or the NIC.
// Throws Error if the kernel has no UDP GSO.
void enable_udp_segmentation(int fd, std::uint16_t segment_bytes);
// The most datagrams one segmented send may carry (the kernel's limit is 64 or 128).
inline constexpr std::size_t kMaxGsoSegments = 64;

// The kernel's drop count of this one UDP socket (the "drops" column of
// /proc/net/udp or /proc/net/udp6, found by the socket's inode): unlike
// SO_RXQ_OVFL it also counts drops after the last datagram taken.
std::optional<std::uint64_t> udp_socket_drops(int fd);

// The host's UDP counters so far (HostUdp holds them as counts, not yet
// differences): /proc/net/snmp's Udp line plus /proc/net/snmp6's Udp6
// ones. parse_host_udp takes the two files' text; nullopt without the Udp
// lines or any of the five counters.
std::optional<HostUdp> parse_host_udp(const std::string& snmp, const std::string& snmp6);
std::optional<HostUdp> read_host_udp();

// Udp RcvbufErrors of /proc/net/snmp plus Udp6RcvbufErrors of /proc/net/snmp6:
// datagrams this network namespace dropped for a full receive buffer, since boot.
// nullopt where the files cannot be read.
std::optional<std::uint64_t> udp_receive_buffer_errors();

// Receives up to `batch` datagrams per call into buffers of `capacity` bytes.
class DatagramBatch {
 public:
  DatagramBatch(std::size_t batch, std::size_t capacity);

  // Takes what is waiting on `fd`, without waiting: the count (0 when none
  // waits). Throws tlscmp::Error on a failure other than "nothing waiting".
  std::size_t receive(int fd);

  std::span<const std::byte> datagram(std::size_t i) const {
    return {buffers_.data() + i * capacity_, messages_[i].msg_len};
  }
  std::span<std::byte> buffer(std::size_t i) { return {buffers_.data() + i * capacity_, capacity_}; }
  // Longer than the buffer: cut short by the kernel.
  bool truncated(std::size_t i) const { return (messages_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0; }
  // The socket's SO_RXQ_OVFL counter, as the last batch carried it.
  std::optional<std::uint32_t> drops() const { return drops_; }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::vector<std::byte> buffers_;
  std::vector<iovec> iovecs_;
  std::vector<mmsghdr> messages_;
  std::vector<std::byte> controls_;  // one control buffer per message, for SO_RXQ_OVFL
  std::optional<std::uint32_t> drops_;
};

// Sends `messages` on a connected socket with sendmmsg(2): how many went
// out. Fewer than all, with `ec` set, when the socket would block or the
// kernel refused one (ENOBUFS, EMSGSIZE, ECONNREFUSED ...).
std::size_t send_datagrams(int fd, std::span<mmsghdr> messages, std::error_code& ec);

}  // namespace tlscmp
