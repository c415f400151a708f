#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "protocol/messages.hpp"
#include "transport/deadline.hpp"
#include "transport/stream.hpp"

namespace tlscmp::session {

// Hands data connections to the control sessions waiting for them. A control
// session opens a ticket (a fresh random cookie); the thread that accepted a
// data connection delivers its stream by cookie; the session takes it.
class PendingTests {
 public:
  // What a test of a connection per transaction (crr) keeps of its
  // connections: each kind derives its own; the threads that serve the
  // connections find it by cookie (sink()).
  class ConnectionSink {
   public:
    virtual ~ConnectionSink() = default;
  };

  class Ticket {
   public:
    Ticket(PendingTests& owner, protocol::Cookie cookie) : owner_(owner), cookie_(cookie) {}
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket();  // forgets the cookie; a stream delivered but never taken is closed

    const protocol::Cookie& cookie() const { return cookie_; }
    // Every stream of the test, in index order, once all have come; nothing
    // if the deadline passes first (or the server cancels), and those that
    // came stay with the ticket for a later wait.
    std::optional<std::vector<std::unique_ptr<Stream>>> wait(Deadline deadline);
    // How many of the test's data connections have come so far.
    std::uint32_t arrived() const;
    // Handshake tests: how many handshake connections came with this cookie.
    std::uint64_t probes() const;

   private:
    PendingTests& owner_;
    protocol::Cookie cookie_;
  };

  // A test expecting `streams` data connections; or, with `handshakes` > 0, a
  // handshake test's ticket, which takes up to that many handshake
  // connections (probe) and no data stream.
  // With `keeps_connections`, the streams a QUIC data connection opens after
  // the one it delivered are the test's to take (rr's --stream-per-tx).
  std::unique_ptr<Ticket> open(std::uint32_t streams = 1, std::uint64_t handshakes = 0,
                               bool keeps_connections = false);
  // A crr test's ticket: its connections find `sink` by the cookie.
  std::unique_ptr<Ticket> open(std::shared_ptr<ConnectionSink> sink);
  // The sink of a running crr test with this cookie, or null.
  std::shared_ptr<ConnectionSink> sink(const protocol::Cookie& cookie) const;
  // False if no session waits for this cookie, or the index is out of range or already taken.
  bool deliver(const protocol::Cookie& cookie, std::uint32_t index, std::unique_ptr<Stream> stream);
  // How many of the test's data streams have not come yet; 0 once all have,
  // or if no session waits for this cookie.
  std::uint32_t missing(const protocol::Cookie& cookie) const;
  // Whether the test with this cookie takes its QUIC connections' later streams.
  bool keeps_connections(const protocol::Cookie& cookie) const;
  // Counts one handshake connection; false unless the cookie belongs to a
  // running handshake test that expects more.
  bool probe(const protocol::Cookie& cookie);
  // Wakes every waiting session empty-handed, now and from now on (server shutdown).
  void cancel_all();

 private:
  struct Slot {
    std::vector<std::unique_ptr<Stream>> streams;  // by index
    std::uint32_t arrived = 0;
    std::uint64_t handshakes = 0;  // > 0: a handshake test, expecting this many
    std::uint64_t probes = 0;
    bool keeps_connections = false;
    std::shared_ptr<ConnectionSink> sink;  // a crr test's
  };
  mutable std::mutex mutex_;
  std::condition_variable delivered_;
  std::map<protocol::Cookie, Slot> slots_;
  bool cancelled_ = false;
};

}  // namespace tlscmp::session
