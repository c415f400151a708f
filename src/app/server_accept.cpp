// Listening and admission: the accepting threads, what each connection's
// first byte says it is, set-up slots and turning away with a busy line.

#include "app/server_parts.hpp"

namespace tlscmp::app {

using namespace server_parts;

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
  } else if (const Share share = connection_share(use); use.connections + use.budget >= share.connections) {
    busy = fmt::format(
        "server busy: {} connections from {}, its share of the server ({}); try again when its "
        "tests end",
        share.connections, source, share.why);
  } else if (std::ssize(use.set_up) >= config_.max_pending_per_source) {
    busy = fmt::format(
        "server busy: {} connections from {} being set up; try again, or raise --max-pending-per-source on "
        "the server",
        config_.max_pending_per_source, source);
  } else if (setting_up_ >= config_.max_pending && !take_set_up_place(use)) {
    busy = fmt::format(
        "server busy: {} connections being set up, {} of them from {}, its even share; try again, or raise "
        "--max-pending on the server",
        config_.max_pending, use.set_up.size(), source);
  }
  if (!busy.empty()) {
    forget_if_unused(sources_.find(source));
    return busy;
  }
  use.set_up.push_back(fd);
  ++use.connections;
  ++setting_up_;
  ++shared_connections_;
  count_in();
  return {};
}

bool Server::take_set_up_place(const SourceUse& use) {
  SourceUse* busiest = nullptr;
  for (auto& [source, other] : sources_) {
    const bool takeable = std::ranges::any_of(other.set_up, [](int fd) { return fd >= 0; });
    if (takeable && (busiest == nullptr || other.set_up.size() > busiest->set_up.size())) busiest = &other;
  }
  // Two more, so that the move evens the shares out rather than swapping them.
  if (busiest == nullptr || busiest->set_up.size() < use.set_up.size() + 2) return false;
  const auto oldest = std::ranges::find_if(busiest->set_up, [](int fd) { return fd >= 0; });
  const int fd = *oldest;
  busiest->set_up.erase(oldest);
  --setting_up_;
  set_up_taken_.insert(fd);
  // Its wait ends (a read sees the end), and its holder answers with the busy line.
  ::shutdown(fd, SHUT_RD);
  return true;
}

std::string Server::set_up_taken_line() const {
  return fmt::format(
      "server busy: {} connections being set up, and a host holding fewer took this one's place (shared "
      "evenly between hosts); try again, or raise --max-pending on the server",
      config_.max_pending);
}

void Server::log_limited(LogLimit& limit, const std::string& text) {
  const auto now = std::chrono::steady_clock::now();
  if (now - limit.last < std::chrono::seconds(1)) {
    ++limit.unlogged;
    return;
  }
  log_.line(fmt::format(
      "{}{}", text,
      limit.unlogged > 0 ? fmt::format(" (and {} more since the last such line)", limit.unlogged) : ""));
  limit.last = now;
  limit.unlogged = 0;
}

void Server::log_busy(const std::string& peer, const std::string& reason) {
  log_limited(busy_log_, fmt::format("{} turned away: {}", peer, reason));
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
  state->answer = busy_answer(reason);
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
    SetUpSlot(*this, peer.source, budgeted, raw_fd).release();
    { const Admitted ended(*this, raw_fd, peer.source, budgeted); }
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
    // Ends the connection's place and its count, before its socket closes.
    const auto end_here = [&] {
      SetUpSlot(*this, waiting->peer.source, budgeted, fd).release();
      const Admitted ended(*this, fd, waiting->peer.source, budgeted);
    };
    if (wait_ec) {
      log_limited(silent_log_, fmt::format("{} sent nothing within {:g} s ({}); closed",
                                           waiting->peer.address, std::chrono::duration<double>(wait).count(),
                                           preamble_first ? "--preamble-timeout" : "--handshake-timeout"));
      end_here();
      return;  // the socket closes with `waiting`
    }
    // Another host took its place while it waited: told so, as at accept.
    SetUpSlot place(*this, waiting->peer.source, budgeted, fd);
    if (std::string busy = place.taken(); !busy.empty()) {
      log_busy(waiting->peer.address, busy);
      { const Admitted ended(*this, fd, waiting->peer.source, budgeted); }
      turn_away(std::move(waiting->socket), busy);
      return;
    }
    place.hand_over();  // still being set up: counted until the thread's own SetUpSlot ends
    boost::system::error_code release_ec;
    const int taken = waiting->socket.release(release_ec);
    if (release_ec) {
      log_.line(fmt::format("{} cannot be handed to a thread: {}; closed", waiting->peer.address,
                            release_ec.message()));
      end_here();
      return;  // the socket closes with `waiting`
    }
    try {
      threads_.spawn([this, taken, peer = waiting->peer, budgeted] {
        double cpu_mark = measure::thread_cpu_s();
        handle_connection(taken, peer, budgeted, cpu_mark);
      });
    } catch (const std::system_error& e) {
      log_busy(waiting->peer.address, fmt::format("cannot start a thread: {}", e.what()));
      SetUpSlot(*this, waiting->peer.source, budgeted, taken).release();
      { const Admitted ended(*this, taken, waiting->peer.source, budgeted); }
      ::close(taken);
    }
  });
}

void Server::handle_connection(int raw_fd, const Peer& peer, bool budgeted, double& cpu_mark) {
  std::unique_ptr<Stream> stream;  // declared first, so that its socket closes last
  UniqueFd fd(raw_fd);
  Admitted admitted(*this, raw_fd, peer.source, budgeted);
  SetUpSlot set_up(*this, peer.source, budgeted, raw_fd);
  bool moved_cpu_mark = false;
  try {
    set_nodelay(raw_fd, true);
    const Deadline deadline = Deadline::after(config_.timeouts.handshake);
    // The first byte within --preamble-timeout (or the handshake timeout, if shorter).
    const bool preamble_first = config_.preamble_timeout <= config_.timeouts.handshake;
    const std::byte first =
        peek_first_byte(raw_fd, preamble_first ? config_.preamble_timeout : config_.timeouts.handshake,
                        preamble_first ? "--preamble-timeout" : "--handshake-timeout");
    // The stack whose first byte it is (TLS: a handshake record), or plain TCP.
    stream = stacks_->take(std::move(fd), first);
    stream->set_deadline(deadline);
    if (const std::error_code ec = stream->handshake()) {
      // Let the alert reach the client before the socket closes.
      drain_before_close(raw_fd, std::chrono::milliseconds(250));
      throw Error(fmt::format("{} handshake failed: {}", facts(stream->mode()).handshake,
                              describe(ec, stream->error_detail())));
    }

    moved_cpu_mark = serve_stream(stream, peer, set_up, cpu_mark).by_kind;
  } catch (const std::exception& e) {
    tell_taken(raw_fd, stream.get(), peer, set_up, e.what());
  }
  if (!moved_cpu_mark) cpu_mark = measure::thread_cpu_s();  // a kind's own connection moved it on itself
}

void Server::tell_taken(int fd, const Stream* stream, const Peer& peer, SetUpSlot& set_up,
                        const std::string& why) {
  const std::string busy = set_up.taken();
  if (busy.empty()) {
    log_.line(fmt::format("{} {}", peer.address, why));
    return;
  }
  // Its place went to another host: told as a connection turned away at
  // accept is, where nothing but plain tlscmp has been said on it (and the
  // control session has not told it already).
  if ((stream == nullptr || !stream->is_tls()) && set_up.answer_once()) {
    answer_and_close(fd, busy_answer(busy));
  }
  asio::post(io_, [this, address = peer.address, busy] { log_busy(address, busy); });
}

}  // namespace tlscmp::app
