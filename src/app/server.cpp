#include "app/server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
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

namespace {

constexpr std::byte kTlsHandshakeRecord{0x16};  // the first byte of every TLS ClientHello
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
// How often the thread that takes QUIC connections looks whether the server stops.
constexpr std::chrono::milliseconds kQuicAcceptTick{250};
// SO_RCVBUF and SO_SNDBUF of the server's QUIC socket, which all its QUIC connections share.
constexpr std::uint32_t kQuicSocketBuffer = 8u << 20;
// The caps' source of every QUIC peer where the library does not name it
// (OpenSSL 3.5 and 3.6: tls::quic_names_peers).
constexpr char kUnnamedQuicSource[] = "quic";

tcp::endpoint listen_endpoint(const session::ServerConfig& config) {
  if (config.bind_address.empty()) return {tcp::v6(), config.port};
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(config.bind_address, ec);
  if (ec) throw UsageError(fmt::format("--bind '{}' is not an IP address", config.bind_address));
  return {address, config.port};
}

// The address (no port) a connection came from, as --max-pending-per-source
// counts it: an IPv4 client of an IPv6 socket as plain IPv4.
std::string peer_host(const sockaddr_storage& peer) {
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
std::string peer_address(const sockaddr_storage& peer) {
  std::uint16_t port = 0;
  if (peer.ss_family == AF_INET6) port = ntohs(reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port);
  if (peer.ss_family == AF_INET) port = ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
  return host_port(peer_host(peer), port);
}

std::string format_endpoint(const tcp::endpoint& endpoint) {
  return host_port(endpoint.address().to_string(), endpoint.port());
}

// Waits for the first byte of a new connection and returns it without consuming it.
// `wait` is the first byte's time, and `flag` the option that set it.
std::byte peek_first_byte(int fd, std::chrono::milliseconds wait, const char* flag) {
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

// Past the connections the io thread lingers on: what the client sent so far
// is read (a close with unread data would be a reset, which could destroy
// the answer before the client reads it), then the answer goes out with FIN,
// all without waiting.
void answer_and_close(int fd, std::span<const std::byte> answer) {
  std::array<std::byte, 4096> sink{};
  for (int i = 0; i < 16 && ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT) > 0; ++i) {
  }
  (void)::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  for (int i = 0; i < 16 && ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT) > 0; ++i) {
  }
}

}  // namespace

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

Server::Server(const session::ServerConfig& config, const tls::Identity& identity, Logger& log,
               std::optional<tls::Identity> issuer)
    : config_(config),
      log_(log),
      tls_(tls::Context::for_server({identity, tls::kDefaultReadAheadBytes, config.tls_policy,
                                     config.client_ca_file, config.require_client_cert, config.resumption})),
      identity_(identity),
      issuer_(std::move(issuer)),
      listener_(),
      results_(config.results_file, log) {
  tcp::acceptor acceptor(io_);
  std::string no_dtls;  // the datagram kind refuses dtls tests with it
  if (tls::DtlsContext::available(no_dtls)) dtls_.emplace(tls::DtlsContext::for_server(identity));
  tcp::endpoint endpoint = listen_endpoint(config);
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (ec == asio::error::address_family_not_supported && config.bind_address.empty()) {
    endpoint = tcp::endpoint(tcp::v4(), config.port);  // no IPv6 on this host
    acceptor.open(endpoint.protocol(), ec);
  }
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && endpoint.protocol() == tcp::v6() && config.bind_address.empty()) {
    acceptor.set_option(asio::ip::v6_only(false), ec);  // serve IPv4 clients too
  }
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error(fmt::format("cannot listen on {}: {}", format_endpoint(endpoint), ec.message()));
  // Out of asio's hands: the accepting threads block in accept() on it, and
  // asio's epoll would otherwise wake the io thread for every connection too.
  local_endpoint_ = acceptor.local_endpoint();
  listener_ = UniqueFd(acceptor.release());
  start_quic();
}

void Server::start_quic() {
  if (!tls::has_quic(&no_quic_)) return;
  if (config_.tls_policy.version == "1.2") {
    no_quic_ = "its --tls-version 1.2 leaves QUIC out, which runs TLS 1.3";
    return;
  }
  try {
    quic_tls_.emplace(tls::Context::for_server({identity_, 0, config_.tls_policy, config_.client_ca_file,
                                                config_.require_client_cert, config_.resumption,
                                                /*quic=*/true}));
    // The TCP listener's address and port, over UDP.
    asio::ip::udp::socket udp(io_);
    const asio::ip::udp::endpoint endpoint(local_endpoint_.address(), local_endpoint_.port());
    boost::system::error_code ec;
    udp.open(endpoint.protocol(), ec);
    if (!ec && endpoint.protocol() == asio::ip::udp::v6() && config_.bind_address.empty())
      udp.set_option(asio::ip::v6_only(false), ec);
    if (!ec) udp.bind(endpoint, ec);
    if (ec) throw Error(fmt::format("cannot bind UDP port {}: {}", endpoint.port(), ec.message()));
    UniqueFd fd(udp.release());
    set_nonblocking(fd.get(), true);
    // Room for bursts of datagrams from many connections (the kernel caps
    // it at net.core.rmem_max / wmem_max).
    set_receive_buffer(fd.get(), kQuicSocketBuffer);
    set_send_buffer(fd.get(), kQuicSocketBuffer);
    quic_ = std::make_unique<tls::QuicListener>(*quic_tls_, std::move(fd));
  } catch (const Error& e) {
    no_quic_ = e.what();
    quic_.reset();
    quic_tls_.reset();
    log_.line(fmt::format("quic: off: {}", no_quic_));
  }
}

void Server::quic_accept_loop() {
  while (!accepting_stopped_) {
    sockaddr_storage address{};
    std::unique_ptr<tls::TlsStream> stream = quic_->accept(kQuicAcceptTick, address);
    if (!stream) continue;
    // Where the library does not name the peer (OpenSSL 3.5), the caps count
    // every QUIC connection as from one source, "quic".
    const bool named = address.ss_family != AF_UNSPEC;
    const Peer peer{named ? peer_host(address) : kUnnamedQuicSource,
                    named ? peer_address(address) : "a QUIC peer"};
    bool budgeted = false;
    if (const std::string busy = admit(peer.source, -1, budgeted); !busy.empty()) {
      asio::post(io_, [this, peer, busy] { log_busy(peer.address, busy); });
      continue;  // the stream's end closes the connection
    }
    // std::function copies: the stream goes through a shared holder.
    auto held = std::make_shared<std::unique_ptr<tls::TlsStream>>(std::move(stream));
    try {
      threads_.reap();
      threads_.spawn([this, held, peer, budgeted] { serve_quic(std::move(*held), peer, budgeted); });
    } catch (const std::system_error& e) {
      const Admitted undo(*this, -1, peer.source, budgeted);
      asio::post(io_, [this, what = std::string(e.what())] {
        log_busy("accept", fmt::format("cannot start a thread: {}", what));
      });
    }
  }
}

void Server::serve_quic(std::unique_ptr<tls::TlsStream> tls, const Peer& peer, bool budgeted) {
  Admitted admitted(*this, -1, peer.source, budgeted);
  SetUpSlot set_up(*this, peer.source, budgeted);
  double cpu_mark = measure::thread_cpu_s();
  try {
    // The handshake and the first stream within the handshake timeout, as over TCP.
    const Deadline first = Deadline::after(config_.timeouts.handshake);
    tls->set_deadline(first);
    if (const std::error_code ec = tls->handshake())
      throw Error(fmt::format("QUIC handshake failed: {}", describe(ec, tls->error_detail())));
    const std::shared_ptr<tls::TlsStream> connection = std::move(tls);
    // A stream a kind's event loop took (--flows) keeps the connection there.
    if (take_quic_streams(connection, peer, set_up, cpu_mark, first)) return;
    // Its streams are out: the connection (and its place under the caps)
    // lasts while they do. This thread waits outside the library: one more
    // thread blocked on the QUIC domain would cost every other wait on it a
    // round of wakeups (tls::detail::ListenerWatch).
    constexpr std::chrono::milliseconds kHoldTick{20};
    while (connection.use_count() > 1 && !stopping())
      std::this_thread::sleep_for(kHoldTick);
  } catch (const std::exception& e) {
    log_.line(fmt::format("{} (QUIC) {}", peer.address, e.what()));
  }
}

bool Server::take_quic_streams(const std::shared_ptr<tls::TlsStream>& connection, const Peer& peer,
                               SetUpSlot& set_up, double& cpu_mark, Deadline first) {
  // Once a stream went to a test, the wait for more is short, to stop soon
  // after the test has all of its streams.
  constexpr std::chrono::milliseconds kMoreStreamsTick{20};
  std::optional<protocol::Cookie> test;
  for (bool ended = false; !ended && !stopping();) {
    if (test && pending_.missing(*test) == 0) return false;
    std::unique_ptr<Stream> stream =
        connection->accept_stream(test ? kMoreStreamsTick : kQuicAcceptTick, ended);
    if (!stream) {
      if (!test && first.expired())
        throw Error(fmt::format("opened no stream within {:g} s (--handshake-timeout)",
                                std::chrono::duration<double>(config_.timeouts.handshake).count()));
      continue;
    }
    stream->set_deadline(Deadline::after(config_.timeouts.handshake));
    try {
      const Served served = serve_stream(stream, peer, set_up, cpu_mark);
      if (served.by_kind) return !stream;
      // A test that takes its connections' later streams (rr --stream-per-tx) has this one's.
      if (served.test && pending_.keeps_connections(*served.test)) return false;
      if (served.test) test = served.test;
    } catch (const std::exception& e) {
      // A stream that is no tlscmp peer's ends its connection, as a bad
      // TCP connection ends: the streams already handed on keep it open.
      log_.line(fmt::format("{} (QUIC stream) {}", peer.address, e.what()));
      return false;
    }
  }
  return false;
}

Server::~Server() {
  threads_.join_all();  // every wait in them has a deadline
}

std::uint16_t Server::port() const {
  return local_endpoint_.port();
}

std::string Server::listen_address() const {
  return format_endpoint(local_endpoint_);
}

void Server::stop_on_signals() {
  signals_.emplace(io_, SIGINT, SIGTERM);
  signals_->async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    log_.line(fmt::format("{}: stopping", signal == SIGINT ? "SIGINT" : "SIGTERM"));
    io_.stop();
  });
}

void Server::run() {
  const auto keep_running = asio::make_work_guard(io_);
  if (!start_acceptor()) throw Error("cannot start a thread to accept connections");
  if (quic_) threads_.spawn([this] { quic_accept_loop(); });
  backlog_timer_.emplace(io_);
  watch_backlog(false);
  run_io();
  backlog_timer_.reset();
  accepting_stopped_ = true;
  // Wakes the threads waiting in accept() (EINVAL) and takes no more
  // connections; the socket closes with the server.
  ::shutdown(listener_.get(), SHUT_RDWR);
  finish_running_tests();
  shut_down_connections();
}

// A handler that throws must not end the server (nor leave its acceptors
// waiting for ever): what it threw is logged, and the loop goes on.
void Server::run_io() {
  for (;;) {
    try {
      io_.run();
      return;
    } catch (const std::exception& e) {
      log_.line(fmt::format("internal error, serving on: {}", e.what()));
    }
  }
}

// After SIGTERM: no new connections; running tests may finish within the grace period.
void Server::finish_running_tests() {
  pending_.cancel_all();  // no data connection can come any more
  std::unique_lock lock(mutex_);
  if (running_tests_ == 0) return;
  log_.line(fmt::format("waiting up to {} s for {} running tests",
                        std::chrono::duration<double>(config_.shutdown_grace).count(), running_tests_));
  if (!idle_.wait_for(lock, config_.shutdown_grace, [&] { return running_tests_ == 0; })) {
    log_.line(fmt::format("{} tests still running: ending them", running_tests_));
  }
}

bool Server::stopping() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

Server::RunningTest::RunningTest(Server& server, std::string source)
    : server_(server), source_(std::move(source)) {
  std::lock_guard lock(server_.mutex_);
  const session::ServerConfig& config = server_.config_;
  SourceUse& use = server_.sources_[source_];
  if (server_.running_tests_ >= config.max_clients) {
    busy_ = fmt::format("server busy: {} tests running; try again, or raise --max-clients on the server",
                        config.max_clients);
  } else if (use.tests >= config.max_clients_per_source) {
    busy_ = fmt::format(
        "server busy: {} tests from {} running, its share of the server (--max-clients-per-source); try "
        "again when one ends",
        config.max_clients_per_source, source_);
  }
  if (!busy_.empty()) {
    server_.forget_if_unused(server_.sources_.find(source_));
    return;
  }
  ++server_.running_tests_;
  ++use.tests;
}

Server::RunningTest::~RunningTest() {
  if (!busy_.empty()) return;
  std::lock_guard lock(server_.mutex_);
  --server_.running_tests_;
  auto it = server_.sources_.find(source_);
  --it->second.tests;
  server_.forget_if_unused(it);
  server_.idle_.notify_all();
}

void Server::forget_if_unused(std::map<std::string, SourceUse>::iterator it) {
  if (it != sources_.end() && it->second.unused()) sources_.erase(it);
}

int Server::connection_share() const {
  // Half, but never less than the largest test needs: its control connection
  // and a crr test's budget of two connections a connector.
  return std::max(config_.max_connections / 2, static_cast<int>(2 * protocol::kMaxStreams + 2));
}

void Server::stop() {
  io_.stop();
}

void Server::SetUpSlot::release() {
  if (!held_) return;
  held_ = false;
  if (budgeted_) return;  // a budget's connections are not counted as being set up
  std::lock_guard lock(server_.mutex_);
  --server_.setting_up_;
  auto it = server_.sources_.find(source_);
  --it->second.setting_up;
  server_.forget_if_unused(it);
}

std::string Server::admit(const std::string& source, int fd, bool& budgeted) {
  std::lock_guard lock(mutex_);
  SourceUse& use = sources_[source];
  // Counted in, and live: stop() shuts its socket down.
  const auto count_in = [&] {
    ++active_connections_;
    live_fds_.insert(fd);
    if (stopping_) ::shutdown(fd, SHUT_RDWR);
  };
  // A source whose running tests expect connections takes them within their
  // budget, not within the shared caps that every other host shares too.
  budgeted = use.in_budget < use.budget + use.flow_budget;
  if (budgeted) {
    ++use.in_budget;
    count_in();
    return {};
  }
  std::string busy;
  if (shared_connections_ + reserved_ >= config_.max_connections) {
    busy = fmt::format(
        "server busy: {} connections being served; try again, or raise --max-connections on the server",
        config_.max_connections);
  } else if (use.connections + use.budget >= connection_share()) {
    busy = fmt::format(
        "server busy: {} connections from {}, its share of the server (half of --max-connections); try "
        "again when its tests end",
        connection_share(), source);
  } else if (setting_up_ >= config_.max_pending) {
    busy = fmt::format(
        "server busy: {} connections being set up; try again, or raise --max-pending on the server",
        config_.max_pending);
  } else if (use.setting_up >= config_.max_pending_per_source) {
    busy = fmt::format(
        "server busy: {} connections from {} being set up; try again, or raise --max-pending-per-source on "
        "the server",
        config_.max_pending_per_source, source);
  }
  if (!busy.empty()) {
    forget_if_unused(sources_.find(source));
    return busy;
  }
  ++use.setting_up;
  ++use.connections;
  ++setting_up_;
  ++shared_connections_;
  count_in();
  return {};
}

void Server::log_busy(const std::string& peer, const std::string& reason) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_busy_log_ < std::chrono::seconds(1)) {
    ++busy_unlogged_;
    return;
  }
  log_.line(fmt::format(
      "{} turned away: {}{}", peer, reason,
      busy_unlogged_ > 0 ? fmt::format(" (and {} more since the last such line)", busy_unlogged_) : ""));
  last_busy_log_ = now;
  busy_unlogged_ = 0;
}

void Server::turn_away(tcp::socket socket, const std::string& reason) {
  constexpr int kMaxTurningAway = 1024;  // beyond: answered and closed at once
  constexpr std::chrono::seconds kLinger{1};
  struct TurnAway {
    TurnAway(tcp::socket s, asio::io_context& io) : socket(std::move(s)), timer(io) {}
    tcp::socket socket;
    asio::steady_timer timer;
    std::vector<std::byte> answer;
    std::array<std::byte, 4096> sink{};
  };
  auto state = std::make_shared<TurnAway>(std::move(socket), io_);
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::control);
  const std::vector<std::byte> refusal = protocol::encode(protocol::Refusal{reason});
  state->answer.assign(preamble.begin(), preamble.end());
  state->answer.insert(state->answer.end(), refusal.begin(), refusal.end());
  if (turning_away_ >= kMaxTurningAway) {
    answer_and_close(state->socket.native_handle(), state->answer);
    return;  // the socket closes with `state`
  }
  ++turning_away_;
  auto done = [this, state] {
    boost::system::error_code ignored;
    state->timer.cancel();
    if (state->socket.is_open()) {
      state->socket.close(ignored);
      --turning_away_;
    }
  };
  state->timer.expires_after(kLinger);
  state->timer.async_wait([done](const boost::system::error_code& ec) {
    if (!ec) done();
  });
  asio::async_write(state->socket, asio::buffer(state->answer),
                    [this, state, done](const boost::system::error_code& ec, std::size_t) {
                      if (ec) return done();
                      boost::system::error_code ignored;
                      state->socket.shutdown(tcp::socket::shutdown_send, ignored);
                      // Read until the client closes: a close with unread data would be a reset.
                      auto drain = std::make_shared<std::function<void()>>();
                      *drain = [state, done, drain] {
                        state->socket.async_read_some(
                            asio::buffer(state->sink),
                            [done, drain](const boost::system::error_code& read_ec, std::size_t) {
                              if (read_ec) {
                                done();
                                *drain = nullptr;  // ends the cycle
                                return;
                              }
                              (*drain)();
                            });
                      };
                      (*drain)();
                    });
}

void Server::accept_loop() {
  const int listener = listener_.get();
  // This thread's CPU clock when it last finished with a connection: a crr
  // connection's cost runs from there to its end, its accept() included.
  double cpu_mark = measure::thread_cpu_s();
  for (;;) {  // counted among those waiting in accept() (start_acceptor counted it in)
    if (accepting_stopped_) {
      --idle_acceptors_;
      return;
    }
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const int fd =
        ::accept4(listener, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
    const int error = errno;
    const bool spare_needed = --idle_acceptors_ == 0 && fd >= 0;
    if (accepting_stopped_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) {
      if (error != EINTR && error != ECONNABORTED && error != EAGAIN) {
        // EMFILE and the like: say so (once a second at most) and keep serving those already connected.
        asio::post(io_, [this, error] {
          log_busy("accept", fmt::format("accept failed: {}", std::strerror(error)));
        });
        std::this_thread::sleep_for(kAcceptRetry);
      }
      ++idle_acceptors_;
      continue;
    }
    // Someone else listens while this thread serves what it took.
    if (spare_needed && !start_acceptor()) {
      ::close(fd);
      ++idle_acceptors_;
      continue;
    }
    serve_accepted(UniqueFd(fd), Peer{peer_host(peer), peer_address(peer)}, cpu_mark);
    // Back to accept() only while fewer than kSpareAcceptors wait there, and
    // counted in at once: threads that finish together must not all go back
    // (a burst of turned-away connections once left hundreds waiting).
    int idle = idle_acceptors_.load();
    do {
      if (idle >= kSpareAcceptors) return;  // enough listen: this thread may go
    } while (!idle_acceptors_.compare_exchange_weak(idle, idle + 1));
  }
}

void Server::watch_backlog(bool waited_before) {
  pollfd listener{listener_.get(), POLLIN, 0};
  const bool waiting = ::poll(&listener, 1, 0) == 1 && (listener.revents & POLLIN) != 0;
  if (waiting && waited_before && !accepting_stopped_) {
    start_acceptor();
    log_busy("accept", "a connection waited in the listen queue with no thread taking it: one more started");
  }
  backlog_timer_->expires_after(kBacklogLook);
  backlog_timer_->async_wait([this, waiting](const boost::system::error_code& ec) {
    if (!ec) watch_backlog(waiting);
  });
}

bool Server::start_acceptor() {
  // Counted in before it starts: a burst would otherwise start one more
  // thread for every connection taken until the first of them is running.
  ++idle_acceptors_;
  try {
    threads_.reap();
    threads_.spawn([this] { accept_loop(); });
    return true;
  } catch (const std::system_error& e) {
    --idle_acceptors_;
    asio::post(io_, [this, what = std::string(e.what())] {
      log_busy("accept", fmt::format("cannot start a thread: {}", what));
    });
    return false;
  }
}

void Server::serve_accepted(UniqueFd fd, const Peer& peer, double& cpu_mark) {
  bool budgeted = false;
  const int raw_fd = fd.get();
  if (const std::string busy = admit(peer.source, raw_fd, budgeted); !busy.empty()) {
    // Turned away on the io thread, which has the timers for it.
    asio::post(io_, [this, fd = std::make_shared<UniqueFd>(std::move(fd)), peer, busy] {
      log_busy(peer.address, busy);
      tcp::socket socket(io_);
      boost::system::error_code ec;
      socket.assign(local_endpoint_.protocol(), fd->get(), ec);
      if (!ec) {
        fd->release();
        turn_away(std::move(socket), busy);
      }
    });
    cpu_mark = measure::thread_cpu_s();
    return;
  }
  // Often the first bytes are there already (a client writes as soon as it is
  // connected): then serve it here, without a hand-off.
  std::byte first{};
  const ssize_t n = ::recv(raw_fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
    fd.release();  // handle_connection owns it
    handle_connection(raw_fd, peer, budgeted, cpu_mark);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    --active_connections_;  // no thread of its own while it waits
    idle_.notify_all();
  }
  fd.release();
  asio::post(io_, [this, raw_fd, peer, budgeted] { await_first_byte(raw_fd, peer, budgeted); });
  cpu_mark = measure::thread_cpu_s();
}

void Server::await_first_byte(int raw_fd, const Peer& peer, bool budgeted) {
  struct Waiting {
    Waiting(asio::io_context& io, Peer p) : socket(io), timer(io), peer(std::move(p)) {}
    tcp::socket socket;
    asio::steady_timer timer;
    Peer peer;
  };
  auto waiting = std::make_shared<Waiting>(io_, peer);
  boost::system::error_code ec;
  waiting->socket.assign(local_endpoint_.protocol(), raw_fd, ec);
  const bool preamble_first = config_.preamble_timeout <= config_.timeouts.handshake;
  const std::chrono::milliseconds wait =
      preamble_first ? config_.preamble_timeout : config_.timeouts.handshake;
  // Back with a thread (or ended here): counted as Admitted counts it.
  const auto back = [this] {
    std::lock_guard lock(mutex_);
    ++active_connections_;
  };
  if (ec) {
    back();
    { const Admitted ended(*this, raw_fd, peer.source, budgeted); }
    SetUpSlot(*this, peer.source, budgeted).release();
    ::close(raw_fd);
    return;
  }
  waiting->timer.expires_after(wait);
  waiting->timer.async_wait([waiting](const boost::system::error_code& timer_ec) {
    // The wait may have ended first and released the socket: no throw then.
    boost::system::error_code ignored;
    if (!timer_ec) waiting->socket.cancel(ignored);
  });
  waiting->socket.async_wait(tcp::socket::wait_read, [this, waiting, budgeted, back, wait, preamble_first](
                                                         const boost::system::error_code& wait_ec) {
    waiting->timer.cancel();
    back();
    const int fd = waiting->socket.native_handle();
    if (wait_ec) {
      log_.line(fmt::format("{} sent nothing within {:g} s ({}); closed", waiting->peer.address,
                            std::chrono::duration<double>(wait).count(),
                            preamble_first ? "--preamble-timeout" : "--handshake-timeout"));
      { const Admitted ended(*this, fd, waiting->peer.source, budgeted); }
      SetUpSlot(*this, waiting->peer.source, budgeted).release();
      return;  // the socket closes with `waiting`
    }
    boost::system::error_code release_ec;
    const int taken = waiting->socket.release(release_ec);
    if (release_ec) {
      log_.line(fmt::format("{} cannot be handed to a thread: {}; closed", waiting->peer.address,
                            release_ec.message()));
      { const Admitted ended(*this, fd, waiting->peer.source, budgeted); }
      SetUpSlot(*this, waiting->peer.source, budgeted).release();
      return;  // the socket closes with `waiting`
    }
    try {
      threads_.spawn([this, taken, peer = waiting->peer, budgeted] {
        double cpu_mark = measure::thread_cpu_s();
        handle_connection(taken, peer, budgeted, cpu_mark);
      });
    } catch (const std::system_error& e) {
      log_busy(waiting->peer.address, fmt::format("cannot start a thread: {}", e.what()));
      { const Admitted ended(*this, taken, waiting->peer.source, budgeted); }
      SetUpSlot(*this, waiting->peer.source, budgeted).release();
      ::close(taken);
    }
  });
}

void Server::handle_connection(int raw_fd, const Peer& peer, bool budgeted, double& cpu_mark) {
  std::unique_ptr<Stream> stream;  // declared first, so that its socket closes last
  UniqueFd fd(raw_fd);
  Admitted admitted(*this, raw_fd, peer.source, budgeted);
  SetUpSlot set_up(*this, peer.source, budgeted);
  bool moved_cpu_mark = false;
  try {
    set_nodelay(raw_fd, true);
    const Deadline deadline = Deadline::after(config_.timeouts.handshake);
    // The first byte within --preamble-timeout (or the handshake timeout, if shorter).
    const bool preamble_first = config_.preamble_timeout <= config_.timeouts.handshake;
    if (peek_first_byte(raw_fd, preamble_first ? config_.preamble_timeout : config_.timeouts.handshake,
                        preamble_first ? "--preamble-timeout" : "--handshake-timeout") ==
        kTlsHandshakeRecord) {
      auto tls = tls_.server_stream(std::move(fd));
      tls->set_deadline(deadline);
      if (const std::error_code ec = tls->handshake()) {
        // Let the alert reach the client before the socket closes.
        drain_before_close(raw_fd, std::chrono::milliseconds(250));
        throw Error(fmt::format("TLS handshake failed: {}", describe(ec, tls->error_detail())));
      }
      stream = std::move(tls);
    } else {
      stream = std::make_unique<TcpStream>(std::move(fd));
      stream->set_deadline(deadline);
    }

    moved_cpu_mark = serve_stream(stream, peer, set_up, cpu_mark).by_kind;
  } catch (const std::exception& e) {
    log_.line(fmt::format("{} {}", peer.address, e.what()));
  }
  if (!moved_cpu_mark) cpu_mark = measure::thread_cpu_s();  // a kind's own connection moved it on itself
}

Server::Served Server::serve_stream(std::unique_ptr<Stream>& stream, const Peer& peer, SetUpSlot& set_up,
                                    double& cpu_mark) {
  const protocol::PreambleInfo preamble = session::receive_preamble(*stream);
  if (preamble.version != protocol::kVersion && preamble.kind == protocol::ConnectionKind::control) {
    // Answer with our own preamble, so that the client can say which versions differ.
    std::error_code ignored;
    stream->write_all(protocol::encode_preamble(protocol::ConnectionKind::control), ignored);
  }
  protocol::check_version(preamble);
  const protocol::ConnectionKind kind = preamble.kind;
  if (kind == protocol::ConnectionKind::control) {
    if (stream->is_tls()) throw protocol::ProtocolError("a control connection must be plain TCP");
    serve_control(*stream, peer, set_up);
  } else if (const kinds::KindSlice* own = kinds::slice_of(kind); own != nullptr) {
    own->serve_connection(stream, pending_, cpu_mark);
    return Served{.by_kind = true, .test = std::nullopt};
  } else {
    protocol::DataHeader header{};
    std::error_code ec;
    stream->read_exact(header, ec);
    if (ec) {
      throw Error(fmt::format("data connection without a cookie and stream index: {}",
                              describe(ec, stream->error_detail())));
    }
    const protocol::DataHeaderInfo data = protocol::decode_data_header(header);
    if (!pending_.deliver(data.cookie, data.stream, std::move(stream))) {
      throw protocol::ProtocolError("data connection for an unknown or finished test, or a stream it has");
    }
    return Served{.test = data.cookie};
  }
  return {};
}

Server::Admitted::~Admitted() {
  std::lock_guard lock(server_.mutex_);
  server_.live_fds_.erase(server_.live_fds_.find(fd_));
  --server_.active_connections_;
  auto it = server_.sources_.find(source_);
  if (budgeted_) {
    --it->second.in_budget;
  } else {
    --it->second.connections;
    --server_.shared_connections_;
  }
  server_.forget_if_unused(it);
  server_.idle_.notify_all();
}

// What the kinds' server halves get of this server (kinds/server_side.hpp).
class Server::Side final : public session::ServerSide {
 public:
  Side(Server& server, std::string source) : server_(server), source_(std::move(source)) {}
  const std::string& source() const { return source_; }
  std::shared_ptr<void> reserve_connections(std::uint32_t count, std::string& busy) override {
    return server_.reserve_connections(source_, count, busy);
  }
  std::shared_ptr<void> reserve_memory(std::uint64_t bytes, std::string& busy) override {
    return server_.reserve_memory(bytes, busy);
  }
  const session::ServerConfig& config() const override { return server_.config_; }
  protocol::TestAccept acceptance(const protocol::Cookie& cookie) const override {
    return server_.accept_message(cookie);
  }
  std::unique_ptr<session::PendingTests::Ticket> open_ticket(std::uint32_t streams, std::uint64_t handshakes,
                                                             bool keeps_connections) override {
    return server_.pending_.open(streams, handshakes, keeps_connections);
  }
  std::unique_ptr<session::PendingTests::Ticket> open_ticket(
      std::shared_ptr<session::PendingTests::ConnectionSink> sink) override {
    return server_.pending_.open(std::move(sink));
  }
  void prepare_key_type(const std::string& key_type) override { server_.prepare_key_type(key_type); }
  std::shared_ptr<void> reserve_flows(std::uint32_t count, const std::vector<std::string>& sources, bool quic,
                                      std::string& busy) override {
    if (quic && !tls::quic_names_peers()) return server_.reserve_flows({kUnnamedQuicSource}, count, busy);
    return server_.reserve_flows(sources.empty() ? std::vector<std::string>{source_} : sources, count, busy);
  }
  const tls::Context& tls_context() const override { return server_.tls_; }
  const tls::DtlsContext* dtls() const override { return server_.dtls_ ? &*server_.dtls_ : nullptr; }
  LiveSocket register_live(int fd) override {
    auto live = std::make_shared<LiveFd>(server_, fd);
    return LiveSocket([live]() mutable { live.reset(); });
  }
  bool stopping() override { return server_.stopping(); }
  void record(const std::vector<protocol::SideResult>& mine,
              const std::vector<protocol::SideResult>& theirs) override {
    for (const protocol::SideResult& r : mine) {
      mine_.push_back(protocol::body_text(r));
      failed_ = failed_ || !r.error.empty();
    }
    for (const protocol::SideResult& r : theirs) {
      theirs_.push_back(protocol::body_text(r));
      failed_ = failed_ || !r.error.empty();
    }
    // The client's results never came: the exchange failed.
    failed_ = failed_ || theirs.size() < mine.size();
  }
  void record(const protocol::DatagramResult& mine, const protocol::DatagramResult& theirs) override {
    mine_.push_back(protocol::body_text(mine));
    theirs_.push_back(protocol::body_text(theirs));
    failed_ = failed_ || !mine.error.empty() || !theirs.error.empty();
  }
  void record(const protocol::FlowsResult& mine, const protocol::FlowsResult& theirs) override {
    mine_.push_back(protocol::body_text(mine));
    theirs_.push_back(protocol::body_text(theirs));
    failed_ = failed_ || !mine.error.empty() || !theirs.error.empty();
  }
  // The results recorded, each a JSON object's text.
  const std::vector<std::string>& mine() const { return mine_; }
  const std::vector<std::string>& theirs() const { return theirs_; }
  // Whether what was recorded says the test failed, on either side.
  bool failed() const { return failed_; }

 private:
  Server& server_;
  std::string source_;
  std::vector<std::string> mine_;
  std::vector<std::string> theirs_;
  bool failed_ = false;
};

void Server::write_result(const Peer& peer, const protocol::TestRequest& request, const Side& side,
                          const char* outcome, const std::string& text) {
  results_.record(peer.address, peer.source, request, outcome, text, side.mine(), side.theirs());
}

void Server::serve_control(Stream& control, const Peer& peer, SetUpSlot& set_up) {
  control.set_deadline(Deadline::after(config_.timeouts.control));
  // Every control session starts with the server's own preamble: a client of
  // another protocol version learns which one the server speaks.
  session::send_preamble(control, protocol::ConnectionKind::control);
  const auto refuse_undecoded = [&](const std::string& reason) { session::refuse_test(control, reason); };

  protocol::TestRequest request;
  try {
    protocol::Message message = session::receive_message(control, "the test request");
    if (std::holds_alternative<protocol::ClockRequest>(message)) {
      // --start-at: the client compares clocks, and runs no test here.
      session::send_message(control, protocol::ClockReply{measure::wall_ns(), quic_ ? "" : quic_refusal()},
                            "the clock reply");
      return;
    }
    auto* asked = std::get_if<protocol::TestRequest>(&message);
    if (asked == nullptr) throw protocol::ProtocolError("unexpected message instead of the test request");
    request = std::move(*asked);
    kinds::check_request(request);  // the request against its kind, before anything else
  } catch (const protocol::ProtocolError& e) {
    refuse_undecoded(e.what());
  }
  Side side(*this, peer.source);
  bool written = false;
  // A refused test's line is written before the client hears the refusal, so
  // that whoever reads the results file after the client has exited finds it.
  const auto refuse = [&](const std::string& reason) {
    write_result(peer, request, side, "refused", reason);
    written = true;
    session::refuse_test(control, reason);
  };
  try {
    serve_test(control, request, side, refuse, peer, set_up);
  } catch (const std::exception& e) {
    if (!written) write_result(peer, request, side, "failed", e.what());
    throw;
  }
}

void Server::serve_test(Stream& control, const protocol::TestRequest& request, Side& side,
                        const std::function<void(const std::string&)>& refuse, const Peer& peer,
                        SetUpSlot& set_up) {
  // The caps, checked before anything is set up for the test.
  const kinds::KindSlice& kind = kinds::slice_of(request.test.kind);
  if (const std::string problem = cap_problem(request); !problem.empty()) refuse(problem);
  if (kind.refusal != nullptr) {
    if (const std::string problem = kind.refusal(request, side); !problem.empty()) refuse(problem);
  }
  const RunningTest running(*this, peer.source);
  if (!running.busy().empty()) refuse(running.busy());
  set_up.release();  // a running test now, counted as one: no longer against --max-pending
  // A client's --cipher outside this server's defaults is served to its test alone, and said.
  const tls::CipherGrant grant = tls_.grant_cipher(request.cipher);
  if (!grant.suites.empty()) {
    log_.line(fmt::format(
        "{} serves TLS suites outside this server's defaults to this test, as its client asked (--cipher {})",
        peer.address, request.cipher));
  }
  // Each kind's server half runs the test and returns its log line.
  const std::string line = kind.serve(control, request, side);
  log_.line(fmt::format("{} {}", peer.address, line));
  // The outcome is what the results say, as the line does: a transfer that
  // failed on either side is no success because its half returned.
  write_result(peer, request, side, side.failed() ? "failed" : "ok", line);
}

std::string Server::quic_refusal() const {
  return fmt::format(
      "this server has no QUIC ({}); leave quic out of --mode, or run a server built with OpenSSL 3.5 or "
      "newer",
      no_quic_);
}

std::string Server::cap_problem(const protocol::TestRequest& request) const {
  if (request.mode == Mode::quic && !quic_) return quic_refusal();
  if (request.test.stream.bytes > config_.max_bytes) {
    return fmt::format("the test asks for {} bytes; this server allows at most {} (--max-bytes)",
                       request.test.stream.bytes, config_.max_bytes);
  }
  if (std::chrono::milliseconds(request.test.duration_ms) > config_.max_duration) {
    return fmt::format("the test asks for {} s; this server allows at most {} s (--max-duration)",
                       static_cast<double>(request.test.duration_ms) / 1e3,
                       std::chrono::duration<double>(config_.max_duration).count());
  }
  if (const std::string problem =
          protocol::rr_schedule_problem(request.test.rr.rate_tps, request.test.streams);
      !problem.empty()) {
    return "this server refuses " + problem;
  }
  if (request.server_cpu >= 0) {
    if (!kinds::slice_of(request.test.kind).server_pin) {
      return fmt::format(
          "-A's server CPU does not apply to {} tests: this server's accepting threads serve them, and every "
          "other test too; give -A the client's CPU alone",
          to_string(request.test.kind));
    }
    if (const std::string why = measure::check_cpu(request.server_cpu); !why.empty())
      return fmt::format("-A asks the server to pin to CPU {}, but {}", request.server_cpu, why);
  }
  return {};
}

std::shared_ptr<void> Server::reserve_connections(const std::string& source, std::uint32_t asked,
                                                  std::string& busy) {
  const int count = static_cast<int>(asked);  // at most a few hundred (protocol::kMaxStreams)
  std::lock_guard lock(mutex_);
  SourceUse& use = sources_[source];
  if (shared_connections_ + reserved_ + count > config_.max_connections) {
    busy = fmt::format(
        "server busy: the test needs {} connections and {} of {} are taken; try again, or raise "
        "--max-connections on the server",
        count, shared_connections_ + reserved_, config_.max_connections);
  } else if (use.connections + use.budget + count > connection_share()) {
    busy = fmt::format(
        "server busy: the test needs {} connections, and with them {} would hold more than its share of "
        "the server, {} (half of --max-connections); try again when its other tests end",
        count, source, connection_share());
  }
  if (!busy.empty()) {
    forget_if_unused(sources_.find(source));
    return nullptr;
  }
  use.budget += count;
  reserved_ += count;
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [this, source, count](void*) {
    std::lock_guard released(mutex_);
    auto it = sources_.find(source);
    it->second.budget -= count;
    reserved_ -= count;
    forget_if_unused(it);
  });
}

int Server::flows_room() const {
  const std::uint64_t hard = descriptor_hard_limit();
  const std::uint64_t kept = kReservedDescriptors + static_cast<std::uint64_t>(config_.max_connections);
  return hard > kept ? static_cast<int>(std::min<std::uint64_t>(hard - kept, INT32_MAX)) : 0;
}

std::shared_ptr<void> Server::reserve_flows(const std::vector<std::string>& sources, std::uint32_t asked,
                                            std::string& busy) {
  const int count = static_cast<int>(asked);  // at most spec::kMaxFlows
  std::lock_guard lock(mutex_);
  if (count > config_.max_flows) {
    busy = fmt::format(
        "this server holds at most {} flows a test (--max-flows); ask for fewer, or raise --max-flows on the "
        "server",
        config_.max_flows);
  } else if (flows_held_ + count > flows_room()) {
    busy = fmt::format(
        "server busy: the test needs {} flows, and running tests hold {} of the {} this server's open-file "
        "limit leaves beside --max-connections; try again when one ends, or raise the server's limit "
        "(ulimit -Hn, LimitNOFILE=)",
        count, flows_held_, flows_room());
  }
  if (!busy.empty()) return nullptr;
  // Each source's share: the client spreads its flows over them in turn.
  const int share = (count + static_cast<int>(sources.size()) - 1) / static_cast<int>(sources.size());
  for (const std::string& source : sources)
    sources_[source].flow_budget += share;
  flows_held_ += count;
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [this, sources, count, share](void*) {
    std::lock_guard released(mutex_);
    for (const std::string& source : sources) {
      auto it = sources_.find(source);
      it->second.flow_budget -= share;
      forget_if_unused(it);
    }
    flows_held_ -= count;
  });
}

std::shared_ptr<void> Server::reserve_memory(std::uint64_t bytes, std::string& busy) {
  std::lock_guard lock(mutex_);
  if (memory_held_ + bytes > config_.max_memory) {
    busy = fmt::format(
        "server busy: the test needs {} of buffers and the tests running hold {} of this server's {} "
        "(--max-memory); try again when one ends",
        measure::format_bytes(bytes), measure::format_bytes(memory_held_),
        measure::format_bytes(config_.max_memory));
    return nullptr;
  }
  memory_held_ += bytes;
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [this, bytes](void*) {
    std::lock_guard released(mutex_);
    memory_held_ -= bytes;
  });
}

protocol::TestAccept Server::accept_message(const protocol::Cookie& cookie) const {
  protocol::TestAccept accept;
  accept.cookie = cookie;
  accept.server_version = kVersion;
  accept.tls_library = tls::library_version();
  accept.cpu_model = measure::cpu_model();
  accept.cpu_features = measure::cpu_crypto_features();
  accept.kernel = measure::kernel_description();
  const tls::Offer& offer = tls_.offer();
  accept.tls_versions = offer.versions;
  accept.tls_ciphers = offer.ciphers;
  accept.tls_groups = offer.groups;
  accept.certificate_key_type = offer.certificate_key_type;
  accept.ktls = config_.tls_policy.ktls;
  tls::kernel_has_tls_ulp(accept.tls_ulps);
  return accept;
}

void Server::shut_down_connections() {
  pending_.cancel_all();
  std::unique_lock lock(mutex_);
  stopping_ = true;
  for (int fd : live_fds_)
    ::shutdown(fd, SHUT_RDWR);
  if (!idle_.wait_for(lock, kShutdownGrace, [&] { return active_connections_ == 0; })) {
    log_.line(
        fmt::format("{} connections still open after {} s", active_connections_, kShutdownGrace.count()));
  }
}

}  // namespace tlscmp::app
