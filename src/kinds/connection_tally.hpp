#pragma once

// The server half of a test whose connections come and go (crr; http with
// --requests-per-connection): each connection is served by the thread that
// accepted it, found by its cookie (session::PendingTests' sink), and adds
// its part to the test's tally; the control session waits for the client's
// count meanwhile, then reads the totals.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kinds/side_result.hpp"
#include "protocol/messages.hpp"
#include "session/pending_tests.hpp"
#include "session/server_side.hpp"
#include "tls/tls_stream.hpp"
#include "transport/deadline.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

class ConnectionTally : public session::PendingTests::ConnectionSink {
 public:
  struct Totals {
    std::uint64_t connections = 0;  // completed
    std::uint64_t resumed = 0;      // of them, those that resumed a session (TLS)
    std::uint64_t failed = 0;
    std::uint64_t requests = 0;  // answered over the completed and failed ones
    std::uint64_t bytes_received = 0;
    std::uint64_t bytes_sent = 0;
    double cpu_s = 0;
    std::string first_failure;
    std::uint64_t events = 0;  // connections begun and ended: any change shows progress
    // QUIC: the server's port's datagrams from the first connection's start
    // to the last one's end (every connection's on the port meanwhile, as
    // a bulk run's port counts are); none over TCP.
    std::optional<UdpPath> port;
  };
  // One connection's part, as it ends.
  struct Ended {
    std::string failure;  // "" when it completed
    bool resumed = false;
    std::uint64_t requests = 0;
    std::uint64_t received = 0;
    std::uint64_t sent = 0;
    double cpu_s = 0;
  };

  // A connection begins; false once the test takes no more.
  bool begin();
  // A connection that began has ended.
  void end(const Ended& ended);
  // The port's datagram counts as a connection starts or ends (QUIC:
  // Stream::port_path; none elsewhere): the first and the last are kept.
  void note_port(const std::optional<UdpPath>& now);
  // Takes no more connections (its time is up, or the client is done).
  void close();
  // The totals, once no connection is in flight (or the deadline passed).
  Totals settle(Deadline deadline);
  std::uint64_t events() const;
  // A TLS connection that completed: the first one's parameters are kept,
  // for this side's calibration (kTLS's are not: its records are the kernel's).
  void note_tls(const tls::SessionInfo& info);
  bool has_tls() const;
  std::optional<tls::SessionInfo> tls() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  bool closed_ = false;
  int in_flight_ = 0;
  Totals totals_;
  std::optional<tls::SessionInfo> tls_;
  std::optional<UdpPath> first_port_, last_port_;
};

// This side's count from the totals, as the server sends it: connections
// completed, resumed and failed, the bytes each way, the threads' CPU (user
// and system together: see measure::thread_cpu_s), over `elapsed_us`.
SideResult server_count(const ConnectionTally::Totals& totals, double elapsed_us);

// The control session's wait for the client's count, watching the tally:
// a client that makes no connection for the idle timeout is gone (throws
// Error naming `what`, "crr tls"), as is a server that stops; a test past
// --max-duration takes no more, and the returned line says so ("" else).
// The count itself is the caller's to read when this returns.
std::string await_client_count(Stream& control, ConnectionTally& tally, const protocol::TestRequest& request,
                               session::ServerSide& side, std::string_view what);

}  // namespace tlscmp::kinds
