#pragma once

// A QUIC connection, or one of its streams, as a Stream: the library's TLS
// (tls::SslStream) over QUIC's own transport. A connection carries its
// bytes on its default stream, or opens (client) and takes (server)
// streams of their own (Stream::open_stream, accept_stream), each of which
// keeps the connection open; its session, certificates and counts are the
// connection's. Waits are the library's (SSL_poll), watching the server's
// listener as every wait on its domain does (detail::ListenerWatch), or an
// event loop's (a client driven by --flows' loops: loop_timeout,
// handle_loop_events).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "tls/ssl_stream.hpp"

namespace tlscmp::stacks {

namespace detail {
class ListenerWatch;
}
class QuicListener;
class QuicPollSet;

class QuicStream final : public tls::SslStream {
 public:
  // Takes ownership of `ssl`, a QUIC connection: a client's on its UDP
  // socket `fd`, or a server's from its listener (no socket of its own).
  QuicStream(UniqueFd fd, ssl_st* ssl);
  // A stream of `connection` (owned by a std::shared_ptr, as every
  // connection with streams is: Stream::open_stream), which it keeps open
  // while it lives;
  // `reports_path`: udp_path() gives the connection's datagrams.
  QuicStream(std::shared_ptr<QuicStream> connection, ssl_st* stream, bool reports_path);
  ~QuicStream() override;

  Mode mode() const override { return Mode::quic; }
  bool readable_within(std::chrono::nanoseconds wait, std::error_code& ec) override;
  // The stream's FIN; then, as TCP's kernel would after a close, the rest
  // goes out and is acknowledged (retransmitted where lost) before the
  // program turns to other things and stops driving the connection.
  void shutdown_send(std::error_code& ec) override;
  std::unique_ptr<Stream> open_stream(bool reports_path) override;
  std::unique_ptr<Stream> accept_stream(std::chrono::milliseconds wait, bool& ended) override;
  std::unique_ptr<Stream> stream_per_transaction(const TransactionShape& shape) override;
  // A stream's group: its connection's streams (quic_group.cpp).
  std::unique_ptr<StreamGroup> stream_group() override;
  bool loop_wants_write() const override;
  std::optional<std::chrono::microseconds> loop_timeout() const override;
  void handle_loop_events() override;
  std::uint64_t unacknowledged_bytes() const override;
  std::optional<UdpPath> udp_path() const override;
  std::optional<UdpPath> port_path() const override;

  // On a stream: another stream of its connection. Client: a new one
  // (open_stream). Server: the next the client opened, as accept_stream,
  // waiting up to `wait`; null also, at once, when this stream has bytes to
  // read (or its end).
  std::unique_ptr<QuicStream> open_sibling();
  std::unique_ptr<QuicStream> accept_sibling(std::chrono::milliseconds wait, bool& ended);
  // As write_some; once all of `buf` is written, the FIN goes with its last
  // bytes, in the same packet.
  std::size_t write_last(std::span<const std::byte> buf, std::error_code& ec);

 protected:
  std::error_code wait_for(short events) override;
  ssl_st* tls_ssl() const override;

 private:
  // This connection, as its owner holds it.
  std::shared_ptr<QuicStream> shared();

  friend class QuicListener;  // its connections watch it (watch_)
  friend class QuicPollSet;   // its waits watch the listener as the stream's would

  std::shared_ptr<QuicStream> connection_;        // a stream's connection
  std::shared_ptr<detail::ListenerWatch> watch_;  // a server's connection's (and its streams')
  bool reports_path_ = false;
};

}  // namespace tlscmp::stacks
