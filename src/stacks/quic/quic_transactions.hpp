#pragma once

// Request/response transactions as HTTP/3 carries them over QUIC: each on a
// bidirectional stream of its own, which the client opens for its request
// and each side ends (FIN) with the last byte of its message. Seen through
// Stream, a connection's transactions read as they would on one stream, so
// that rr's loops run on it unchanged:
//
//   client   a write opens a stream for the request (once the previous
//            transaction's stream has ended), and ends it with the request's
//            last byte; reads take the response from it.
//   server   a read takes the next stream the client opened (or, once the
//            client ended the connection's first stream, the end); writes
//            put the response on it, and end it with its last byte.
//
// The connection's first stream (`base`: the preamble, the ready byte) stays
// open beside them and carries each side's end of the test.

#include <chrono>
#include <cstdint>
#include <memory>

#include "stacks/quic/quic_stream.hpp"

namespace tlscmp::stacks {

class QuicTransactions final : public Stream {
 public:
  using Shape = TransactionShape;
  // `base`: a QUIC connection's first stream, which outlives this.
  QuicTransactions(QuicStream& base, Shape shape);

  std::size_t read_some(std::span<std::byte> buf, std::error_code& ec) override;
  std::size_t write_some(std::span<const std::byte> buf, std::error_code& ec) override;
  // The client's end, or the server's answer to it, on the first stream.
  void shutdown_send(std::error_code& ec) override;
  bool has_buffered() const override;
  tls::TlsStream* tls() override { return &base_; }
  const tls::TlsStream* tls() const override { return &base_; }
  Mode mode() const override { return Mode::quic; }
  bool readable_within(std::chrono::nanoseconds wait, std::error_code& ec) override;
  // How many transaction streams this side opened or took.
  std::uint64_t streams_opened() const override { return streams_; }

 private:
  // The server's next transaction stream, or none with `ec` (eof: the
  // client ended the first stream, its clean end).
  void take_next(std::error_code& ec);
  // The client's next transaction stream.
  void open_next(std::error_code& ec);
  // A new current stream: the test's idle timeout and minimum rate, no bytes yet.
  void begin_current(std::error_code& ec);
  // The current stream, its messages whole: its FIN read, then gone.
  void retire(std::error_code& ec);
  // The peer's message on the current stream is whole, and this side's too.
  bool done() const;

  QuicStream& base_;
  Shape shape_;
  std::uint64_t out_bytes_;  // this side's message: the request (client) or the response
  std::uint64_t in_bytes_;   // the peer's
  std::unique_ptr<QuicStream> current_;
  std::uint64_t sent_ = 0;      // of this side's message on current_
  std::uint64_t received_ = 0;  // of the peer's message on current_
  std::uint64_t streams_ = 0;
  bool ended_ = false;  // the client ended the test: what follows is the first stream's
};

}  // namespace tlscmp::stacks
