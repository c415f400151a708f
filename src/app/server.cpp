// The server's life: its listening socket, its run (the io thread, the
// accepting and QUIC threads), its stop and shutdown. The other parts:
// server_accept.cpp, server_dispatch.cpp, server_caps.cpp, server_listeners.cpp.

#include "app/server_parts.hpp"

namespace tlscmp::app {

using namespace server_parts;

Server::Server(const session::ServerConfig& config, const tls::Identity& identity, Logger& log,
               std::optional<tls::Identity> issuer)
    : config_(config),
      log_(log),
      tls_(tls::ServerOptions{identity, tls::kDefaultReadAheadBytes, config.tls_policy, config.client_ca_file,
                              config.require_client_cert, config.resumption, nullptr, nullptr,
                              kinds::alpn_protocols()}),
      identity_(identity),
      issuer_(std::move(issuer)),
      listener_(),
      results_(config.results_file, log) {
  tcp::acceptor acceptor(io_);
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
  start_stacks();
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
  for (const auto& [mode, listener] : stacks_->listeners())
    threads_.spawn([this, mode, listener] { listener_loop(mode, *listener); });
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
  } else if (const int others = server_.sources_running_tests() - (use.tests > 0 ? 1 : 0);
             use.tests >= std::max(1, config.max_clients / (others + 2))) {
    // Max-min, without ending a running test: while k sources run tests
    // (this one counted), each starts one only below --max-clients / (k + 1),
    // so that a place stays free for a source that runs none (until k
    // reaches --max-clients).
    busy_ = fmt::format(
        "server busy: {} tests from {} running, its even share beside {} running tests; "
        "try again when one ends",
        use.tests, source_, other_hosts(others));
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

int Server::sources_running_tests() const {
  return static_cast<int>(std::ranges::count_if(sources_, [](const auto& s) { return s.second.tests > 0; }));
}

void Server::forget_if_unused(std::map<std::string, SourceUse>::iterator it) {
  if (it != sources_.end() && it->second.unused()) sources_.erase(it);
}

Server::Share Server::connection_share(const SourceUse& use) const {
  const auto holds = [](const SourceUse& s) { return s.connections + s.budget > 0; };
  const int others =
      static_cast<int>(std::ranges::count_if(sources_, [&](const auto& s) { return holds(s.second); })) -
      (holds(use) ? 1 : 0);
  // Never less than the largest test needs: its control connection and a
  // crr test's budget of two connections a connector.
  const int largest = static_cast<int>(2 * protocol::kMaxStreams + 2);
  const int even = config_.max_connections / (others + 2);
  if (even < largest)
    return {largest, others == 0 ? "half of --max-connections" : "what the largest test needs"};
  return {even, others == 0
                    ? std::string("half of --max-connections")
                    : fmt::format("its even share beside {} holding connections", other_hosts(others))};
}

void Server::stop() {
  io_.stop();
}

bool Server::SetUpSlot::release() {
  if (!held_) return !taken_;
  held_ = false;
  if (budgeted_) return true;  // a budget's connections are not counted as being set up
  std::lock_guard lock(server_.mutex_);
  if (auto it = server_.sources_.find(source_); it != server_.sources_.end()) {
    std::vector<int>& mine = it->second.set_up;
    if (const auto place = std::ranges::find(mine, fd_); place != mine.end()) {
      mine.erase(place);
      --server_.setting_up_;
      server_.forget_if_unused(it);
      return true;
    }
  }
  // Its place went to another source (take_set_up_place), which counted it out then.
  taken_ = server_.set_up_taken_.erase(fd_) > 0;
  return !taken_;
}

std::string Server::SetUpSlot::taken() {
  if (held_) {
    std::lock_guard lock(server_.mutex_);
    if (server_.set_up_taken_.count(fd_) == 0) return {};
  }
  release();
  return taken_ ? server_.set_up_taken_line() : std::string();
}

protocol::TestAccept Server::accept_message(const protocol::Cookie& cookie,
                                            const std::string& library) const {
  protocol::TestAccept accept;
  accept.cookie = cookie;
  accept.server_version = kVersion;
  const tls::Context& context = tls_.of(library);  // made when the test's request was checked
  accept.tls_library = context.backend().library_version();
  accept.tls_library_name = context.backend().name();
  accept.cpu_model = measure::cpu_model();
  accept.cpu_features = measure::cpu_crypto_features();
  accept.kernel = measure::kernel_description();
  const tls::Offer& offer = context.offer();
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
