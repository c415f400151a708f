#include "transport/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "endpoint.hpp"
#include "error.hpp"
#include "transport/errors.hpp"

namespace tlscmp {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// What a resolver thread fills in, shared with it: a thread left behind past
// the deadline still holds it.
struct Resolution {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  int status = 0;  // getaddrinfo's
  std::vector<tcp::endpoint> endpoints;
};

void resolve_into(Resolution& r, const std::string& host, const std::string& service, int flags) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  addrinfo* list = nullptr;
  const int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  std::vector<tcp::endpoint> endpoints;
  for (const addrinfo* a = list; status == 0 && a != nullptr; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_in6)) continue;
    tcp::endpoint endpoint;
    std::memcpy(endpoint.data(), a->ai_addr, a->ai_addrlen);
    endpoint.resize(a->ai_addrlen);
    endpoints.push_back(endpoint);
  }
  if (list != nullptr) ::freeaddrinfo(list);
  const std::lock_guard lock(r.mutex);
  r.status = status;
  r.endpoints = std::move(endpoints);
  r.done = true;
  r.finished.notify_all();
}

// The addresses of `host`, or none if resolution did not finish by the
// deadline. getaddrinfo cannot be cancelled, and a DNS server that never
// answers keeps it for its own timeouts (5 s times the attempts), so names
// resolve on a detached thread that is left to finish alone past the
// deadline; address literals resolve here. Throws Error if resolution fails.
std::optional<std::vector<tcp::endpoint>> resolve(const std::string& host, std::uint16_t port,
                                                  Deadline deadline) {
  const std::string service = std::to_string(port);
  auto resolution = std::make_shared<Resolution>();
  if (is_ip_literal(host)) {
    resolve_into(*resolution, host, service, AI_NUMERICHOST | AI_NUMERICSERV);
  } else {
    std::thread([resolution, host, service] {
      resolve_into(*resolution, host, service, AI_ADDRCONFIG | AI_NUMERICSERV);
    }).detach();
  }
  std::unique_lock lock(resolution->mutex);
  const auto done = [&] { return resolution->done; };
  if (deadline.at() == SteadyClock::time_point::max()) {
    resolution->finished.wait(lock, done);
  } else if (!resolution->finished.wait_until(lock, deadline.at(), done)) {
    return std::nullopt;
  }
  if (resolution->status != 0) {
    throw Error(fmt::format("cannot resolve host '{}': {}", host, ::gai_strerror(resolution->status)));
  }
  if (resolution->endpoints.empty()) throw Error(fmt::format("cannot resolve host '{}': no address", host));
  return std::move(resolution->endpoints);
}

}  // namespace

UniqueFd connect_tcp(const std::string& host, std::uint16_t port, Deadline deadline,
                     const std::string& source) {
  const std::string where = host_port(host, port);
  std::optional<asio::ip::address> from;
  if (!source.empty()) {
    boost::system::error_code ec;
    from = asio::ip::make_address(source, ec);
    if (ec) throw Error(fmt::format("--bind '{}' is not an IP address of this host", source));
  }
  std::optional<std::vector<tcp::endpoint>> endpoints = resolve(host, port, deadline);
  if (!endpoints) {
    throw Error(fmt::format(
        "cannot connect to {}: no answer within the connect timeout (name resolution did not finish)",
        where));
  }
  if (from) {
    std::erase_if(*endpoints, [&](const tcp::endpoint& e) { return e.address().is_v4() != from->is_v4(); });
    if (endpoints->empty()) {
      throw Error(fmt::format("cannot connect to {} from {}: the server has no address of that family", where,
                              source));
    }
  }

  // Each address in turn, from `source` if given; the timer bounds them all.
  asio::io_context io;
  tcp::socket socket(io);
  boost::system::error_code result = asio::error::would_block;
  asio::steady_timer timer(io, deadline.at());
  timer.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the connect finished first
    boost::system::error_code ignored;
    socket.close(ignored);
    result = asio::error::timed_out;
  });
  std::size_t next = 0;
  std::function<void()> attempt = [&] {
    boost::system::error_code ec;
    socket.close(ec);
    const tcp::endpoint& to = (*endpoints)[next++];
    socket.open(to.protocol(), ec);
    if (!ec && from) socket.bind(tcp::endpoint(*from, 0), ec);
    if (ec) {
      result = ec;
      timer.cancel();
      return;
    }
    socket.async_connect(to, [&](const boost::system::error_code& connect_ec) {
      if (result == asio::error::timed_out) return;
      if (connect_ec && next < endpoints->size()) return attempt();
      result = connect_ec;
      timer.cancel();
    });
  };
  attempt();
  io.run();

  if (result == asio::error::timed_out) {
    throw Error(fmt::format("cannot connect to {}: no answer within the connect timeout", where));
  }
  if (result && from)
    throw Error(fmt::format("cannot connect to {} from {}: {}", where, source, result.message()));
  if (result) throw Error(fmt::format("cannot connect to {}: {}", where, result.message()));
  UniqueFd fd(socket.release());
  set_nonblocking(fd.get(), true);
  return fd;
}

SocketAddress peer_socket_address(int fd) {
  SocketAddress address;
  address.length = sizeof address.storage;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0)
    throw Error(fmt::format("cannot read the server's address: {}", std::strerror(errno)));
  return address;
}

SocketAddress local_socket_address(int fd) {
  SocketAddress address;
  address.length = sizeof address.storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0)
    throw Error(fmt::format("cannot read the local address: {}", std::strerror(errno)));
  if (address.storage.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&address.storage)->sin6_port = 0;
  } else {
    reinterpret_cast<sockaddr_in*>(&address.storage)->sin_port = 0;
  }
  return address;
}

UniqueFd start_connect(const SocketAddress& to, const SocketAddress* from, bool reset_on_close,
                       std::error_code& ec, const char*& where) {
  const auto fail = [&](const char* call, int error) {
    ec = {error, std::system_category()};
    where = call;
    return UniqueFd();
  };
  UniqueFd fd(::socket(to.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fail("socket", errno);
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (reset_on_close) {
    const linger reset{1, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  if (from != nullptr) {
    ::setsockopt(fd.get(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&from->storage), from->length) != 0)
      return fail("bind", errno);
  }
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to.storage), to.length) != 0 &&
      errno != EINPROGRESS) {
    return fail("connect", errno);
  }
  return fd;
}

std::error_code connect_result(int fd) {
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  return error != 0 ? std::error_code(error, std::system_category()) : std::error_code();
}

UniqueFd connect_to(const SocketAddress& to, const SocketAddress* from, bool reset_on_close,
                    Deadline deadline, std::error_code& ec, const char*& where) {
  UniqueFd fd = start_connect(to, from, reset_on_close, ec, where);
  if (!fd.valid()) return fd;
  where = "connect";
  if ((ec = wait_fd(fd.get(), POLLOUT, deadline)) || (ec = connect_result(fd.get()))) return UniqueFd();
  return fd;
}

std::error_code wait_fd(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int timeout_ms = deadline.remaining_ms();
    if (timeout_ms == 0) return TransportErrc::timeout;
    const int rc = ::poll(&p, 1, timeout_ms);
    if (rc > 0) return {};  // ready, or an error/hang-up the next call will report
    if (rc == 0) return TransportErrc::timeout;
    if (errno != EINTR) return {errno, std::system_category()};
  }
}

bool readable_fd_within(int fd, std::chrono::nanoseconds wait, std::error_code& ec) {
  const auto ns = std::max<std::int64_t>(0, wait.count());
  const timespec timeout{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  pollfd pfd{fd, POLLIN, 0};
  const int ready = ::ppoll(&pfd, 1, &timeout, nullptr);
  if (ready < 0 && errno != EINTR) ec = std::error_code(errno, std::system_category());
  return ready > 0;
}

bool peer_has_closed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
  std::byte b{};
  return ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void drain_before_close(int fd, std::chrono::milliseconds limit) {
  if (::shutdown(fd, SHUT_WR) != 0) return;
  const Deadline deadline = Deadline::after(limit);
  std::array<std::byte, 16384> sink{};
  for (std::size_t drained = 0; drained < 256 * 1024;) {
    if (wait_fd(fd, POLLIN, deadline)) return;
    const ssize_t n = ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT);
    if (n == 0) return;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return;
    }
    drained += static_cast<std::size_t>(n);
  }
}

void set_nonblocking(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return;
  ::fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

void set_socket_buffers(int fd, std::uint32_t sndbuf_bytes, std::uint32_t rcvbuf_bytes) {
  if (sndbuf_bytes > 0) {
    const auto value = static_cast<int>(sndbuf_bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, sizeof value);
  }
  if (rcvbuf_bytes > 0) {
    const auto value = static_cast<int>(rcvbuf_bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, sizeof value);
  }
}

void set_nodelay(int fd, bool on) {
  const int value = on ? 1 : 0;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, sizeof value);
}

SocketSettings socket_settings(int fd) {
  SocketSettings b;
  socklen_t len = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b.sndbuf_bytes, &len);
  len = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b.rcvbuf_bytes, &len);
  len = sizeof(int);
  ::getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &b.mss_bytes, &len);
  char congestion[32] = {};
  len = sizeof congestion - 1;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, congestion, &len) == 0) b.congestion = congestion;
  return b;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

namespace {

// One item of an address list: an address, or an IPv4 range A-B.
bool add_addresses(const std::string& item, std::vector<std::string>& out, std::string& problem) {
  const auto dash = item.find('-');
  in_addr first{};
  in_addr last{};
  if (dash == std::string::npos) {
    const std::optional<SocketAddress> one = literal_address(item);
    if (!one) {
      problem = fmt::format("'{}' is no IP address", item);
      return false;
    }
    std::array<char, INET6_ADDRSTRLEN> text{};
    const void* raw =
        one->storage.ss_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&one->storage)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&one->storage)->sin6_addr);
    out.emplace_back(::inet_ntop(one->storage.ss_family, raw, text.data(), text.size()));
    return true;
  }
  if (::inet_pton(AF_INET, item.substr(0, dash).c_str(), &first) != 1 ||
      ::inet_pton(AF_INET, item.substr(dash + 1).c_str(), &last) != 1 ||
      ntohl(last.s_addr) < ntohl(first.s_addr)) {
    problem = fmt::format("'{}' is no range of IPv4 addresses, lowest first (127.0.0.1-127.0.0.8)", item);
    return false;
  }
  for (std::uint32_t a = ntohl(first.s_addr); a <= ntohl(last.s_addr); ++a) {
    if (out.size() >= kMaxSourceAddresses) {
      problem = fmt::format("more than {} addresses", kMaxSourceAddresses);
      return false;
    }
    in_addr address{htonl(a)};
    std::array<char, INET_ADDRSTRLEN> text{};
    out.emplace_back(::inet_ntop(AF_INET, &address, text.data(), text.size()));
    if (a == UINT32_MAX) break;
  }
  return true;
}

}  // namespace

std::vector<std::string> parse_address_list(const std::string& text, std::string& problem) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (!add_addresses(text.substr(start, comma - start), out, problem)) return {};
    start = comma + 1;
  }
  if (out.size() > kMaxSourceAddresses) {
    problem = fmt::format("more than {} addresses", kMaxSourceAddresses);
    return {};
  }
  return out;
}

std::optional<SocketAddress> literal_address(const std::string& address) {
  SocketAddress out;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  if (::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    out.length = sizeof(sockaddr_in);
    return out;
  }
  if (::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    out.length = sizeof(sockaddr_in6);
    return out;
  }
  return std::nullopt;
}

std::uint32_t local_port_count() {
  constexpr std::uint32_t kLinuxDefault = 60999 - 32768 + 1;
  std::FILE* file = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
  if (file == nullptr) return kLinuxDefault;
  unsigned low = 0;
  unsigned high = 0;
  const bool read = std::fscanf(file, "%u %u", &low, &high) == 2 && high >= low;
  std::fclose(file);
  return read ? high - low + 1 : kLinuxDefault;
}

std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return fmt::format("{}:{}", text, ntohs(in->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {  // an IPv4 client of a dual-stack socket
      ::inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], text, sizeof text);
      return fmt::format("{}:{}", text, ntohs(in6->sin6_port));
    }
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    return host_port(text, ntohs(in6->sin6_port));
  }
  return "?";
}

std::string describe(const std::error_code& ec, const std::string& detail) {
  if (ec == TransportErrc::tls_failure && !detail.empty()) return detail;
  if (!detail.empty()) return fmt::format("{} ({})", ec.message(), detail);
  return ec.message();
}

}  // namespace tlscmp
