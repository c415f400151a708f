// The stacks' parts of the server, and the listeners of those that have one
// of their own (QUIC's, on the server's port over UDP): a thread a listener
// takes its connections, and each connection's streams are served as tests.

#include "app/server_parts.hpp"

namespace tlscmp::app {

using namespace server_parts;

void Server::start_stacks() {
  stacks::ServerSetup setup{identity_,
                            config_.tls_policy,
                            config_.client_ca_file,
                            config_.require_client_cert,
                            config_.resumption,
                            &tls_,
                            local_endpoint_.address().to_string(),
                            local_endpoint_.port(),
                            local_endpoint_.protocol() == tcp::v6() && config_.bind_address.empty(),
                            config_.preamble_timeout};
  stacks_.emplace(setup, [this](const std::string& line) { log_.line(line); });
}

void Server::listener_loop(Mode mode, stacks::Listener& listener) {
  while (!accepting_stopped_) {
    sockaddr_storage address{};
    std::unique_ptr<Stream> stream = listener.accept(kListenerTick, address);
    if (!stream) continue;
    // Where the library does not name the peer (QUIC on OpenSSL 3.5), the
    // caps count every connection of the listener as from one source.
    const bool named = address.ss_family != AF_UNSPEC;
    const Peer peer{named ? peer_host(address) : listener.unnamed_source(),
                    named ? peer_address(address) : fmt::format("a {} peer", facts(mode).handshake)};
    bool budgeted = false;
    if (const std::string busy = admit(peer.source, -1, budgeted); !busy.empty()) {
      asio::post(io_, [this, peer, busy] { log_busy(peer.address, busy); });
      continue;  // the stream's end closes the connection
    }
    // std::function copies: the stream goes through a shared holder.
    auto held = std::make_shared<std::unique_ptr<Stream>>(std::move(stream));
    try {
      threads_.reap();
      threads_.spawn(
          [this, held, mode, peer, budgeted] { serve_listened(std::move(*held), mode, peer, budgeted); });
    } catch (const std::system_error& e) {
      const Admitted undo(*this, -1, peer.source, budgeted);
      asio::post(io_, [this, what = std::string(e.what())] {
        log_busy("accept", fmt::format("cannot start a thread: {}", what));
      });
    }
  }
}

void Server::serve_listened(std::unique_ptr<Stream> tls, Mode mode, const Peer& peer, bool budgeted) {
  Admitted admitted(*this, -1, peer.source, budgeted);
  SetUpSlot set_up(*this, peer.source, budgeted, -1);
  double cpu_mark = measure::thread_cpu_s();
  try {
    // The handshake and the first stream within the handshake timeout, as over TCP.
    const Deadline first = Deadline::after(config_.timeouts.handshake);
    tls->set_deadline(first);
    if (const std::error_code ec = tls->handshake())
      throw Error(
          fmt::format("{} handshake failed: {}", facts(mode).handshake, describe(ec, tls->error_detail())));
    const std::shared_ptr<Stream> connection = std::move(tls);
    // A stream a kind's event loop took (--flows) keeps the connection there.
    if (take_streams(connection, peer, set_up, cpu_mark, first)) return;
    // Its streams are out: the connection (and its place under the caps)
    // lasts while they do. This thread waits outside the library: one more
    // thread blocked on the QUIC domain would cost every other wait on it a
    // round of wakeups (tls::detail::ListenerWatch).
    constexpr std::chrono::milliseconds kHoldTick{20};
    while (connection.use_count() > 1 && !stopping())
      std::this_thread::sleep_for(kHoldTick);
  } catch (const std::exception& e) {
    log_.line(fmt::format("{} ({}) {}", peer.address, facts(mode).handshake, e.what()));
  }
}

bool Server::take_streams(const std::shared_ptr<Stream>& connection, const Peer& peer, SetUpSlot& set_up,
                          double& cpu_mark, Deadline first) {
  // Once a stream went to a test, the wait for more is short, to stop soon
  // after the test has all of its streams.
  constexpr std::chrono::milliseconds kMoreStreamsTick{20};
  std::optional<protocol::Cookie> test;
  for (bool ended = false; !ended && !stopping();) {
    if (test && pending_.missing(*test) == 0) return false;
    std::unique_ptr<Stream> stream =
        connection->accept_stream(test ? kMoreStreamsTick : kListenerTick, ended);
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
      log_.line(
          fmt::format("{} ({} stream) {}", peer.address, facts(connection->mode()).handshake, e.what()));
      return false;
    }
  }
  return false;
}

Server::~Server() {
  threads_.join_all();  // every wait in them has a deadline
}

}  // namespace tlscmp::app
