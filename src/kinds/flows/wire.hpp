#pragma once

// What each side of a flows test tells the other at its end, and how it goes
// on the wire: one walk of the fields (protocol/fields.hpp) writes it and
// reads it back, each field held to its range.

#include <cstdint>
#include <optional>
#include <string>

#include "mode.hpp"
#include "protocol/fields.hpp"
#include "protocol/messages.hpp"
#include "run_facts.hpp"
#include "spec/spec.hpp"

namespace tlscmp::kinds {

// The memory readings of a many-connection test on one side, each none
// where /proc could not be read: this process's resident set and the
// kernel's TCP pages, before the first flow, with every flow established and
// idle, and after the traffic (flows still held).
struct MemoryReadings {
  std::optional<std::uint64_t> rss_before, rss_idle, rss_after;
  std::optional<std::uint64_t> tcp_pages_before, tcp_pages_idle, tcp_pages_after;
  // The allocator's bytes in use (measure::MemoryReading::heap_bytes).
  std::optional<std::uint64_t> heap_before, heap_idle, heap_after;

  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& m) {
    constexpr double kMaxMemory = 0x1p50;
    w.field("rss_before", m.rss_before, kMaxMemory);
    w.field("rss_idle", m.rss_idle, kMaxMemory);
    w.field("rss_after", m.rss_after, kMaxMemory);
    w.field("tcp_pages_before", m.tcp_pages_before, kMaxMemory);
    w.field("tcp_pages_idle", m.tcp_pages_idle, kMaxMemory);
    w.field("tcp_pages_after", m.tcp_pages_after, kMaxMemory);
    w.field("heap_before", m.heap_before, kMaxMemory);
    w.field("heap_idle", m.heap_idle, kMaxMemory);
    w.field("heap_after", m.heap_after, kMaxMemory);
  }
};

// Either side -> the other at the end of a flows test: what this side's
// event loops did over every flow. The client sends its own once its last
// transaction is done; the server answers.
struct FlowsResult {
  static constexpr const char* kWireType = "flows_result";
  Role role = Role::sender;        // the client: sender (of requests); the server: receiver
  std::uint64_t flows = 0;         // established on this side
  std::uint64_t failed = 0;        // flows that failed on this side
  std::uint64_t transactions = 0;  // client: responses taken in whole; server: responses sent
  double elapsed_us = 0;           // this side's window of traffic
  double cpu_s = 0;                // its event loops' CPU in the window, user and system
  double establish_us = 0;         // the first flow's connect (accept) to the last one established
  std::uint32_t threads = 0;       // event loops on this side
  MemoryReadings memory;
  std::string error;  // empty, or why this side's part failed (the first flow's failure)
  // QUIC: the client's datagrams over its connections; the server's port's
  // over the test, every connection's on it.
  RunFacts facts;

  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& m) {
    constexpr auto n = [](auto v) { return static_cast<double>(v); };
    w.field("role", m.role);
    w.field("flows", m.flows, n(spec::kMaxFlows));
    w.field("failed", m.failed, n(spec::kMaxFlows));
    w.field("transactions", m.transactions, n(spec::kMaxTransactions));
    w.field("elapsed_us", m.elapsed_us, protocol::kMaxElapsedUs);
    w.field("cpu_s", m.cpu_s, protocol::kMaxElapsedUs / 1e6 * spec::kMaxFlowThreads);
    w.field("establish_us", m.establish_us, protocol::kMaxElapsedUs);
    w.field("threads", m.threads, n(spec::kMaxFlowThreads));
    MemoryReadings::walk(w, m.memory);
    w.field("error", m.error);
    w.field("facts", m.facts);
  }
};

}  // namespace tlscmp::kinds
