#include "transport/datagram.hpp"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "error.hpp"
#include "transport/socket.hpp"

namespace tlscmp {
namespace {

[[noreturn]] void fail(const char* what) {
  throw Error(fmt::format("{}: {}", what, std::strerror(errno)));
}

// The address of one end of `fd`: local (getsockname) or remote (getpeername).
sockaddr_storage end_of(int fd, bool local, socklen_t& length) {
  sockaddr_storage address{};
  length = sizeof address;
  const int rc = local ? ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length)
                       : ::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (rc != 0) fail("cannot read the control connection's address");
  return address;
}

void set_port(sockaddr_storage& address, std::uint16_t port) {
  if (address.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&address)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(&address)->sin_port = htons(port);
  }
}

UniqueFd udp_socket(int family) {
  UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) fail("cannot create a UDP socket");
  return fd;
}

int applied(int fd, int option) {
  int value = 0;
  socklen_t length = sizeof value;
  ::getsockopt(fd, SOL_SOCKET, option, &value, &length);
  return value;
}

}  // namespace

std::optional<std::uint64_t> udp_socket_drops(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  const std::string inode = std::to_string(st.st_ino);
  for (const char* file : {"/proc/net/udp", "/proc/net/udp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      // sl local remote st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
      std::istringstream fields(line);
      std::vector<std::string> f;
      for (std::string w; fields >> w;)
        f.push_back(w);
      if (f.size() >= 13 && f[9] == inode) return std::stoull(f[12]);
    }
  }
  return std::nullopt;
}

UniqueFd bind_udp_beside(int beside, std::uint16_t& port) {
  socklen_t length = 0;
  sockaddr_storage address = end_of(beside, /*local=*/true, length);
  set_port(address, 0);
  UniqueFd fd = udp_socket(address.ss_family);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0)
    fail("cannot bind a UDP socket");
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length);
  port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return fd;
}

UniqueFd connect_udp_beside(int beside, std::uint16_t port) {
  socklen_t length = 0;
  sockaddr_storage address = end_of(beside, /*local=*/false, length);
  set_port(address, port);
  UniqueFd fd = udp_socket(address.ss_family);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    fail("cannot connect a UDP socket to the server");
  }
  return fd;
}

UniqueFd connect_udp(const SocketAddress& to, const SocketAddress* from, std::error_code& ec) {
  UniqueFd fd(::socket(to.storage.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid() ||
      (from != nullptr &&
       ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&from->storage), from->length) != 0) ||
      ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to.storage), to.length) != 0) {
    ec = {errno, std::system_category()};
    return {};
  }
  return fd;
}

void enable_drop_counter(int fd) {
  const int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on) != 0) fail("cannot set SO_RXQ_OVFL");
}

int set_receive_buffer(int fd, std::uint32_t bytes) {
  set_socket_buffers(fd, 0, bytes);
  return applied(fd, SO_RCVBUF);
}

int set_send_buffer(int fd, std::uint32_t bytes) {
  set_socket_buffers(fd, bytes, 0);
  return applied(fd, SO_SNDBUF);
}

void enable_udp_segmentation(int fd, std::uint16_t segment_bytes) {
  const int size = segment_bytes;
  if (::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof size) != 0) {
    throw Error(fmt::format("--gso: this kernel takes no UDP segmentation offload (UDP_SEGMENT): {}",
                            std::strerror(errno)));
  }
}

std::optional<HostUdp> parse_host_udp(const std::string& snmp, const std::string& snmp6) {
  // snmp: a header line of names and a value line, both "Udp: ...".
  std::map<std::string, std::uint64_t> counter;
  std::istringstream lines(snmp);
  for (std::string names; std::getline(lines, names);) {
    if (names.rfind("Udp: ", 0) != 0) continue;
    std::string values;
    if (!std::getline(lines, values)) break;
    std::istringstream name_words(names.substr(5));
    std::istringstream value_words(values.substr(std::min<std::size_t>(5, values.size())));
    std::string name;
    std::uint64_t value = 0;
    while (name_words >> name && value_words >> value)
      counter[name] = value;
    break;
  }
  // snmp6: "Udp6InDatagrams 12" per line, added to IPv4's.
  std::map<std::string, std::uint64_t> counter6;
  std::istringstream lines6(snmp6);
  std::string name;
  std::uint64_t value = 0;
  while (lines6 >> name >> value)
    counter6[name] = value;
  HostUdp udp;
  for (const auto& [key, to] :
       {std::pair{"InDatagrams", &udp.in_datagrams}, std::pair{"OutDatagrams", &udp.out_datagrams},
        std::pair{"InErrors", &udp.in_errors}, std::pair{"RcvbufErrors", &udp.rcvbuf_errors},
        std::pair{"SndbufErrors", &udp.sndbuf_errors}}) {
    const auto it = counter.find(key);
    if (it == counter.end()) return std::nullopt;
    const auto v6 = counter6.find(std::string("Udp6") + key);
    *to = it->second + (v6 != counter6.end() ? v6->second : 0);
  }
  return udp;
}

std::optional<HostUdp> read_host_udp() {
  const auto text = [](const char* path) {
    std::ifstream in(path);
    std::ostringstream all;
    all << in.rdbuf();
    return all.str();
  };
  return parse_host_udp(text("/proc/net/snmp"), text("/proc/net/snmp6"));
}

std::optional<std::uint64_t> udp_receive_buffer_errors() {
  const std::optional<HostUdp> udp = read_host_udp();
  if (!udp) return std::nullopt;
  return udp->rcvbuf_errors;
}

DatagramBatch::DatagramBatch(std::size_t batch, std::size_t capacity)
    : capacity_(capacity),
      buffers_(batch * capacity),
      iovecs_(batch),
      messages_(batch),
      controls_(batch * CMSG_SPACE(sizeof(std::uint32_t))) {}

std::size_t DatagramBatch::receive(int fd) {
  const std::size_t control_bytes = CMSG_SPACE(sizeof(std::uint32_t));
  for (std::size_t i = 0; i < messages_.size(); ++i) {
    iovecs_[i] = {buffers_.data() + i * capacity_, capacity_};
    msghdr& h = messages_[i].msg_hdr;
    h = {};
    h.msg_iov = &iovecs_[i];
    h.msg_iovlen = 1;
    h.msg_control = controls_.data() + i * control_bytes;
    h.msg_controllen = control_bytes;
  }
  int n = 0;
  do {
    n = ::recvmmsg(fd, messages_.data(), static_cast<unsigned>(messages_.size()), MSG_DONTWAIT, nullptr);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    // ECONNREFUSED: an ICMP error for something this socket sent; nothing to take.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED) return 0;
    fail("cannot receive datagrams");
  }
  // The latest count is enough: the kernel adds the counter only once it is non-zero.
  bool found = false;
  for (auto i = static_cast<std::size_t>(n); i-- > 0 && !found;) {
    msghdr& h = messages_[i].msg_hdr;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr && !found; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        std::uint32_t drops = 0;
        std::memcpy(&drops, CMSG_DATA(c), sizeof drops);
        drops_ = drops;
        found = true;
      }
    }
  }
  return static_cast<std::size_t>(n);
}

std::size_t send_datagrams(int fd, std::span<mmsghdr> messages, std::error_code& ec) {
  std::size_t sent = 0;
  while (sent < messages.size()) {
    const int n = ::sendmmsg(fd, messages.data() + sent, static_cast<unsigned>(messages.size() - sent), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      ec.assign(errno, std::system_category());
      return sent;
    }
    sent += static_cast<std::size_t>(n);
  }
  return sent;
}

}  // namespace tlscmp
