#pragma once

// QUIC on the TLS library that also runs tlscmp's TLS over TCP (OpenSSL 3.5
// or newer): the same certificate, suites and groups, so that the two can be
// compared with all else held equal. A QUIC connection is a QuicStream
// (quic_stream.hpp), carrying its bytes on one bidirectional stream (the
// connection's default stream) or on streams of its own; the server's
// connections come from one QuicListener on the server's UDP port. Builds
// without QUIC have the same functions, which refuse. Only this folder
// knows QUIC's side of the library (tls/ssl_compat.hpp says which library).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "run_facts.hpp"
#include "stacks/quic/quic_library.hpp"
#include "stacks/quic/quic_stream.hpp"
#include "stacks/stack.hpp"
#include "tls/context.hpp"
#include "transport/unique_fd.hpp"

struct ssl_st;
struct ssl_ctx_st;
struct ssl_method_st;
struct sockaddr_storage;
struct pollfd;

namespace tlscmp::stacks {

// The ALPN protocol of tlscmp's QUIC connections (QUIC requires one).
inline constexpr char kQuicAlpn[] = "tlscmp";

// Whether this build has QUIC; where not, `why` (if given) says why, as
// --version and refusals put it: "needs OpenSSL 3.5 or newer; this build has
// OpenSSL 3.0.19 27 Jan 2026".
bool has_quic(std::string* why = nullptr);

// Whether the library names a QUIC connection's peer to the server (OpenSSL
// 4.0); where it does not, a server counts every QUIC peer as one source.
bool quic_names_peers();

// How QUIC's contexts are made (tls::ContextShape): the library's QUIC
// method, TLS 1.3 alone, ALPN tlscmp, the domain's threading.
const tls::ContextShape& quic_shape();

namespace detail {

// The listener as its connections see it. OpenSSL wakes every thread blocked
// on a QUIC domain at each event any thread handles, and the thread that
// handled it waits until all have woken: a thread blocked for new
// connections beside one blocked for its stream's next request made each
// rr transaction a round of wakeups (12,000 tx/s against 15,000 for one
// thread). So while any connection lives, the threads that wait on the
// connections watch the listener too (SSL_POLL_EVENT_IC in their
// SSL_poll), and hand what they see to the accepting thread; with none,
// the accepting thread waits in the library itself.
class ListenerWatch {
 public:
  // `port_live`: the connections of every listener on the port (shards).
  ListenerWatch(ssl_st* listener, std::shared_ptr<std::atomic<int>> port_live)
      : listener_(listener), port_live_(std::move(port_live)) {}
  ssl_st* listener() const { return listener_; }
  // Whether a wait should add the listener to its items: not while a new
  // connection seen already waits for the accepting thread.
  bool wanted() const { return !incoming_.load(std::memory_order_acquire); }
  void saw_incoming();  // a wait saw a connection in the listener's queue
  void connection_born() {
    live_.fetch_add(1, std::memory_order_acq_rel);
    port_live_->fetch_add(1, std::memory_order_acq_rel);
  }
  void connection_gone();
  int live() const { return live_.load(std::memory_order_acquire); }
  int port_live() const { return port_live_->load(std::memory_order_acquire); }
  // The port's datagrams so far (every listener's counts are one), and its
  // connections now.
  std::optional<UdpPath> port_path() const;
  // The accepting thread, while connections live: waits up to `limit` for
  // a connection a wait saw (or queued), or for the last connection's end;
  // true if one is queued.
  bool wait_incoming(std::chrono::milliseconds limit);
  void taken() { incoming_.store(false, std::memory_order_release); }

 private:
  ssl_st* listener_;
  std::shared_ptr<std::atomic<int>> port_live_;
  std::atomic<int> live_{0};
  std::atomic<bool> incoming_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
};

// What QuicStream asks of the library. Each throws tlscmp::Error (has_quic's
// reason) in a build without QUIC.
// A client connection's UDP socket (connected, non-blocking) as its network
// path, and non-blocking mode: QuicStream waits in wait_quic().
void attach_udp(ssl_st* ssl, int fd);
// Waits up to `limit` for the connection's stream to be readable (or
// writable); true if it is, or the connection ended (the next call says how).
// A server's waits watch its listener (`watch`, else null).
bool wait_quic(ssl_st* ssl, bool write, std::chrono::microseconds limit, ListenerWatch* watch);
// A new bidirectional stream on a client connection, non-blocking as its
// connection is; throws tlscmp::Error if the library opens none.
ssl_st* new_stream(ssl_st* connection);
// The next stream the peer opened on a server connection, waiting up to
// `wait`; null if none came, `ended` set once the connection is over. With
// `also`, a stream of the connection: null at once if it becomes readable.
ssl_st* accept_stream(ssl_st* connection, std::chrono::milliseconds wait, bool& ended, ListenerWatch* watch,
                      ssl_st* also = nullptr);
// Ends the stream's sending side (a FIN): false if it could not.
bool conclude_stream(ssl_st* ssl);
// SSL_write's result for `length` bytes on a QUIC stream, concluding the
// stream (its FIN in the same packet) once all of them are written.
int write_concluding(ssl_st* ssl, const void* data, int length);
// Bytes written to the stream that the peer has not acknowledged yet; 0
// once the connection is closed.
std::uint64_t unacknowledged_bytes(ssl_st* ssl);
// The datagrams a server's port took in so far (every listener's), by one
// of its listeners.
std::uint64_t port_datagrams(ssl_st* listener);
// A client connection's datagrams so far, as its QUIC stack handed them to
// the kernel and took them back; nullopt for a server's connection (they
// share the listener's socket).
std::optional<UdpPath> udp_path(ssl_st* ssl);
// Lets the connection's events run for `limit` (or until it ends).
void wait_quic_events(ssl_st* ssl, std::chrono::milliseconds limit, ListenerWatch* watch);
// A connection driven from an event loop: whether it has datagrams to send
// once the socket takes them; its next timer, from now (nullopt: none);
// one round of its events.
bool net_write_desired(ssl_st* ssl);
std::optional<std::chrono::microseconds> event_timeout(ssl_st* ssl);
void handle_events(ssl_st* ssl);
// Closes the connection at once (CONNECTION_CLOSE, no closing period): the
// tests end their connections once both ends have said all they had to.
void close_quic(ssl_st* ssl);

}  // namespace detail

// A client's QUIC connection on `udp` (connected to the server), its
// handshake not yet run. Throws tlscmp::Error.
std::unique_ptr<QuicStream> quic_client_stream(const tls::Context& context, UniqueFd udp, const Dial& dial);

// A listener on one of the server's UDP sockets (a shard of its port,
// QuicPort), whose connections all share it: one QUIC domain, used from
// many threads: each connection's thread waits on it in SSL_poll,
// watching the listener as it does (detail::ListenerWatch). Address
// validation (a Retry before any state is kept for a new address) is on,
// as the library has it by default.
class QuicListener {
 public:
  // `context`: a server Context made with quic_shape(). Takes `udp`, a
  // bound UDP socket; its datagrams are counted with `counted_with`'s (a
  // shard's listener) where given. Throws tlscmp::Error.
  QuicListener(const tls::Context& context, UniqueFd udp, std::shared_ptr<std::atomic<int>> port_live,
               const QuicListener* counted_with);
  ~QuicListener();
  QuicListener(const QuicListener&) = delete;
  QuicListener& operator=(const QuicListener&) = delete;

  // Waits up to `wait` for a new connection; returns it, its handshake
  // perhaps not done yet (Stream::handshake() finishes it), and its peer's
  // address in `peer` where the library tells it (OpenSSL 4.0; with 3.5
  // `peer` is AF_UNSPEC); or null if none came.
  std::unique_ptr<Stream> accept(std::chrono::milliseconds wait, sockaddr_storage& peer);
  int native_handle() const { return udp_.get(); }
  // The port's datagrams (counted with the other listeners') and connections.
  std::optional<UdpPath> port_path() const { return watch_->port_path(); }

 private:
  // The next queued connection, waiting up to `wait`: in the library while
  // no connection lives, else on what the connections' waits see.
  ssl_st* next_connection(std::chrono::milliseconds wait);

  UniqueFd udp_;
  ssl_st* listener_ = nullptr;
  std::shared_ptr<detail::ListenerWatch> watch_;
};

// The server's QUIC port: a listener on each of its UDP sockets, bound to
// the same port with SO_REUSEPORT, the kernel giving each peer's datagrams
// to one of them by the peer's address and port. The library serves every
// connection of a listener at each round of its events, so that a round
// costs in the listener's connections: shards keep rounds short where
// thousands of connections are open (--flows). The datagrams are counted
// over the port.
class QuicPort final : public QuicEndpoint {
 public:
  QuicPort(const tls::Context& context, std::vector<UniqueFd> sockets);
  std::size_t shards() const override { return shards_.size(); }
  std::unique_ptr<Stream> accept(std::size_t shard, std::chrono::milliseconds wait,
                                 sockaddr_storage& peer) override;
  std::optional<UdpPath> port_path() const override { return shards_.front()->port_path(); }

 private:
  std::vector<std::unique_ptr<QuicListener>> shards_;
};

// A server's QUIC streams waited on together by one thread (a --flows
// loop), of any of the port's listeners. A wait runs one round of events
// of each listener with work (datagrams on its socket, or streams the loop
// took or was told of since its last round), then looks at their streams
// without running more, and else waits on the listeners' sockets; the
// streams' own calls run no events (the library's explicit event
// handling), so that a round is shared by the transactions it holds. The
// listeners are watched as every wait on their domains watches them
// (detail::ListenerWatch).
class QuicPollSet final : public StreamPollSet {
 public:
  QuicPollSet();
  ~QuicPollSet() override;
  QuicPollSet(const QuicPollSet&) = delete;
  QuicPollSet& operator=(const QuicPollSet&) = delete;

  // `stream` must be a QuicStream of the server's.
  void set(std::uint32_t tag, Stream& stream, short events) override;
  const std::vector<std::uint32_t>& wait(std::chrono::microseconds limit) override;

 private:
  struct Shard;  // a listener's streams, and its poll items
  std::uint32_t shard_of(const std::shared_ptr<detail::ListenerWatch>& watch);
  void look(Shard& shard);
  void rounds(std::chrono::steady_clock::time_point now, std::chrono::milliseconds idle);

  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<pollfd> fds_;  // each shard's socket
  // By tag: its shard and item, or UINT32_MAX.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> position_;
  std::vector<std::uint32_t> ready_;
};

}  // namespace tlscmp::stacks
