#pragma once

// The data path: what each side does on a data connection once the server has
// matched it to its test, and which bytes mark the phases.
//
//   server -> client  'R'  the data connection is matched to its test
//   receiver -> sender 'G' go: the receiver's clock starts as it sends this
//   sender -> receiver       exactly `bytes` payload bytes, then end of stream
//                            (TLS close_notify, TCP FIN)

#include <chrono>
#include <cstdint>

#include "protocol/messages.hpp"
#include "transport/stream.hpp"

namespace tlscmp::app {

inline constexpr std::byte kReadyByte{'R'};
inline constexpr std::byte kGoByte{'G'};

struct TransferSpec {
  Role role = Role::sender;
  std::uint64_t bytes = 0;        // payload bytes to move
  std::uint32_t chunk_bytes = 0;  // bytes per write, and the most asked of one read
  bool no_delay = false;          // TCP_NODELAY while the payload flows
  std::chrono::milliseconds idle_timeout{30'000};
};

// Runs this side's part of the transfer on `stream`, starting right after the
// ready byte. Never throws for network outcomes: a failure is reported in
// SideResult::error, with the bytes moved until then.
protocol::SideResult run_transfer(Stream& stream, const TransferSpec& spec);

}  // namespace tlscmp::app
