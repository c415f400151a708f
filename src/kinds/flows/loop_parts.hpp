#pragma once

// What the parts of a flows event loop (loop.cpp: set-up, events and
// deadlines; loop_traffic.cpp: the traffic of established flows) share: a
// flow's state and the loop's constants. Included by those files alone.

#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>

#include "framing/http.hpp"
#include "kinds/flows/loop.hpp"
#include "protocol/messages.hpp"
#include "transport/stream.hpp"
#include "transport/unique_fd.hpp"

namespace tlscmp::kinds {
namespace loop_parts {

inline constexpr std::uint64_t kWakeTag = UINT64_MAX;
// Client: connections under way at once, per loop: a burst of thousands
// would overflow the server's accept queue and come back as retransmitted
// SYNs, a second each.
inline constexpr std::uint32_t kConnectingPerLoop = 64;
// QUIC: the server runs each handshake on a thread waiting on its
// listener's domain, where each event wakes every thread waiting: 16 or 32
// at once went no faster at 1,000 flows.
inline constexpr std::uint32_t kQuicConnectingPerLoop = 8;
inline constexpr std::chrono::milliseconds kTick{100};
inline constexpr std::size_t kBufferBytes = 64 * 1024;
inline constexpr int kStreamBurst = 4;  // a stream's writes (reads) for each readiness
// QUIC server: the longest wait in the library, which cannot watch the
// loop's wakeup (adopted streams, begin, stop).
inline constexpr std::chrono::milliseconds kQuicServerWait{5};

inline std::int64_t ns(std::chrono::milliseconds d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// A flow's preamble and data header: in the clear before TLS, or first on
// its QUIC stream.
inline std::array<std::byte, protocol::kPreambleBytes + protocol::kDataHeaderBytes> flow_header(
    const protocol::Cookie& cookie, std::uint32_t index) {
  std::array<std::byte, protocol::kPreambleBytes + protocol::kDataHeaderBytes> header{};
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::flow);
  const protocol::DataHeader data = protocol::encode_data_header(cookie, index);
  std::copy(preamble.begin(), preamble.end(), header.begin());
  std::copy(data.begin(), data.end(), header.begin() + preamble.size());
  return header;
}

inline std::uint32_t epoll_events(short poll_events) {
  return (poll_events & POLLOUT) != 0 ? EPOLLOUT : EPOLLIN;
}

}  // namespace loop_parts

struct FlowLoop::Flow {
  enum class State : std::uint8_t {
    waiting,
    connecting,
    handshaking,
    idle,
    sending,
    receiving,
    finished,
    failed
  };
  UniqueFd socket;                 // until the stream takes it
  std::unique_ptr<Stream> stream;  // once connected (client) or adopted (server)
  std::uint32_t index = 0;
  std::uint32_t slot = 0;  // in flows_
  State state = State::waiting;
  std::uint32_t events = 0;   // registered with epoll; 0: not registered
  std::uint64_t left = 0;     // bytes left of the request or response under way
  std::uint64_t quota = 0;    // counted: transactions still to make (rr, crr), or its bytes (stream)
  std::uint64_t done = 0;     // units of work: transactions, connections or bytes
  std::int64_t since_ns = 0;  // the phase's start: connect, handshake, or the request's send (due, open loop)
  std::int64_t start_ns = 0;  // crr: the connection's connect
  std::int64_t progress_ns = 0;
  std::int64_t due_ns = 0;           // open loop: the request under way's, or the next one's, due time
  std::int64_t timer_ns = 0;         // QUIC client: its timer's due time in quic_timers_; 0: none
  std::uint64_t unacknowledged = 0;  // QUIC client sender, finished: bytes the server has yet to acknowledge
  // http: the flow's HTTP, client or server, from its establishment on.
  std::unique_ptr<framing::HttpClientCodec> http_client;
  std::unique_ptr<framing::HttpServerCodec> http_server;

  int fd() const { return stream ? stream->native_handle() : socket.get(); }
};

}  // namespace tlscmp::kinds
