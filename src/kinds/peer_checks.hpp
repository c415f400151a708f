#pragma once

// What a peer reports, judged against what this side saw. After a run both
// halves exchange their results; figures that cannot be true (bytes this
// side never sent, a transfer of 0 us, a window longer than the whole run
// took here, more CPU on one thread than wall time) fail the run, with one
// line that names the figure:
//
//   the server reports CLAIM, but SEEN: the peer's figures disagree (server_results FIGURE)
//
// FIGURE is the field as `server --results` records it (client_results or
// server_results, with [i] for the i-th of several streams or connections).
// Each kind judges its own figures in one function (its checks.cpp) with
// these pieces; docs/server.md says what must hold for each.

#include <cstdint>
#include <string>
#include <string_view>

#include "kinds/side_result.hpp"
#include "measure/clock.hpp"
#include "protocol/messages.hpp"

namespace tlscmp::kinds {

// Whose figures are judged: the other side's.
enum class Peer : std::uint8_t { client, server };

// How much longer than this side's clock of the run a peer's window may
// be: 1% for two hosts' clocks running at slightly different rates (NTP
// slews CLOCK_MONOTONIC by 0.05% at most), and 10 ms for the granularity of
// CPU accounting and the rounding of microseconds on the wire.
inline constexpr double kPeerClockRateSlack = 0.01;
inline constexpr double kPeerClockSlackUs = 10'000;

// This side's clock of one run: started as the run starts here (the client
// before it connects, the server as the request has come), read once the
// peer's results are in. Every window the peer measured lies inside it.
class RunClock {
 public:
  RunClock() : start_ns_(measure::now_ns()) {}
  double elapsed_us() const { return measure::ns_to_us(measure::now_ns() - start_ns_); }

 private:
  std::int64_t start_ns_;
};

// The judge of one peer's results in one run: who the peer is, how long the
// run took here, and how many streams or connections it had (for naming).
class PeerJudge {
 public:
  PeerJudge(Peer peer, double wall_us, std::uint32_t parts = 1)
      : peer_(peer), wall_us_(wall_us), parts_(parts) {}

  Peer peer() const { return peer_; }
  const char* peer_name() const { return peer_ == Peer::server ? "server" : "client"; }
  // This side, as the lines name it: "this client", "this server".
  const char* here() const { return peer_ == Peer::server ? "this client" : "this server"; }
  double wall_us() const { return wall_us_; }
  // The longest a window of the peer's may last: this side's clock of the
  // run (or `at_least_us`, a window the peer keeps by design, if longer)
  // with its slack.
  double allowed_us(double at_least_us = 0) const;

  // "the server reports CLAIM, but SEEN: the peer's figures disagree
  // (server_results[PART] FIELD)"; PART only where the run had several.
  std::string disagree(std::string_view claim, std::string_view seen, std::string_view field,
                       std::uint32_t part = 0) const;

  // A window the peer measured, `elapsed_us` long and ending `end_us` after
  // its side's first window began (offset_us + elapsed_us): not 0 where it
  // `moved` something, and within allowed_us(at_least_us). `claim` says
  // what it moved ("receiving 8388608 bytes in 5321 us"). "" when it holds.
  std::string check_window(std::string_view claim, double elapsed_us, double end_us, bool moved,
                           std::string_view field, std::uint32_t part = 0, double at_least_us = 0) const;

  // CPU seconds the peer's `threads` threads spent, user and system: no
  // more than wall time each. `what` says whose ("on the thread of stream
  // 1"). "" when it holds.
  std::string check_cpu(double user_s, double system_s, std::uint32_t threads, std::string_view what,
                        std::uint32_t part = 0) const;

 private:
  Peer peer_;
  double wall_us_;
  std::uint32_t parts_;
};

// Whether `bytes` is exactly `count` pieces of `size` bytes, found without
// overflowing whatever a peer sent.
inline bool bytes_are_pieces(std::uint64_t bytes, std::uint64_t count, std::uint64_t size) {
  return size == 0 ? bytes == 0 : bytes % size == 0 && bytes / size == count;
}

// Receiver intervals (-i) of a stream-like side: they add up to its
// `bytes` and end within the run. "" when they do.
std::string check_intervals(const PeerJudge& judge, const SideResult& theirs);

}  // namespace tlscmp::kinds
