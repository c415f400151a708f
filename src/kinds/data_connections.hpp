#pragma once

// Data connections, as the kinds that move data on connections of their own
// (stream, rr) set them up: the client connects (TLS: and shakes hands, timed
// on its own), sends the preamble, the test's cookie and the connection's
// index; the server matches them to the test (session::PendingTests) and, once
// all have come, sends kReadyByte on each.

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "measure/results.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "session/pending_tests.hpp"
#include "session/server_side.hpp"
#include "tls/context.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

inline constexpr std::byte kReadyByte{'R'};

// Connection i's share of `total` (transactions, connections) over `count`
// connections: as even as it gets, 301 over 3 is 101, 100, 100.
inline std::uint64_t share(std::uint64_t total, std::uint32_t count, std::uint32_t i) {
  return total / count + (i < total % count ? 1 : 0);
}

struct DataConnections {
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<double> handshake_us;  // each one's TCP connect plus TLS handshake
  // From the first connect to the last ready byte: the test's set-up, its
  // connections `at_once` at a time (8 where the round trip is 1 ms or
  // more, else 1).
  double setup_us = 0;
  std::uint32_t at_once = 1;
};

// Client: opens `count` data connections to the test the server accepted
// (`mode` tls: with `tls`), and waits for the ready byte on each. Where the
// server refused a connection, its reason (read from `control`) is the error.
// Throws tlscmp::Error.
DataConnections open_data_connections(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                                      const protocol::TestAccept& accept, std::uint32_t count,
                                      Stream& control);

// Client: one connection to the server, its TLS or QUIC handshake done
// (offering `resume` where it holds a session; the record size as
// --record-size asks), the time of both in `handshake_us`; not yet said to
// the server. A failed handshake throws tlscmp::Error saying why.
std::unique_ptr<Stream> connect_data_stream(const session::ClientConfig& config, const tls::Context* tls,
                                            Mode mode, const protocol::TestAccept& accept, int control_fd,
                                            double& handshake_us, const tls::Session& resume = {});

// What a TLS data connection negotiated; empty for plain TCP.
measure::TlsParameters tls_parameters(const Stream& stream, std::uint32_t record_size);

// Server: room for the test's request.test.streams data connections beside the
// shared caps (ServerSide::reserve_connections), for as long as the token
// lives; or the test is refused with why not. Before the acceptance.
std::shared_ptr<void> reserve_data_connections(Stream& control, const protocol::TestRequest& request,
                                               session::ServerSide& side);

// Server: waits for the test's request.test.streams data connections, noticing a
// client that gave up meanwhile. Refuses the test (session::refuse_test) when not
// all came in time or one is not of the test's mode.
std::vector<std::unique_ptr<Stream>> await_data_connections(Stream& control,
                                                            const protocol::TestRequest& request,
                                                            session::ServerSide& side,
                                                            session::PendingTests::Ticket& ticket);

// Server: the ready byte on a matched data connection. Throws tlscmp::Error.
void send_ready(Stream& stream, std::chrono::milliseconds timeout);

}  // namespace tlscmp::kinds
