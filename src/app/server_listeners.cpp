// The server's QUIC listener: one UDP socket on the server's port, a thread
// that takes its connections, and each connection's streams as tests.

#include "app/server_parts.hpp"

namespace tlscmp::app {

using namespace server_parts;

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

std::string Server::quic_refusal() const {
  return fmt::format(
      "this server has no QUIC ({}); leave quic out of --mode, or run a server built with OpenSSL 3.5 or "
      "newer",
      no_quic_);
}

}  // namespace tlscmp::app
