#pragma once

// The data path: what each side does on a data connection once the server has
// matched it to its test, and which bytes mark the phases.
//
//   server -> client   'R'  the data connection is matched to its test
//   receiver -> sender 'G'  go: the receiver's clock starts as it sends this
//   sender -> receiver      the payload: exactly `bytes` bytes, or whatever the
//                           sender sends in `duration`; then end of stream
//                           (TLS close_notify, TCP FIN)

#include <chrono>
#include <cstdint>
#include <optional>

#include "kinds/side_result.hpp"
#include "measure/intervals.hpp"
#include "protocol/messages.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

inline constexpr std::byte kGoByte{'G'};

struct TransferSpec {
  Role role = Role::sender;
  std::uint64_t bytes = 0;                // payload bytes to move; 0: send for `duration`
  std::chrono::milliseconds duration{0};  // with bytes == 0: how long the sender sends
  std::uint32_t chunk_bytes = 0;          // bytes per write, and the most asked of one read
  bool no_delay = false;                  // TCP_NODELAY while the payload flows
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds interval{0};      // receiver: record intervals this long (0: none)
  std::optional<std::uint64_t> verify_seed;   // payload from this pattern, checked by the receiver
  std::chrono::milliseconds max_duration{0};  // the server's --max-duration: past it the test fails
  std::uint64_t min_rate = 0;  // the server's --min-rate: bytes a second over each idle timeout, or it fails
  framing::Framing framing = framing::Framing::raw;
  std::uint64_t msg_size = 0;  // > 0: the payload is messages of this size (bytes: rounded up to whole ones)
  std::uint64_t max_msg = framing::kMaxMessageBytes;  // the receiver refuses longer length prefixes
  std::uint32_t read_size = 0;                        // the receiver's read call size; 0: chunk_bytes
  measure::TransferObserver* observer = nullptr;      // may be null
};

// The stream bytes a byte-count test moves: `bytes`, or with messages the
// whole messages that carry at least `bytes`, headers included. 0 when timed.
std::uint64_t stream_bytes(const TransferSpec& spec);

// What the test request asks of the side playing `role`.
TransferSpec transfer_spec(const protocol::TestRequest& request, Role role,
                           std::chrono::milliseconds idle_timeout);

// Runs this side's part of the transfer on `stream`, starting right after the
// ready byte. Never throws for network outcomes: a failure is reported in
// SideResult::error, with the bytes moved until then.
SideResult run_transfer(Stream& stream, const TransferSpec& spec);

}  // namespace tlscmp::kinds
