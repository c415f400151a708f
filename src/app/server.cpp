#include "app/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <array>
#include <boost/asio/executor_work_guard.hpp>
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
#include <thread>

#include "app/control.hpp"
#include "endpoint.hpp"
#include "kinds/crr/crr.hpp"
#include "kinds/datagram/datagram.hpp"
#include "kinds/handshake/handshake.hpp"
#include "kinds/rr/rr.hpp"
#include "kinds/stream/stream.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/environment.hpp"
#include "measure/host.hpp"
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

tcp::endpoint listen_endpoint(const ServerConfig& config) {
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

Server::Server(const ServerConfig& config, const tls::Identity& identity, Logger& log,
               std::optional<tls::Identity> issuer)
    : config_(config),
      log_(log),
      tls_(tls::Context::for_server({identity, tls::kDefaultReadAheadBytes, config.tls_policy,
                                     config.client_ca_file, config.require_client_cert, config.resumption})),
      identity_(identity),
      issuer_(std::move(issuer)),
      listener_() {
  if (!config.results_file.empty()) {
    results_.reset(std::fopen(config.results_file.c_str(), "a"));
    if (results_ == nullptr) {
      throw Error(fmt::format("--results {}: cannot open it to append to: {}", config.results_file,
                              std::strerror(errno)));
    }
  }
  tcp::acceptor acceptor(io_);
  if (tls::DtlsContext::available(no_dtls_)) dtls_.emplace(tls::DtlsContext::for_server(identity));
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
  io_.run();
  accepting_stopped_ = true;
  // Wakes the threads waiting in accept() (EINVAL) and takes no more
  // connections; the socket closes with the server.
  ::shutdown(listener_.get(), SHUT_RDWR);
  finish_running_tests();
  shut_down_connections();
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

Server::RunningTest::RunningTest(Server& server) : server_(server) {
  std::lock_guard lock(server_.mutex_);
  admitted_ = server_.running_tests_ < server_.config_.max_clients;
  if (admitted_) ++server_.running_tests_;
}

Server::RunningTest::~RunningTest() {
  if (!admitted_) return;
  std::lock_guard lock(server_.mutex_);
  --server_.running_tests_;
  server_.idle_.notify_all();
}

void Server::stop() {
  io_.stop();
}

void Server::SetUpSlot::release() {
  if (!held_) return;
  held_ = false;
  std::lock_guard lock(server_.mutex_);
  if (budgeted_) {
    auto it = server_.crr_budget_.find(source_);
    if (--it->second.in_use == 0 && it->second.size == 0) server_.crr_budget_.erase(it);
    return;
  }
  --server_.setting_up_;
  if (--server_.setting_up_by_source_[source_] == 0) server_.setting_up_by_source_.erase(source_);
}

std::string Server::admit(const std::string& source, int fd, bool& budgeted) {
  std::lock_guard lock(mutex_);
  // Counted in, and live: stop() shuts its socket down.
  const auto count_in = [&] {
    ++active_connections_;
    live_fds_.insert(fd);
    if (stopping_) ::shutdown(fd, SHUT_RDWR);
  };
  // A source running crr tests sets up their connections within their own
  // budget, not the --max-pending ones that every other test shares.
  budgeted = false;
  if (auto it = crr_budget_.find(source); it != crr_budget_.end() && it->second.in_use < it->second.size) {
    ++it->second.in_use;
    count_in();
    budgeted = true;
    return {};
  }
  if (active_connections_ >= config_.max_connections) {
    return fmt::format(
        "server busy: {} connections being served; try again, or raise --max-clients on the server",
        config_.max_connections);
  }
  if (setting_up_ >= config_.max_pending) {
    return fmt::format(
        "server busy: {} connections being set up; try again, or raise --max-pending on the server",
        config_.max_pending);
  }
  int& from_source = setting_up_by_source_[source];
  if (from_source >= config_.max_pending_per_source) {
    return fmt::format(
        "server busy: {} connections from {} being set up; try again, or raise --max-pending-per-source on "
        "the server",
        config_.max_pending_per_source, source);
  }
  ++from_source;
  ++setting_up_;
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
  constexpr int kMaxTurningAway = 1024;  // beyond: closed at once
  constexpr std::chrono::seconds kLinger{1};
  if (turning_away_ >= kMaxTurningAway) return;  // the socket closes as it goes
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
  for (;;) {
    if (accepting_stopped_) return;
    ++idle_acceptors_;
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
      if (error == EINTR || error == ECONNABORTED || error == EAGAIN) continue;
      // EMFILE and the like: say so (once a second at most) and keep serving those already connected.
      asio::post(
          io_, [this, error] { log_busy("accept", fmt::format("accept failed: {}", std::strerror(error))); });
      std::this_thread::sleep_for(kAcceptRetry);
      continue;
    }
    // Someone else listens while this thread serves what it took.
    if (spare_needed && !start_acceptor()) {
      ::close(fd);
      continue;
    }
    serve_accepted(fd, peer_host(peer), cpu_mark);
    if (idle_acceptors_ >= kSpareAcceptors) return;  // enough listen: this thread may go
  }
}

bool Server::start_acceptor() {
  try {
    threads_.reap();
    threads_.spawn([this] { accept_loop(); });
    return true;
  } catch (const std::system_error& e) {
    asio::post(io_, [this, what = std::string(e.what())] {
      log_busy("accept", fmt::format("cannot start a thread: {}", what));
    });
    return false;
  }
}

void Server::serve_accepted(int fd, const std::string& source, double& cpu_mark) {
  bool budgeted = false;
  const std::string busy = admit(source, fd, budgeted);
  if (busy.empty()) {
    handle_connection(fd, source, budgeted, cpu_mark);
    return;
  }
  // Turned away on the io thread, which has the timers for it.
  asio::post(io_, [this, fd, busy] {
    log_busy(peer_address(fd), busy);
    tcp::socket socket(io_);
    boost::system::error_code ec;
    socket.assign(local_endpoint_.protocol(), fd, ec);
    if (ec) {
      ::close(fd);
      return;
    }
    turn_away(std::move(socket), busy);
  });
  cpu_mark = measure::thread_cpu_s();
}

void Server::handle_connection(int raw_fd, const std::string& source, bool budgeted, double& cpu_mark) {
  std::unique_ptr<Stream> stream;  // declared first, so that its socket closes last
  UniqueFd fd(raw_fd);
  Admitted admitted(*this, raw_fd);
  SetUpSlot set_up(*this, source, budgeted);
  bool crr = false;
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

    const protocol::PreambleInfo preamble = receive_preamble(*stream);
    set_up.release();  // set up: no longer counted against --max-pending
    if (preamble.version != protocol::kVersion && preamble.kind == protocol::ConnectionKind::control) {
      // Answer with our own preamble, so that the client can say which versions differ.
      std::error_code ignored;
      stream->write_all(protocol::encode_preamble(protocol::ConnectionKind::control), ignored);
    }
    protocol::check_version(preamble);
    const protocol::ConnectionKind kind = preamble.kind;
    if (kind == protocol::ConnectionKind::control) {
      if (stream->is_tls()) throw protocol::ProtocolError("a control connection must be plain TCP");
      serve_control(*stream, peer_address(raw_fd), source);
    } else if (kind == protocol::ConnectionKind::handshake) {
      kinds::serve_handshake_connection(*stream, pending_);
    } else if (kind == protocol::ConnectionKind::crr) {
      kinds::serve_crr_connection(*stream, pending_, cpu_mark);
      crr = true;
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
    }
  } catch (const std::exception& e) {
    log_.line(fmt::format("{} {}", peer_address(raw_fd), e.what()));  // still open: `stream` closes last
  }
  if (!crr) cpu_mark = measure::thread_cpu_s();  // a crr connection served moved it on itself
}

Server::Admitted::~Admitted() {
  std::lock_guard lock(server_.mutex_);
  server_.live_fds_.erase(server_.live_fds_.find(fd_));
  --server_.active_connections_;
  server_.idle_.notify_all();
}

// What the kinds' server halves get of this server (kinds/server_side.hpp).
class Server::Side final : public kinds::ServerSide {
 public:
  Side(Server& server, std::string source) : server_(server), source_(std::move(source)) {}
  const std::string& source() const { return source_; }
  std::shared_ptr<void> reserve_connections(std::uint32_t count) override {
    {
      std::lock_guard lock(server_.mutex_);
      server_.crr_budget_[source_].size += count;
    }
    return std::shared_ptr<void>(nullptr, [server = &server_, source = source_, count](void*) {
      std::lock_guard lock(server->mutex_);
      auto it = server->crr_budget_.find(source);
      it->second.size -= count;
      if (it->second.size == 0 && it->second.in_use == 0) server->crr_budget_.erase(it);
    });
  }
  const ServerConfig& config() const override { return server_.config_; }
  protocol::TestAccept acceptance(const protocol::Cookie& cookie) const override {
    return server_.accept_message(cookie);
  }
  std::unique_ptr<PendingTests::Ticket> open_ticket(std::uint32_t streams,
                                                    std::uint64_t handshakes) override {
    return server_.pending_.open(streams, handshakes);
  }
  std::unique_ptr<PendingTests::Ticket> open_ticket(
      std::shared_ptr<PendingTests::ConnectionSink> sink) override {
    return server_.pending_.open(std::move(sink));
  }
  void prepare_key_type(const std::string& key_type) override { server_.prepare_key_type(key_type); }
  const tls::DtlsContext* dtls() const override { return server_.dtls_ ? &*server_.dtls_ : nullptr; }
  LiveSocket register_live(int fd) override {
    auto live = std::make_shared<LiveFd>(server_, fd);
    return LiveSocket([live]() mutable { live.reset(); });
  }
  bool stopping() override { return server_.stopping(); }
  void record(const std::vector<protocol::SideResult>& mine,
              const std::vector<protocol::SideResult>& theirs) override {
    for (const protocol::SideResult& r : mine)
      mine_.push_back(protocol::body_text(r));
    for (const protocol::SideResult& r : theirs)
      theirs_.push_back(protocol::body_text(r));
  }
  void record(const protocol::DatagramResult& mine, const protocol::DatagramResult& theirs) override {
    mine_.push_back(protocol::body_text(mine));
    theirs_.push_back(protocol::body_text(theirs));
  }
  // The results recorded, each a JSON object's text.
  const std::vector<std::string>& mine() const { return mine_; }
  const std::vector<std::string>& theirs() const { return theirs_; }

 private:
  Server& server_;
  std::string source_;
  std::vector<std::string> mine_;
  std::vector<std::string> theirs_;
};

namespace {

const char* kind_name(protocol::TestKind kind) {
  switch (kind) {
    case protocol::TestKind::handshake:
      return "handshake";
    case protocol::TestKind::datagram:
      return "datagram";
    case protocol::TestKind::rr:
      return "rr";
    case protocol::TestKind::crr:
      return "crr";
    case protocol::TestKind::stream:
      break;
  }
  return "stream";
}

// "2026-12-01T01:02:03.456Z": now, in UTC.
std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

}  // namespace

void Server::write_result(const std::string& peer, const std::string& source,
                          const protocol::TestRequest& request, const Side& side, const char* outcome,
                          const std::string& text) {
  if (results_ == nullptr) return;
  // Each piece already JSON text: joined, not parsed again.
  const auto list = [](const std::vector<std::string>& items) {
    return "[" + fmt::format("{}", fmt::join(items, ",")) + "]";
  };
  const std::string line = fmt::format(
      R"({{"time":{},"client":{},"client_address":{},"kind":"{}","outcome":"{}","log":{},"request":{},)"
      R"("server_results":{},"client_results":{}}})"
      "\n",
      nlohmann::json(utc_now()).dump(),
      nlohmann::json(peer).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      nlohmann::json(source).dump(), kind_name(protocol::kind_of(request)), outcome,
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      protocol::body_text(request), list(side.mine()), list(side.theirs()));
  std::lock_guard lock(results_mutex_);
  std::fputs(line.c_str(), results_.get());
  std::fflush(results_.get());
}

void Server::serve_control(Stream& control, const std::string& peer, const std::string& source) {
  control.set_deadline(Deadline::after(config_.timeouts.control));
  // Every control session starts with the server's own preamble: a client of
  // another protocol version learns which one the server speaks.
  send_preamble(control, protocol::ConnectionKind::control);
  const auto refuse_undecoded = [&](const std::string& reason) { refuse_test(control, reason); };

  protocol::TestRequest request;
  try {
    protocol::Message message = receive_message(control, "the test request");
    if (std::holds_alternative<protocol::ClockRequest>(message)) {
      // --start-at: the client compares clocks, and runs no test here.
      send_message(control, protocol::ClockReply{measure::wall_ns()}, "the clock reply");
      return;
    }
    auto* asked = std::get_if<protocol::TestRequest>(&message);
    if (asked == nullptr) throw protocol::ProtocolError("unexpected message instead of the test request");
    request = std::move(*asked);
  } catch (const protocol::ProtocolError& e) {
    refuse_undecoded(e.what());
  }
  Side side(*this, source);
  bool refused = false;
  const auto refuse = [&](const std::string& reason) {
    refused = true;
    refuse_test(control, reason);
  };
  try {
    serve_test(control, request, side, refuse, peer);
  } catch (const std::exception& e) {
    write_result(peer, source, request, side, refused ? "refused" : "failed", e.what());
    throw;
  }
}

void Server::serve_test(Stream& control, const protocol::TestRequest& request, Side& side,
                        const std::function<void(const std::string&)>& refuse, const std::string& peer) {
  // The caps, checked before anything is set up for the test.
  if (request.bytes > config_.max_bytes) {
    refuse(fmt::format("the test asks for {} bytes; this server allows at most {} (--max-bytes)",
                       request.bytes, config_.max_bytes));
  }
  if (std::chrono::milliseconds(request.duration_ms) > config_.max_duration) {
    refuse(fmt::format("the test asks for {} s; this server allows at most {} s (--max-duration)",
                       static_cast<double>(request.duration_ms) / 1e3,
                       std::chrono::duration<double>(config_.max_duration).count()));
  }
  if (const std::string problem = protocol::rr_schedule_problem(request.rate_tps, request.streams);
      !problem.empty()) {
    refuse("this server refuses " + problem);
  }
  if (request.server_cpu >= 0) {
    const protocol::TestKind kind = protocol::kind_of(request);
    if (kind == protocol::TestKind::crr || kind == protocol::TestKind::handshake) {
      refuse(
          "-A's server CPU does not apply to handshake and crr tests: this server's accepting threads serve "
          "them, and every other test too; give -A the client's CPU alone");
    }
    if (const std::string why = measure::check_cpu(request.server_cpu); !why.empty())
      refuse(fmt::format("-A asks the server to pin to CPU {}, but {}", request.server_cpu, why));
  }
  const RunningTest running(*this);
  if (!running.admitted()) {
    refuse(fmt::format("server busy: {} tests running; try again, or raise --max-clients on the server",
                       config_.max_clients));
  }
  // A client's --cipher outside this server's defaults is served to its test alone, and said.
  const tls::CipherGrant grant = tls_.grant_cipher(request.cipher);
  if (!grant.suites.empty()) {
    log_.line(fmt::format(
        "{} serves TLS suites outside this server's defaults to this test, as its client asked (--cipher {})",
        peer, request.cipher));
  }
  // Each kind's server half runs the test and returns its log line.
  std::string line;
  switch (protocol::kind_of(request)) {
    case protocol::TestKind::datagram:
      if (request.mode == Mode::dtls && !dtls_) refuse(no_dtls_);
      line = kinds::serve_datagram_test(control, request, side);
      break;
    case protocol::TestKind::handshake:
      line = kinds::serve_handshake_test(control, request, side);
      break;
    case protocol::TestKind::stream:
      line = kinds::serve_stream_test(control, request, side);
      break;
    case protocol::TestKind::rr:
      line = kinds::serve_rr_test(control, request, side);
      break;
    case protocol::TestKind::crr:
      line = kinds::serve_crr_test(control, request, side);
      break;
  }
  log_.line(fmt::format("{} {}", peer, line));
  write_result(peer, side.source(), request, side, "ok", line);
}

void Server::prepare_key_type(const std::string& key_type) {
  const std::optional<tls::KeyType> type = tls::parse_key_type(key_type);
  if (!type) throw Error(fmt::format("this server knows no key type '{}'", key_type));
  const std::string name = protocol::key_type_server_name(key_type);
  std::lock_guard lock(key_types_mutex_);
  if (key_types_.contains(name)) return;
  if (!issuer_) {
    throw Error(
        "this server has no CA to sign certificates of other key types: start it with --issuer DIR (the "
        "directory where tlscmp certs wrote ca.pem and ca.key), or without --cert (a throwaway CA)");
  }
  // The names the server's own certificate has, so that clients verify this one as they verify that.
  std::vector<std::string> hosts;
  for (const std::string& host : tls::certificate_facts(identity_.certificate_chain_pem).names) {
    if (host != "localhost" && host != "127.0.0.1" && host != "::1") hosts.push_back(host);
  }
  const tls::CertificateSet made = tls::generate_certificates(hosts, 1, *type, issuer_);
  tls_.add_server_name(name, tls::Context::for_server({made.server, tls::kDefaultReadAheadBytes,
                                                       config_.tls_policy, config_.client_ca_file,
                                                       config_.require_client_cert, config_.resumption}));
  key_types_.insert(name);
  log_.line(fmt::format("made a certificate with an {} key for key type tests, valid for a day",
                        tls::certificate_key_type(made.server.certificate_chain_pem)));
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
