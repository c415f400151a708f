#include "app/transfer.hpp"

#include <fmt/format.h>
#include <vector>

#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::app {
namespace {

// The payload: any bytes will do, since nothing on the path compresses; a
// pattern rather than zeros so that a hexdump shows where data came from.
std::vector<std::byte> make_payload(std::size_t n) {
  std::vector<std::byte> payload(n);
  for (std::size_t i = 0; i < n; ++i)
    payload[i] = static_cast<std::byte>('a' + i % 26);
  return payload;
}

// Closes a side's measurement window, opened at `start_ns` and `cpu_start`,
// with `bytes` moved; adds the socket buffers the kernel applied.
void close_window(protocol::SideResult& result, const Stream& stream, std::uint64_t bytes,
                  std::int64_t start_ns, const measure::CpuTimes& cpu_start) {
  const std::int64_t end_ns = measure::now_ns();
  const measure::CpuTimes cpu = measure::thread_cpu_times() - cpu_start;
  result.bytes = bytes;
  result.elapsed_us = measure::ns_to_us(end_ns - start_ns);
  result.cpu_user_s = cpu.user_s;
  result.cpu_system_s = cpu.system_s;
  const SocketBuffers buffers = socket_buffers(stream.native_handle());
  result.sndbuf_bytes = buffers.sndbuf_bytes;
  result.rcvbuf_bytes = buffers.rcvbuf_bytes;
}

std::string failure(const Stream& stream, const std::error_code& ec, const char* doing, std::uint64_t done,
                    std::uint64_t total) {
  if (ec == TransportErrc::eof) {
    return fmt::format("the peer closed the data connection after {} of {} bytes", done, total);
  }
  return fmt::format("{} after {} of {} bytes: {}", doing, done, total, describe(ec, stream.error_detail()));
}

protocol::SideResult send_payload(Stream& stream, const TransferSpec& spec) {
  protocol::SideResult result;
  result.role = Role::sender;
  std::error_code ec;
  std::byte go{};
  stream.read_exact({&go, 1}, ec);
  if (ec || go != kGoByte) {
    result.error = ec ? fmt::format("no go from the receiver: {}", describe(ec, stream.error_detail()))
                      : "the receiver sent something other than go";
    return result;
  }
  set_nodelay(stream.native_handle(), spec.no_delay);
  const std::vector<std::byte> chunk = make_payload(spec.chunk_bytes);

  const measure::CpuTimes cpu_start = measure::thread_cpu_times();
  const std::int64_t start_ns = measure::now_ns();
  std::uint64_t sent = 0;
  while (sent < spec.bytes) {
    const std::size_t n =
        spec.bytes - sent < chunk.size() ? static_cast<std::size_t>(spec.bytes - sent) : chunk.size();
    stream.write_all({chunk.data(), n}, ec);
    if (ec) break;
    sent += n;
  }
  close_window(result, stream, sent, start_ns, cpu_start);
  if (ec) {
    result.error = failure(stream, ec, "sending failed", sent, spec.bytes);
    return result;
  }
  stream.shutdown_send(ec);
  if (ec) result.error = fmt::format("cannot end the data stream: {}", describe(ec, stream.error_detail()));
  return result;
}

protocol::SideResult receive_payload(Stream& stream, const TransferSpec& spec) {
  protocol::SideResult result;
  result.role = Role::receiver;
  std::vector<std::byte> buffer(spec.chunk_bytes);
  std::error_code ec;

  const measure::CpuTimes cpu_start = measure::thread_cpu_times();
  const std::int64_t start_ns = measure::now_ns();
  stream.write_all({&kGoByte, 1}, ec);
  if (ec) {
    result.error = fmt::format("cannot send go: {}", describe(ec, stream.error_detail()));
    return result;
  }
  std::uint64_t received = 0;
  while (received < spec.bytes) {
    // Never ask for more than is due, so that any byte beyond it stays unread
    // and is caught below as a protocol violation.
    const std::size_t want = spec.bytes - received < buffer.size()
                                 ? static_cast<std::size_t>(spec.bytes - received)
                                 : buffer.size();
    const std::size_t n = stream.read_some({buffer.data(), want}, ec);
    if (ec) break;
    received += n;
  }
  close_window(result, stream, received, start_ns, cpu_start);
  if (ec) {
    result.error = failure(stream, ec, "receiving failed", received, spec.bytes);
    return result;
  }

  // The stream must end right here, cleanly: in TLS with close_notify.
  std::byte extra{};
  stream.read_some({&extra, 1}, ec);
  if (!ec) {
    result.error = fmt::format("the sender sent more than the {} bytes agreed", spec.bytes);
  } else if (ec != TransportErrc::eof) {
    result.error = fmt::format("the data stream did not end cleanly after the last byte: {}",
                               describe(ec, stream.error_detail()));
  }
  return result;
}

}  // namespace

protocol::SideResult run_transfer(Stream& stream, const TransferSpec& spec) {
  if (const std::error_code ec = stream.enter_transfer_phase(spec.idle_timeout)) {
    protocol::SideResult result;
    result.role = spec.role;
    result.error = fmt::format("cannot set the idle timeout: {}", ec.message());
    return result;
  }
  return spec.role == Role::sender ? send_payload(stream, spec) : receive_payload(stream, spec);
}

}  // namespace tlscmp::app
