#include "transport/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>

#include "error.hpp"
#include "transport/errors.hpp"

namespace tlscmp {

namespace asio = boost::asio;
using asio::ip::tcp;

UniqueFd connect_tcp(const std::string& host, std::uint16_t port, Deadline deadline) {
  // Asio resolves (getaddrinfo on its own thread, so a dead DNS server cannot
  // outlast the deadline) and tries each address in turn; the timer bounds both.
  asio::io_context io;
  tcp::resolver resolver(io);
  tcp::socket socket(io);
  boost::system::error_code result = asio::error::would_block;
  bool resolved = false;

  asio::steady_timer timer(io, deadline.at());
  timer.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the connect finished first
    resolver.cancel();
    boost::system::error_code ignored;
    socket.close(ignored);
    result = asio::error::timed_out;
  });
  resolver.async_resolve(
      host, std::to_string(port),
      [&](const boost::system::error_code& ec, const tcp::resolver::results_type& endpoints) {
        if (result == asio::error::timed_out) return;
        if (ec) {
          result = ec;
          timer.cancel();
          return;
        }
        resolved = true;
        asio::async_connect(socket, endpoints,
                            [&](const boost::system::error_code& connect_ec, const tcp::endpoint&) {
                              if (result == asio::error::timed_out) return;
                              result = connect_ec;
                              timer.cancel();
                            });
      });
  io.run();

  const std::string where = host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                                                : fmt::format("{}:{}", host, port);
  if (result == asio::error::timed_out) {
    throw Error(fmt::format("cannot connect to {}: no answer within the connect timeout{}", where,
                            resolved ? "" : " (name resolution did not finish)"));
  }
  if (result) {
    if (!resolved) throw Error(fmt::format("cannot resolve host '{}': {}", host, result.message()));
    throw Error(fmt::format("cannot connect to {}: {}", where, result.message()));
  }
  UniqueFd fd(socket.release());
  set_nonblocking(fd.get(), true);
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
    return fmt::format("[{}]:{}", text, ntohs(in6->sin6_port));
  }
  return "?";
}

std::string describe(const std::error_code& ec, const std::string& detail) {
  if (ec == TransportErrc::tls_failure && !detail.empty()) return detail;
  if (!detail.empty()) return fmt::format("{} ({})", ec.message(), detail);
  return ec.message();
}

}  // namespace tlscmp
