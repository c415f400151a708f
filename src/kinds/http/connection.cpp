// One HTTP connection's side, around its exchange (drive.cpp):
// the transfer phase's idle timeout, the thread's CPU and the bytes
// TCP carried over it; and the paths that name a response's size.

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// The bytes TCP has carried out (acknowledged) and in over the connection's
// life; zeros where the kernel does not say (not TCP).
std::pair<std::uint64_t, std::uint64_t> tcp_bytes(int fd) {
  struct tcp_info info {};
  socklen_t size = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0 ||
      size < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received)
    return {0, 0};
  return {info.tcpi_bytes_acked, info.tcpi_bytes_received};
}

// The bytes the connection's transport carried out and in so far: TCP's,
// or the datagrams' of a QUIC connection where its client counts them.
std::pair<std::uint64_t, std::uint64_t> wire_bytes(const Stream& stream) {
  if (const std::optional<UdpPath> path = stream.udp_path()) return {path->bytes_sent, path->bytes_received};
  return tcp_bytes(stream.native_handle());
}

// `exchange` in the transfer phase, with this thread's CPU and the wire's
// bytes over it in `result`.
template <typename Exchange>
HttpSideResult on_connection(Stream& stream, std::chrono::milliseconds idle, Exchange exchange) {
  HttpSideResult result;
  if (const std::error_code ec = stream.enter_transfer_phase(idle)) {
    result.error = fmt::format("cannot set the idle timeout: {}", ec.message());
    return result;
  }
  const auto [sent_before, received_before] = wire_bytes(stream);
  const measure::CpuTimes cpu_start = measure::thread_cpu_times();
  result.start_ns = result.end_ns = measure::now_ns();
  exchange(result);
  const measure::CpuTimes cpu = measure::thread_cpu_times() - cpu_start;
  result.cpu_user_s = cpu.user_s;
  result.cpu_system_s = cpu.system_s;
  const auto [sent_after, received_after] = wire_bytes(stream);
  result.wire_sent = sent_after - sent_before;
  result.wire_received = received_after - received_before;
  return result;
}

// The client's end after its last response: its sending direction closed,
// and nothing more from the server but its own end (HTTP/2: its last
// frames, a GOAWAY or window updates, may come first). Every response is
// in whole by then (its length framed it), so a server that closes without
// TLS's close_notify, or resets, as web servers may, ends it as well.
void end_exchange(Stream& stream, bool frames_may_follow, HttpSideResult& result) {
  std::error_code ec;
  stream.shutdown_send(ec);
  std::byte extra[4096];
  while (!ec) {
    if (stream.read_some(extra, ec) > 0 && !frames_may_follow && result.error.empty())
      result.error = "the server sent bytes after the last response";
  }
  // ENOTCONN: a reset the shutdown's write took already (the socket is closed).
  const bool ended = ec == TransportErrc::eof || ec == TransportErrc::truncated ||
                     ec == TransportErrc::reset || ec == std::errc::not_connected;
  if (!ended && result.error.empty())
    result.error = fmt::format("waiting for the server's end: {}", describe(ec, stream.error_detail()));
}

}  // namespace

HttpSideResult run_http_client(Stream& stream, const HttpClientSpec& spec) {
  return on_connection(stream, spec.idle_timeout, [&](HttpSideResult& result) {
    // HTTP/3's streams stay open until the test's end: a stream let go
    // early is reset, and its control stream's reset ends the server's HTTP/3.
    const std::unique_ptr<StreamGroup> group = spec.version == 3 ? stream.stream_group() : nullptr;
    if (group) {
      http3_client_exchange(*group, spec, result);
    } else {
      http_client_exchange(stream, spec, result);
    }
    if (result.error.empty()) end_exchange(stream, !group && spec.version >= 2, result);
  });
}

HttpSideResult run_http_server(Stream& stream, std::uint32_t version, std::chrono::milliseconds idle,
                               std::span<const std::byte> first) {
  return on_connection(stream, idle, [&](HttpSideResult& result) {
    const std::unique_ptr<StreamGroup> group = version == 3 ? stream.stream_group() : nullptr;
    if (group) {
      http3_server_exchange(stream, *group, idle, result);
      return;
    }
    http_server_exchange(stream, version, first, result);
    if (version >= 2) {
      // The client's GOAWAY ended the session; its end (TLS's close_notify,
      // then FIN) follows. Read to it, so that closing leaves nothing unread,
      // which would reset the connection under the client's last read.
      std::error_code ec;
      std::byte rest[4096];
      while (result.error.empty() && !ec)
        stream.read_some(rest, ec);
    }
  });
}

std::string http_path(std::uint64_t response_bytes) {
  return fmt::format("/{}", response_bytes);
}

}  // namespace tlscmp::kinds
