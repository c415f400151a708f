#include "app/server.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <array>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "app/control.hpp"
#include "app/datagram.hpp"
#include "app/streams.hpp"
#include "app/tls_facts.hpp"
#include "app/transfer.hpp"
#include "endpoint.hpp"
#include "measure/environment.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"
#include "version.hpp"

namespace tlscmp::app {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::byte kTlsHandshakeRecord{0x16};  // the first byte of every TLS ClientHello
constexpr std::chrono::seconds kShutdownGrace{5};
constexpr std::chrono::milliseconds kClientCheckInterval{100};

tcp::endpoint listen_endpoint(const ServerConfig& config) {
  if (config.bind_address.empty()) return {tcp::v6(), config.port};
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(config.bind_address, ec);
  if (ec) throw UsageError(fmt::format("--bind '{}' is not an IP address", config.bind_address));
  return {address, config.port};
}

std::string format_endpoint(const tcp::endpoint& endpoint) {
  return host_port(endpoint.address().to_string(), endpoint.port());
}

// Waits for the first byte of a new connection and returns it without consuming it.
// `wait` is the first byte's time, and `flag` the option that set it.
std::byte peek_first_byte(int fd, std::chrono::milliseconds wait, const char* flag) {
  const Deadline deadline = Deadline::after(wait);
  for (;;) {
    if (const std::error_code ec = wait_fd(fd, POLLIN, deadline)) {
      if (ec == TransportErrc::timeout) {
        throw Error(fmt::format("sent nothing within {:g} s ({}); closed",
                                std::chrono::duration<double>(wait).count(), flag));
      }
      throw Error(fmt::format("cannot wait for the first byte: {}", ec.message()));
    }
    std::byte first{};
    const ssize_t n = ::recv(fd, &first, 1, MSG_PEEK);
    if (n == 1) return first;
    if (n == 0) throw Error("closed the connection without sending anything");
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      throw Error(fmt::format("cannot read the first byte: {}", std::strerror(errno)));
    }
  }
}

// The server's log line for one test. `client` is empty when the client's
// result never came (the exchange failed with `exchange_error`).
std::string describe_test(const protocol::TestRequest& request, const protocol::SideResult& server,
                          const std::optional<protocol::SideResult>& client,
                          const std::string& exchange_error, const std::string& tls_description) {
  const std::string what = fmt::format("{} {}", to_string(request.mode), to_string(request.direction));
  // Failures name the client's round too, as the client's own line does.
  const std::string failed =
      fmt::format("{}{} failed", what, request.round > 0 ? fmt::format(" round {}", request.round) : "");
  // A side's own error already names how many bytes it moved.
  if (!server.error.empty()) return fmt::format("{}: {}", failed, server.error);
  if (client && !client->error.empty()) return fmt::format("{} on the client: {}", failed, client->error);
  if (!client) {
    const std::string of = request.bytes > 0 ? fmt::format("{} of {}", server.bytes, request.bytes)
                                             : std::to_string(server.bytes);
    return fmt::format("{} after {} bytes {}: {}", failed, of,
                       server.role == Role::receiver ? "received" : "sent", exchange_error);
  }
  const protocol::SideResult& receiver = server.role == Role::receiver ? server : *client;
  const protocol::SideResult& sender = server.role == Role::sender ? server : *client;
  std::string text = fmt::format(
      "{} {} bytes in {:.0f} us ({:.1f} MB/s), sender {:.0f} us", what, receiver.bytes, receiver.elapsed_us,
      receiver.elapsed_us > 0 ? static_cast<double>(receiver.bytes) / receiver.elapsed_us : 0.0,
      sender.elapsed_us);
  if (!tls_description.empty()) text += ", " + tls_description;
  return text;
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

Server::Server(const ServerConfig& config, const tls::Identity& identity, Logger& log)
    : config_(config),
      log_(log),
      tls_(tls::Context::for_server({identity, tls::kDefaultReadAheadBytes, config.tls_policy,
                                     config.client_ca_file, config.require_client_cert})),
      acceptor_(io_) {
  if (tls::DtlsContext::available(no_dtls_)) dtls_.emplace(tls::DtlsContext::for_server(identity));
  tcp::endpoint endpoint = listen_endpoint(config);
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (ec == asio::error::address_family_not_supported && config.bind_address.empty()) {
    endpoint = tcp::endpoint(tcp::v4(), config.port);  // no IPv6 on this host
    acceptor_.open(endpoint.protocol(), ec);
  }
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && endpoint.protocol() == tcp::v6() && config.bind_address.empty()) {
    acceptor_.set_option(asio::ip::v6_only(false), ec);  // serve IPv4 clients too
  }
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error(fmt::format("cannot listen on {}: {}", format_endpoint(endpoint), ec.message()));
}

Server::~Server() {
  threads_.join_all();  // every wait in them has a deadline
}

std::uint16_t Server::port() const {
  return acceptor_.local_endpoint().port();
}

std::string Server::listen_address() const {
  return format_endpoint(acceptor_.local_endpoint());
}

void Server::run(bool handle_signals) {
  asio::signal_set signals(io_);
  if (handle_signals) {
    signals.add(SIGINT);
    signals.add(SIGTERM);
    signals.async_wait([this](const boost::system::error_code& ec, int signal) {
      if (ec) return;
      log_.line(fmt::format("{}: stopping", signal == SIGINT ? "SIGINT" : "SIGTERM"));
      io_.stop();
    });
  }
  accept_next();
  io_.run();
  boost::system::error_code ignored;
  acceptor_.close(ignored);
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
  --server_.setting_up_;
  if (--server_.setting_up_by_source_[source_] == 0) server_.setting_up_by_source_.erase(source_);
}

std::string Server::admit(const std::string& source) {
  std::lock_guard lock(mutex_);
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
        "the "
        "server",
        config_.max_pending_per_source, source);
  }
  ++from_source;
  ++setting_up_;
  ++active_connections_;
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

void Server::accept_next() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // EMFILE and the like: say so and keep serving those already connected.
      log_.line(fmt::format("accept failed: {}", ec.message()));
    } else {
      boost::system::error_code ignored;
      asio::ip::address address = socket.remote_endpoint(ignored).address();
      if (address.is_v6() && address.to_v6().is_v4_mapped())
        address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
      const std::string source = address.to_string();
      const std::string busy = admit(source);
      if (!busy.empty()) {
        log_busy(peer_address(socket.native_handle()), busy);
        turn_away(std::move(socket), busy);
      } else {
        const int fd = socket.release();
        try {
          threads_.reap();
          threads_.spawn([this, fd, source] { handle_connection(fd, source); });
        } catch (const std::system_error& e) {
          log_.line(fmt::format("{} refused: cannot start a thread: {}", peer_address(fd), e.what()));
          ::close(fd);
          SetUpSlot slot(*this, source);  // gives back the place admit() counted
          std::lock_guard lock(mutex_);
          --active_connections_;
        }
      }
    }
    accept_next();
  });
}

void Server::handle_connection(int raw_fd, const std::string& source) {
  {
    std::unique_ptr<Stream> stream;  // declared first, so that its socket closes last
    UniqueFd fd(raw_fd);
    const std::string peer = peer_address(raw_fd);
    LiveFd live(*this, raw_fd);
    SetUpSlot set_up(*this, source);
    try {
      set_nonblocking(raw_fd, true);
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
        serve_control(*stream, peer);
      } else if (kind == protocol::ConnectionKind::handshake) {
        serve_handshake(*stream);
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
          throw protocol::ProtocolError(
              "data connection for an unknown or finished test, or a stream it has");
        }
      }
    } catch (const std::exception& e) {
      log_.line(fmt::format("{} {}", peer, e.what()));
    }
  }
  std::lock_guard lock(mutex_);
  --active_connections_;
  idle_.notify_all();
}

void Server::serve_control(Stream& control, const std::string& peer) {
  const Timeouts& timeouts = config_.timeouts;
  control.set_deadline(Deadline::after(timeouts.control));
  // Every control session starts with the server's own preamble: a client of
  // another protocol version learns which one the server speaks.
  send_preamble(control, protocol::ConnectionKind::control);
  // Tells the client why its test cannot run, then ends the session with that reason.
  auto refuse = [&](const std::string& reason) {
    try {
      send_message(control, protocol::Refusal{reason}, "the refusal");
    } catch (const Error&) {
      // The client may be gone already; the log line says why we stopped.
    }
    throw Error(reason);
  };

  protocol::TestRequest request;
  try {
    request = receive<protocol::TestRequest>(control, "the test request");
  } catch (const protocol::ProtocolError& e) {
    refuse(e.what());
  }
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
  const RunningTest running(*this);
  if (!running.admitted()) {
    refuse(fmt::format("server busy: {} tests running; try again, or raise --max-clients on the server",
                       config_.max_clients));
  }
  if (is_datagram(request.mode)) {
    if (request.mode == Mode::dtls && !dtls_) refuse(no_dtls_);
    log_.line(fmt::format(
        "{} {}", peer,
        serve_datagram_test(control, request, accept_message({}), dtls_ ? &*dtls_ : nullptr, config_)));
    return;
  }
  const auto ticket = pending_.open(request.streams, request.handshakes);
  send_message(control, accept_message(ticket->cookie()), "the test acceptance");
  if (request.handshakes > 0) {
    finish_handshake_test(control, peer, request, *ticket);
    return;
  }

  // Wait for the data connections, but notice a client that gave up (a
  // failed TLS handshake, say) instead of holding its slot until the deadline.
  std::vector<std::unique_ptr<Stream>> data;
  const Deadline data_deadline = Deadline::after(timeouts.connect + timeouts.handshake);
  const auto all_came = [&] {
    return !data.empty() && std::all_of(data.begin(), data.end(), [](const auto& d) { return d != nullptr; });
  };
  while (!all_came() && !data_deadline.expired()) {
    data = ticket->wait(Deadline::earlier(data_deadline, Deadline::after(kClientCheckInterval)));
    if (!all_came() && peer_has_closed(control.native_handle())) {
      throw Error(
          fmt::format("{} test: the client closed the control connection before its data connections came",
                      to_string(request.mode)));
    }
    if (stopping()) break;
  }
  if (!all_came()) {
    refuse(stopping() ? "the server is shutting down" : "not every data connection arrived in time");
  }
  for (const auto& stream : data) {
    if (stream->is_tls() != (request.mode == Mode::tls)) {
      refuse(fmt::format("the data connection is {} but the test is {}",
                         stream->is_tls() ? "TLS" : "plain TCP", to_string(request.mode)));
    }
  }

  std::vector<protocol::SideResult> mine;
  std::string tls_description;
  {
    std::vector<std::unique_ptr<LiveFd>> live;
    std::vector<StreamWork> work;
    for (std::uint32_t i = 0; i < data.size(); ++i) {
      Stream& stream = *data[i];
      live.push_back(std::make_unique<LiveFd>(*this, stream.native_handle()));
      if (tls::TlsStream* tls_stream = stream.tls()) {
        const tls::SessionInfo info = tls_stream->session_info();
        tls_description = fmt::format("{} {} {}", info.version, info.cipher, info.group);
        if (!info.client_certificate_key_type.empty()) {
          tls_description += fmt::format(", client certificate {}", info.client_certificate_key_type);
        }
        if (request.record_size != 0) tls_stream->set_max_record_size(request.record_size);
      }
      set_socket_buffers(stream.native_handle(), request.sndbuf_bytes, request.rcvbuf_bytes);
      stream.set_deadline(Deadline::after(timeouts.handshake));
      std::error_code ec;
      stream.write_all({&kReadyByte, 1}, ec);
      if (ec) throw Error(fmt::format("cannot start the transfer: {}", describe(ec, stream.error_detail())));
      TransferSpec spec = transfer_spec(
          request, stream_role(request.direction, request.bidir, i, /*server_side=*/true), timeouts.idle);
      spec.max_duration = config_.max_duration;
      spec.max_msg = std::min(spec.max_msg, config_.max_msg);
      work.push_back({&stream, spec});
    }
    mine = run_streams(work);
    live.clear();  // before the sockets close
  }
  data.clear();

  // Results both ways, stream by stream. A client that vanished is logged with what this side saw.
  std::vector<protocol::SideResult> theirs;
  std::string exchange_error;
  // After a failure here (a stall, say) the client's result may never come:
  // a short grace, then this side's account goes to the log.
  const bool failed_here =
      std::any_of(mine.begin(), mine.end(), [](const protocol::SideResult& m) { return !m.error.empty(); });
  try {
    control.set_deadline(
        Deadline::after(failed_here ? std::min(timeouts.control, kResultGrace) : timeouts.control));
    for (const protocol::SideResult& result : mine)
      send_message(control, result, "the server's result");
    for (std::size_t i = 0; i < mine.size(); ++i) {
      theirs.push_back(receive<protocol::SideResult>(control, "the client's result"));
      if (theirs.back().stream != i || theirs.back().role == mine[i].role) {
        throw protocol::ProtocolError("the client's results do not match the streams");
      }
    }
  } catch (const Error& e) {
    theirs.clear();
    exchange_error = e.what();
  }
  const std::optional<protocol::SideResult> client =
      theirs.empty() ? std::nullopt : std::optional(combine(theirs));
  log_.line(fmt::format(
      "{} {}{}", peer, describe_test(request, combine(mine), client, exchange_error, tls_description),
      mine.size() > 1 ? fmt::format(", {} streams{}", mine.size(), request.bidir ? " both ways" : "") : ""));
}

// One connection of a handshake test: the TLS handshake is done; count it,
// answer with one byte (so that the client takes in its session tickets),
// and close.
void Server::serve_handshake(Stream& stream) {
  if (!stream.is_tls()) throw protocol::ProtocolError("a handshake connection must be TLS");
  protocol::Cookie cookie{};
  std::error_code ec;
  stream.read_exact(cookie, ec);
  if (ec)
    throw Error(
        fmt::format("handshake connection without a cookie: {}", describe(ec, stream.error_detail())));
  if (!pending_.probe(cookie))
    throw protocol::ProtocolError("handshake connection for an unknown or finished test");
  stream.write_all({&kReadyByte, 1}, ec);
  // A clean close: OpenSSL forgets a session whose connection ended without close_notify.
  if (!ec) stream.shutdown_send(ec);
}

// A handshake test's control session: the client makes its connections, then
// says how many; both counts must agree.
void Server::finish_handshake_test(Stream& control, const std::string& peer,
                                   const protocol::TestRequest& request, const PendingTests::Ticket& ticket) {
  const Timeouts& t = config_.timeouts;
  // Each handshake may take up to a connect and a handshake timeout.
  control.set_deadline(Deadline::after(t.control + request.handshakes * (t.connect + t.handshake)));
  const auto theirs = receive<protocol::SideResult>(control, "the client's handshake count");
  protocol::SideResult mine;
  mine.role = Role::receiver;
  mine.bytes = ticket.probes();
  control.set_deadline(Deadline::after(t.control));
  send_message(control, mine, "the server's handshake count");
  log_.line(fmt::format("{} tls handshake test: {} of {} connections served{}", peer, mine.bytes,
                        request.handshakes, theirs.error.empty() ? "" : ", client: " + theirs.error));
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
