#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>

#include "mode.hpp"
#include "run_facts.hpp"
#include "transport/deadline.hpp"
#include "transport/stream_group.hpp"
#include "transport/unique_fd.hpp"

namespace tlscmp {

namespace tls {
class TlsStream;
}

// A request/response test's shape, for a stream that gives each
// transaction a stream of its own (Stream::stream_per_transaction).
struct TransactionShape {
  bool client = true;
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  std::chrono::milliseconds idle{30'000};  // each stream's idle timeout, as the test's
  std::uint64_t min_rate = 0;              // and its minimum rate (the server's --min-rate)
};

// A connected byte stream: plain TCP or TLS, behind one interface.
//
// A stream lives in two phases. In the setup phase (connect, handshake, test
// parameters) the socket is non-blocking and every call waits with poll(2) until
// the deadline set by set_deadline(). In the transfer phase the socket is
// blocking, with SO_RCVTIMEO/SO_SNDTIMEO of a short tick (at most 250 ms): the
// data loop then makes exactly the system calls a bare read/write loop makes
// while data flows, and a call that blocks wakes up every tick; once ticks
// without any progress add up to the idle timeout, it ends in a timeout. (A
// send with SO_SNDTIMEO of the whole idle timeout returns a partial count
// when its time runs out and then waits a whole timeout again: a stalled
// receiver would take up to twice the idle timeout to notice.)
class Stream : public std::enable_shared_from_this<Stream> {
 public:
  explicit Stream(UniqueFd fd) : fd_(std::move(fd)) {}
  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Reads up to buf.size() bytes; returns how many (> 0), or 0 with ec set
  // (TransportErrc::eof at a clean end of stream).
  virtual std::size_t read_some(std::span<std::byte> buf, std::error_code& ec) = 0;
  // Writes up to buf.size() bytes; returns how many (> 0), or 0 with ec set.
  virtual std::size_t write_some(std::span<const std::byte> buf, std::error_code& ec) = 0;
  // Ends the sending direction: TLS close_notify, then TCP FIN.
  virtual void shutdown_send(std::error_code& ec) = 0;
  // Bytes this stream has taken off the socket and not yet handed out (TLS):
  // poll(2) on the socket cannot see them, read_some returns them at once.
  virtual bool has_buffered() const { return false; }
  // The TLS side of this stream (session facts, record size), or null for plain TCP.
  virtual tls::TlsStream* tls() { return nullptr; }
  virtual const tls::TlsStream* tls() const { return nullptr; }
  bool is_tls() const { return tls() != nullptr; }
  // The stack it is of (mode.hpp's facts say what that can do).
  virtual Mode mode() const = 0;
  // Its stack's handshake (TLS, QUIC), within the deadline set by
  // set_deadline(); plain TCP has none. On TransportErrc::tls_failure,
  // error_detail() names the cause.
  virtual std::error_code handshake() { return {}; }

  // A connection that carries several streams (its stack's facts say
  // `streams`: QUIC), each a Stream that keeps the connection open; the
  // connection must be owned by a std::shared_ptr. Client, after the
  // handshake: a new stream (throws tlscmp::Error if the library opens
  // none), `reports_path` on one stream of each connection so that streams
  // add up to connections (udp_path). Server: the next stream the client
  // opened, waiting up to `wait`; null if none came, with `ended` once the
  // connection is over. Null from a stream without streams.
  virtual std::unique_ptr<Stream> open_stream(bool reports_path) {
    (void)reports_path;
    return nullptr;
  }
  virtual std::unique_ptr<Stream> accept_stream(std::chrono::milliseconds wait, bool& ended) {
    (void)wait;
    ended = true;
    return nullptr;
  }
  // On a stream of such a connection: a stream that gives each transaction
  // a stream of its own (as HTTP/3 does), this one carrying the test's
  // start and end; null where it has no streams.
  virtual std::unique_ptr<Stream> stream_per_transaction(const TransactionShape& shape) {
    (void)shape;
    return nullptr;
  }
  // On a stream of such a connection: the connection's streams by number
  // (transport/stream_group.hpp), this one among them, for a protocol that
  // opens and takes streams of its own (HTTP/3); null where it has no
  // streams. The group keeps the connection open.
  virtual std::unique_ptr<StreamGroup> stream_group() { return nullptr; }
  // Such a stream per transaction: how many transaction streams it opened
  // or took; 0 for any other.
  virtual std::uint64_t streams_opened() const { return 0; }
  // A connection whose library keeps timers of its own (QUIC), driven from
  // an event loop: whether the library has datagrams for the socket to take
  // (the loop waits for POLLOUT too), how soon its next timer is due
  // (nullopt: none), and one round of its events (timers, retransmissions,
  // acknowledgements) when the loop runs them.
  virtual bool loop_wants_write() const { return false; }
  virtual std::optional<std::chrono::microseconds> loop_timeout() const { return std::nullopt; }
  virtual void handle_loop_events() {}
  // Bytes written that the peer has not acknowledged yet, where the stack
  // tells (QUIC); 0 elsewhere (TCP's are the kernel's).
  virtual std::uint64_t unacknowledged_bytes() const { return 0; }
  // A connection over a UDP socket of its own: its datagrams so far, from
  // its reporting stream; a server's stream of a listener: its port's
  // datagrams so far, every connection's, with the connections it holds
  // now; nullopt elsewhere.
  virtual std::optional<UdpPath> udp_path() const { return std::nullopt; }
  virtual std::optional<UdpPath> port_path() const { return std::nullopt; }
  // Waits up to `wait` for bytes to read (or the stream's end): true if
  // there are. poll(2) on the socket; a QUIC stream asks its library.
  virtual bool readable_within(std::chrono::nanoseconds wait, std::error_code& ec);
  // In the transfer phase, after readable_within said so: read_some
  // without waiting. What came may hold no data (TLS 1.3's session
  // tickets, which come unasked after the handshake): 0 then, with
  // TransportErrc::would_block, where read_some would block until the idle
  // timeout. A stream whose library waits (QUIC) reads as read_some.
  std::size_t read_now(std::span<std::byte> buf, std::error_code& ec);

  // Reads exactly buf.size() bytes, or fails with ec.
  void read_exact(std::span<std::byte> buf, std::error_code& ec);
  // Writes all of buf, or fails with ec.
  void write_all(std::span<const std::byte> buf, std::error_code& ec);

  // Setup phase: every following call waits at most until `deadline`.
  void set_deadline(Deadline deadline);
  // Switches to the transfer phase: blocking socket, `idle` per call. With
  // `min_rate` (bytes a second) > 0, a call fails with TransportErrc::too_slow
  // once fewer than min_rate x idle bytes have moved (both ways) in a window
  // of the idle timeout: a peer cannot hold the connection with a trickle
  // that keeps the idle timeout from ever passing.
  std::error_code enter_transfer_phase(std::chrono::milliseconds idle, std::uint64_t min_rate = 0);
  // With a minimum rate: starts the window over, for a protocol with pauses
  // that are not the peer's doing (between request/response transactions).
  void restart_rate_window();

  // The event-loop phase: the socket stays non-blocking, and a call that
  // would block fails at once with TransportErrc::would_block;
  // wanted_events() then says what it waits for (POLLIN or POLLOUT: TLS
  // may need to write in order to read). The caller's epoll set waits.
  void enter_event_loop_phase();
  short wanted_events() const { return wanted_events_; }
  // The socket, which the stream no longer owns (a connection handed on
  // before anything of it was read through the stream's buffers: TCP only).
  UniqueFd release_socket() { return std::move(fd_); }

  // The send(2) calls this stream made so far: what /proc/thread-self/io
  // does not count (it counts read and write calls alone, which TLS
  // libraries make on a socket). 0 for TLS.
  std::uint64_t send_calls() const { return send_calls_; }

  // For TransportErrc::tls_failure: what the TLS library said. Empty otherwise.
  const std::string& error_detail() const { return error_detail_; }
  int native_handle() const { return fd_.get(); }

 protected:
  // Called when a call would block: in the setup phase waits with poll(2) for
  // `events` until the deadline; in the transfer phase a tick has passed with
  // nothing moved: {} to try again, or a timeout once the ticks reach the
  // idle timeout.
  std::error_code wait_ready(short events);
  // A stream whose library waits on the socket itself (QUIC: a UDP socket
  // that stays non-blocking, perhaps shared by a server's connections):
  // the phases leave the socket alone, and the stream waits by its own
  // means, at most wait_limit() at a time, telling nothing_came() when a
  // wait ended with nothing ready.
  void library_waits() { library_waits_ = true; }
  // The longest the next wait may take: the time left to the deadline
  // (setup phase), one tick (transfer phase), none (event-loop phase).
  std::chrono::milliseconds wait_limit() const;
  bool in_event_loop() const { return event_loop_; }
  // After a wait of wait_limit() in which nothing became ready: {} to try
  // again, or why not, as wait_ready() would say.
  std::error_code nothing_came();

  // In the transfer phase: `n` bytes moved, so the idle ticks start over.
  // False when the minimum rate failed (the call then fails with too_slow).
  bool progressed(std::size_t n) {
    stalled_ticks_ = 0;
    return min_rate_ == 0 || rate_holds(n);
  }

  UniqueFd fd_;
  std::string error_detail_;
  std::uint64_t send_calls_ = 0;

 private:
  bool transfer_phase_ = false;
  bool event_loop_ = false;
  bool library_waits_ = false;
  bool no_wait_ = false;  // read_now's call: a wait is would_block
  std::chrono::milliseconds tick_{250};
  short wanted_events_ = 0;
  Deadline deadline_ = Deadline::never();
  // Counts `n` bytes in the window and, every so many calls, checks the rate.
  bool rate_holds(std::size_t n);
  // Whether the window that ends now (if one does) moved enough; starts the next.
  bool window_moved_enough(std::int64_t now_ns);

  int stalled_ticks_ = 0;  // ticks in a row with nothing moved
  int idle_ticks_ = 1;     // that many make the idle timeout
  // The minimum rate (0: none), over windows of the idle timeout.
  std::uint64_t min_rate_ = 0;
  std::int64_t window_ns_ = 0;
  std::int64_t window_start_ns_ = 0;
  std::uint64_t window_bytes_ = 0;  // moved since the window started
  unsigned calls_unchecked_ = 0;
};

// Plain TCP.
class TcpStream final : public Stream {
 public:
  explicit TcpStream(UniqueFd fd) : Stream(std::move(fd)) {}
  std::size_t read_some(std::span<std::byte> buf, std::error_code& ec) override;
  std::size_t write_some(std::span<const std::byte> buf, std::error_code& ec) override;
  void shutdown_send(std::error_code& ec) override;
  Mode mode() const override { return Mode::tcp; }
};

}  // namespace tlscmp
