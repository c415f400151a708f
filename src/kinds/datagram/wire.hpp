#pragma once

// What each side of a datagram test tells the other at its end, and how it
// goes on the wire: one walk of the fields (protocol/fields.hpp) writes it
// and reads it back, each field held to its range.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "mode.hpp"
#include "protocol/fields.hpp"
#include "protocol/messages.hpp"
#include "run_facts.hpp"
#include "spec/spec.hpp"

namespace tlscmp::kinds {

// One sender's datagrams in a datagram test, as one side counted them.
struct SenderCount {
  std::uint32_t sender = 0;
  std::uint64_t packets = 0;  // sent; or received, each sequence number once
  std::uint64_t bytes = 0;    // their datagram bytes (payload as asked for, headers included)
  // From this side's start ("ready"): its first and last datagram, microseconds.
  double first_us = 0;
  double last_us = 0;
  std::uint64_t reordered = 0;   // receiver: came after a higher sequence number
  std::uint64_t duplicates = 0;  // receiver: a sequence number seen before

  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& c) {
    constexpr auto kMaxCount = static_cast<double>(spec::kMaxTestBytes);
    w.field("sender", c.sender, protocol::kMaxSenders - 1.0);
    w.field("packets", c.packets, kMaxCount);
    w.field("bytes", c.bytes, kMaxCount);
    w.field("first_us", c.first_us, protocol::kMaxElapsedUs);
    w.field("last_us", c.last_us, protocol::kMaxElapsedUs);
    w.field("reordered", c.reordered, kMaxCount);
    w.field("duplicates", c.duplicates, kMaxCount);
  }
};

// One interval of a datagram receiver's count (with -i); a row on the wire.
struct IntervalCount {
  double end_us = 0;           // from ready, on the receiver's clock
  std::uint64_t received = 0;  // distinct datagrams taken in during it
  std::uint64_t expected = 0;  // how far the senders' highest sequence numbers seen moved on during it

  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& i) {
    constexpr auto kMaxCount = static_cast<double>(spec::kMaxTestBytes);
    w.field("end_us", i.end_us, protocol::kMaxElapsedUs);
    w.field("received", i.received, kMaxCount);
    w.field("expected", i.expected, kMaxCount);
  }
};

// Either side -> the other at the end of a datagram test. The client sends
// its senders' counts once they have all finished; the server answers with
// what its receiver took in by then.
struct DatagramResult {
  static constexpr const char* kWireType = "datagram_result";
  Role role = Role::receiver;
  std::vector<SenderCount> senders;  // one per sender, in index order
  double elapsed_us = 0;             // first datagram to last, over every sender
  double cpu_user_s = 0;             // this side's CPU over the test (every sender thread, or the receiver)
  double cpu_system_s = 0;
  int sndbuf_bytes = 0;  // SO_SNDBUF the kernel applied (sender sockets)
  int rcvbuf_bytes = 0;  // SO_RCVBUF the kernel applied (receiver sockets)
  // Receiver only:
  std::uint64_t foreign =
      0;  // datagrams not of this test: short, wrong magic or tag, unknown sender, not authentic DTLS
  std::uint64_t kernel_drops =
      0;  // dropped by the kernel for a full receive buffer (SO_RXQ_OVFL, /proc/net/udp)
  // /proc/net/snmp Udp RcvbufErrors over the test, host-wide; none where it cannot be read (null on the
  // wire).
  std::optional<std::uint64_t> rcvbuf_errors;
  std::vector<IntervalCount> intervals;  // the receiver's, with -i; absent on the wire means none
  RunFacts facts;                        // the host's CPU split, the threads' CPUs (optional)
  std::string error;                     // empty, or why this side's part failed

  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& m) {
    constexpr auto kMaxCount = static_cast<double>(spec::kMaxTestBytes);
    constexpr auto kMaxInt = static_cast<double>(std::numeric_limits<int>::max());
    w.field("role", m.role);
    w.list("senders", m.senders, protocol::kMaxSenders);
    w.field("elapsed_us", m.elapsed_us, protocol::kMaxElapsedUs);
    w.field("cpu_user_s", m.cpu_user_s, protocol::kMaxElapsedUs / 1e6);
    w.field("cpu_system_s", m.cpu_system_s, protocol::kMaxElapsedUs / 1e6);
    w.field("sndbuf_bytes", m.sndbuf_bytes, kMaxInt);
    w.field("rcvbuf_bytes", m.rcvbuf_bytes, kMaxInt);
    w.field("foreign", m.foreign, kMaxCount);
    w.field("kernel_drops", m.kernel_drops, kMaxCount);
    w.field("rcvbuf_errors", m.rcvbuf_errors, kMaxCount);
    w.rows("intervals", m.intervals, protocol::kMaxIntervals);
    w.field("facts", m.facts);
    w.field("error", m.error);
  }
  // What the fields cannot say on their own: senders in index order, each
  // last datagram after its first, intervals in order and adding up to no
  // more than the senders' datagrams. Why not, or "".
  static std::string check(const DatagramResult& m);
};

}  // namespace tlscmp::kinds
