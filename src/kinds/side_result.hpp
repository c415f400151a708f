#pragma once

// What one side of a test on connections of its own (bulk streams, rr, crr,
// handshakes) tells the other at its end: one SideResult a data connection
// (or one in all), on the wire as a kind result (protocol/fields.hpp) whose
// one walk of its fields writes it and reads it back, each field held to
// its range.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "measure/speed.hpp"
#include "mode.hpp"
#include "protocol/fields.hpp"
#include "protocol/messages.hpp"
#include "run_facts.hpp"
#include "spec/spec.hpp"

namespace tlscmp::kinds {

// One interval of a receiver's bytes (with -i), ending at end_us from go; a
// row on the wire.
struct ByteInterval {
  double end_us = 0;
  std::uint64_t bytes = 0;

  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& i) {
    w.field("end_us", i.end_us, protocol::kMaxElapsedUs);
    w.field("bytes", i.bytes, static_cast<double>(spec::kMaxTestBytes));
  }
};

// Either side -> the other, after the transfer: what this side measured.
struct SideResult {
  static constexpr const char* kWireType = "side_result";
  Role role = Role::receiver;
  std::uint64_t bytes = 0;  // payload bytes this side sent (sender) or received (receiver)
  // Receiver: from sending "go" to holding the last byte. Sender: from
  // receiving "go" to the last write returning. Microseconds.
  double elapsed_us = 0;
  double cpu_user_s = 0;      // user CPU seconds this side spent in that window
  double cpu_system_s = 0;    // system CPU seconds this side spent in that window
  int sndbuf_bytes = 0;       // SO_SNDBUF the kernel applied on this side
  int rcvbuf_bytes = 0;       // SO_RCVBUF the kernel applied on this side
  int mss_bytes = 0;          // TCP_MAXSEG of the data connection on this side
  std::string congestion;     // TCP_CONGESTION on this side, "cubic"
  bool ktls_send = false;     // TLS: the kernel encrypted what this side sent
  bool ktls_receive = false;  // TLS: the kernel decrypted what this side received
  // TLS: record bytes this side wrote (sender) or read (receiver) in the transfer.
  std::uint64_t tls_bytes = 0;
  // The data thread's read and write system calls in the window, where the
  // kernel counts them (/proc/thread-self/io).
  std::optional<std::uint64_t> read_calls, write_calls;
  // TLS: this side's host calibrated for the run's suite, chunk and record.
  std::optional<measure::TlsCalibration> calibration;
  // TLS rr and crr: this side's host calibrated for the run's suite and sizes.
  std::optional<measure::TransactionCalibration> transaction_calibration;
  std::uint64_t messages = 0;       // with msg_size: messages this side sent, or received whole
  std::uint64_t payload_bytes = 0;  // with msg_size: the messages' bytes, headers not counted
  std::uint32_t stream = 0;         // which data connection, 0..streams-1
  // crr: connections this side completed, those of them resumed (TLS), and
  // those that failed; `bytes` is then TCP payload bytes received (TLS
  // records and all) and wire_bytes_sent those sent.
  // (cpu_user_s is then the threads' CPU total, user and system, cpu_system_s 0.)
  std::uint64_t connections = 0;
  std::uint64_t resumed = 0;
  std::uint64_t failed = 0;
  std::uint64_t wire_bytes_sent = 0;
  // When this stream's window began, from the earliest window of any stream on
  // this side, in microseconds of this side's clock.
  double offset_us = 0;
  std::int64_t window_start_ns = 0;  // local only, never sent: this side's monotonic clock
  // Receiver only, with interval_ms: bytes per interval, the last one ending
  // with the transfer.
  std::vector<ByteInterval> intervals;
  // TCP_INFO at the transfer's end, the host's CPU split, the data thread's CPUs (optional).
  RunFacts facts;
  std::string error;  // empty, or why this side's part of the test failed

  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& m) {
    constexpr auto kMaxBytes = static_cast<double>(spec::kMaxTestBytes);
    constexpr auto kMaxInt = static_cast<double>(std::numeric_limits<int>::max());
    constexpr auto kMaxCount = static_cast<double>(spec::kMaxTransactions);
    w.field("role", m.role);
    w.field("bytes", m.bytes, kMaxBytes);
    w.field("elapsed_us", m.elapsed_us, protocol::kMaxElapsedUs);
    w.field("cpu_user_s", m.cpu_user_s, protocol::kMaxElapsedUs / 1e6);
    w.field("cpu_system_s", m.cpu_system_s, protocol::kMaxElapsedUs / 1e6);
    w.field("sndbuf_bytes", m.sndbuf_bytes, kMaxInt);
    w.field("rcvbuf_bytes", m.rcvbuf_bytes, kMaxInt);
    w.field("mss_bytes", m.mss_bytes, kMaxInt);
    w.field("congestion", m.congestion);
    w.field("ktls_send", m.ktls_send);
    w.field("ktls_receive", m.ktls_receive);
    w.field("tls_bytes", m.tls_bytes, 2 * kMaxBytes);
    w.field("read_calls", m.read_calls, kMaxBytes);
    w.field("write_calls", m.write_calls, kMaxBytes);
    w.object("calibration", m.calibration);
    w.object("transaction_calibration", m.transaction_calibration);
    w.field("messages", m.messages, kMaxBytes);
    w.field("payload_bytes", m.payload_bytes, kMaxBytes);
    w.field("stream", m.stream, spec::kMaxStreams - 1.0);
    w.later("connections", m.connections, kMaxCount);
    w.later("resumed", m.resumed, kMaxCount);
    w.later("failed", m.failed, kMaxCount);
    w.later("wire_bytes_sent", m.wire_bytes_sent, 2 * kMaxBytes);
    w.field("offset_us", m.offset_us, protocol::kMaxElapsedUs);
    w.rows("intervals", m.intervals, protocol::kMaxIntervals);
    w.field("facts", m.facts);
    w.field("error", m.error);
  }
  // What the fields cannot say on their own: at most as many resumed as
  // completed connections, intervals in order, their bytes adding up to no
  // more than `bytes`. Why not, or "".
  static std::string check(const SideResult& m);
};

}  // namespace tlscmp::kinds
