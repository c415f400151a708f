#pragma once

// What the parts of the server (app/server*.cpp) share: the includes, the
// constants of accepting and of the listeners, the helpers on peers and first bytes,
// and Server::LiveFd. Included by those files alone.

#include "app/server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <array>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <thread>
#include "endpoint.hpp"
#include "kinds/kind.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/environment.hpp"
#include "measure/host.hpp"
#include "measure/units.hpp"
#include "session/control.hpp"
#include "transport/datagram.hpp"
#include "transport/descriptors.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"
#include "version.hpp"

namespace tlscmp::app {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace server_parts {

constexpr std::chrono::seconds kShutdownGrace{5};
// Threads waiting in accept() beyond those serving: a thread that finds this
// many waiting when its connection ends goes instead of waiting too.
constexpr int kSpareAcceptors = 2;
// After an accept() that failed for want of descriptors or memory.
constexpr std::chrono::milliseconds kAcceptRetry{100};
// How often the io thread looks for a connection left in the listen queue
// (watch_backlog): two looks in a row start a thread. A client's trial
// handshakes give up after 1.5 s; at 0.5 s a look, a rescue once came too late.
constexpr std::chrono::milliseconds kBacklogLook{200};
// How often the thread that takes a stack's listener's connections (QUIC's)
// looks whether the server stops.
constexpr std::chrono::milliseconds kListenerTick{250};

inline tcp::endpoint listen_endpoint(const session::ServerConfig& config) {
  if (config.bind_address.empty()) return {tcp::v6(), config.port};
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(config.bind_address, ec);
  if (ec) throw UsageError(fmt::format("--bind '{}' is not an IP address", config.bind_address));
  return {address, config.port};
}

// The address (no port) a connection came from, as --max-pending-per-source
// counts it: an IPv4 client of an IPv6 socket as plain IPv4.
inline std::string peer_host(const sockaddr_storage& peer) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (peer.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&peer);
    if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
      return ::inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], text.data(), text.size()) ? text.data() : "?";
    }
    return ::inet_ntop(AF_INET6, &v6->sin6_addr, text.data(), text.size()) ? text.data() : "?";
  }
  if (peer.ss_family != AF_INET) return "?";
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&peer);
  return ::inet_ntop(AF_INET, &v4->sin_addr, text.data(), text.size()) ? text.data() : "?";
}

// host:port of a peer, for the log.
inline std::string peer_address(const sockaddr_storage& peer) {
  std::uint16_t port = 0;
  if (peer.ss_family == AF_INET6) port = ntohs(reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port);
  if (peer.ss_family == AF_INET) port = ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
  return host_port(peer_host(peer), port);
}

inline std::string format_endpoint(const tcp::endpoint& endpoint) {
  return host_port(endpoint.address().to_string(), endpoint.port());
}

// Waits for the first byte of a new connection and returns it without consuming it.
// `wait` is the first byte's time, and `flag` the option that set it.
inline std::byte peek_first_byte(int fd, std::chrono::milliseconds wait, const char* flag) {
  const Deadline deadline = Deadline::after(wait);
  for (;;) {
    // Often the byte is there already (a client writes as soon as it is
    // connected): look first, wait only if it is not.
    std::byte first{};
    const ssize_t n = ::recv(fd, &first, 1, MSG_PEEK);
    if (n == 1) return first;
    if (n == 0) throw Error("closed the connection without sending anything");
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      throw Error(fmt::format("cannot read the first byte: {}", std::strerror(errno)));
    }
    if (const std::error_code ec = wait_fd(fd, POLLIN, deadline)) {
      if (ec == TransportErrc::timeout) {
        throw Error(fmt::format("sent nothing within {:g} s ({}); closed",
                                std::chrono::duration<double>(wait).count(), flag));
      }
      throw Error(fmt::format("cannot wait for the first byte: {}", ec.message()));
    }
  }
}

// "1 other host", "3 other hosts": the hosts an even share is kept beside.
inline std::string other_hosts(int n) {
  return fmt::format("{} other host{}", n, n == 1 ? "" : "s");
}

// What a connection turned away hears: the server's preamble and a refusal
// giving `reason`, which the client prints as it comes.
inline std::vector<std::byte> busy_answer(const std::string& reason) {
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::control);
  std::vector<std::byte> answer(preamble.begin(), preamble.end());
  const std::vector<std::byte> refusal = protocol::encode(protocol::Refusal{reason});
  answer.insert(answer.end(), refusal.begin(), refusal.end());
  return answer;
}

// Past the connections the io thread lingers on: what the client sent so far
// is read (a close with unread data would be a reset, which could destroy
// the answer before the client reads it), then the answer goes out with FIN,
// all without waiting.
inline void answer_and_close(int fd, std::span<const std::byte> answer) {
  std::array<std::byte, 4096> sink{};
  for (int i = 0; i < 16 && ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT) > 0; ++i) {
  }
  (void)::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  for (int i = 0; i < 16 && ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT) > 0; ++i) {
  }
}

}  // namespace server_parts

// Registers a socket as live while it is in use, so that stop() can shut it
// down; unregisters before the socket is closed (declare it after the owner).
class Server::LiveFd {
 public:
  LiveFd(Server& server, int fd) : server_(server), fd_(fd) {
    std::lock_guard lock(server_.mutex_);
    server_.live_fds_.insert(fd_);
    if (server_.stopping_) ::shutdown(fd_, SHUT_RDWR);
  }
  ~LiveFd() {
    std::lock_guard lock(server_.mutex_);
    server_.live_fds_.erase(server_.live_fds_.find(fd_));
  }
  LiveFd(const LiveFd&) = delete;
  LiveFd& operator=(const LiveFd&) = delete;

 private:
  Server& server_;
  int fd_;
};

}  // namespace tlscmp::app
