#pragma once

// What a test kind's server half may use of the server, and no more: its
// settings and caps, the acceptance to send, a ticket for the data or
// handshake connections its client will open, and a way to register a live
// socket, so that a stopping server can shut it down. A kind never sees the
// Server itself.

#include <chrono>
#include <functional>
#include <memory>
#include <utility>

#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "session/pending_tests.hpp"
#include "stacks/stack.hpp"
#include "tls/context.hpp"

namespace tlscmp::session {

// A timed test's last connections and transactions may end this long after its time.
inline constexpr std::chrono::seconds kTimedDrainGrace{1};

class ServerSide {
 public:
  // A socket registered as live until this goes (declare it after the socket's owner).
  class LiveSocket {
   public:
    explicit LiveSocket(std::function<void()> unregister) : unregister_(std::move(unregister)) {}
    ~LiveSocket() {
      if (unregister_) unregister_();
    }
    LiveSocket(LiveSocket&& other) noexcept : unregister_(std::exchange(other.unregister_, nullptr)) {}
    LiveSocket(const LiveSocket&) = delete;
    LiveSocket& operator=(const LiveSocket&) = delete;
    LiveSocket& operator=(LiveSocket&&) = delete;

   private:
    std::function<void()> unregister_;
  };

  // The server's settings: timeouts and caps (--max-duration, --max-msg ...).
  virtual const ServerConfig& config() const = 0;
  // The acceptance to send for a test with this cookie: the server's version,
  // library, CPU, kernel and TLS offer.
  virtual protocol::TestAccept acceptance(const protocol::Cookie& cookie) const = 0;
  // A ticket for `streams` data connections, or with `handshakes` > 0 for up
  // to that many handshake connections; with `keeps_connections`, a QUIC
  // connection's later streams are the test's own (see PendingTests).
  virtual std::unique_ptr<PendingTests::Ticket> open_ticket(std::uint32_t streams, std::uint64_t handshakes,
                                                            bool keeps_connections = false) = 0;
  // A ticket for a crr test, whose connections find `sink` by its cookie.
  virtual std::unique_ptr<PendingTests::Ticket> open_ticket(
      std::shared_ptr<PendingTests::ConnectionSink> sink) = 0;
  // Room for `count` connections of this test's client, beside the shared
  // --max-pending caps, for as long as the token lives; null, with `busy`
  // saying why, where the server's connection caps cannot take them (a
  // kind refuses the test with it). Reserve before the acceptance is sent.
  virtual std::shared_ptr<void> reserve_connections(std::uint32_t count, std::string& busy) = 0;
  // The same for the buffers a test holds (--max-memory, all tests together).
  virtual std::shared_ptr<void> reserve_memory(std::uint64_t bytes, std::string& busy) = 0;
  // Makes the server offer a certificate of `key_type` under its
  // protocol::key_type_server_name, signed by its issuer, once. Throws
  // tlscmp::Error saying why it cannot (no issuer, an unknown type).
  virtual void prepare_key_type(const std::string& key_type) = 0;
  // Room for a many-connection test's `count` flows, for as long as the
  // token lives: within --max-flows a test, and within what the server's
  // descriptors hold beside --max-connections for all such tests together.
  // Its client's connections are taken within this budget, not within the
  // caps on connections being set up: from the control connection's
  // address, or shared among `sources` where the client names several.
  // Null, with `busy` saying why, where they do not fit.
  // `mode`: the flows' stack; those of a listener whose library does not
  // name their peers (QUIC on OpenSSL 3.5) come from one source.
  virtual std::shared_ptr<void> reserve_flows(std::uint32_t count, const std::vector<std::string>& sources,
                                              Mode mode, std::string& busy) = 0;
  // A stack's part of the server (its datagram context: DTLS's), or null
  // where the stack has none.
  virtual const stacks::ServerPart* stack_part(Mode mode) const = 0;
  virtual LiveSocket register_live(int fd) = 0;
  // True once the server is shutting down: waits end early.
  virtual bool stopping() = 0;
  // What the test measured, this side's and the client's as it sent them
  // (empty where it never came), for server --results.
  // A peer's results that never came are missing from `theirs`.
  virtual void record(const std::vector<protocol::KindResult>& mine,
                      const std::vector<protocol::KindResult>& theirs) = 0;
  template <protocol::KindResultType T>
  void record(const std::vector<T>& mine, const std::vector<T>& theirs) {
    std::vector<protocol::KindResult> m, t;
    for (const T& r : mine)
      m.push_back(protocol::kind_result(r));
    for (const T& r : theirs)
      t.push_back(protocol::kind_result(r));
    record(m, t);
  }
  template <protocol::KindResultType T>
  void record(const T& mine, const T& theirs) {
    record({protocol::kind_result(mine)}, {protocol::kind_result(theirs)});
  }

 protected:
  ServerSide() = default;
  ~ServerSide() = default;
  ServerSide(const ServerSide&) = default;
  ServerSide& operator=(const ServerSide&) = default;
};

}  // namespace tlscmp::session
