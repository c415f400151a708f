#pragma once

// The header every tlscmp datagram starts with (udp and dtls tests), so that
// the receiver can tell whose it is and count what was lost. Pure functions
// on byte spans.
//
//   0   2 bytes  magic "uT"
//   2   1 byte   sender index, 0..senders-1
//   3   1 byte   flags, 0 (reserved)
//   4   4 bytes  test tag: the first 4 bytes of the test's cookie
//   8   4 bytes  sequence number, big-endian; each sender counts 0, 1, 2 ... and wraps
//
// The rest of the datagram, up to the size asked for, is zeros.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace tlscmp::protocol {

inline constexpr std::size_t kDatagramHeaderBytes = 12;
// The largest UDP payload over IPv4 (65535 - 20 - 8): a larger datagram
// cannot leave the host (EMSGSIZE).
inline constexpr std::uint32_t kMaxUdpDatagramBytes = 65507;
// DTLS carries each datagram in one record, whose plaintext is at most 2^14.
inline constexpr std::uint32_t kMaxDtlsDatagramBytes = 16384;
// Senders in one datagram test (-P); the index is one byte.
inline constexpr std::uint32_t kMaxSenders = 64;

using DatagramTag = std::array<std::byte, 4>;

struct DatagramHeader {
  std::uint8_t sender = 0;
  DatagramTag tag{};
  std::uint32_t sequence = 0;
};

void encode_datagram_header(const DatagramHeader& header, std::span<std::byte, kDatagramHeaderBytes> out);
// Sets only the sequence number of an encoded header: the sender's hot path.
void set_datagram_sequence(std::span<std::byte, kDatagramHeaderBytes> header, std::uint32_t sequence);
// nullopt: not a tlscmp datagram (shorter than the header, wrong magic, flags set).
std::optional<DatagramHeader> decode_datagram_header(std::span<const std::byte> datagram);

}  // namespace tlscmp::protocol
