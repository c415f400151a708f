#include "protocol/datagram.hpp"

#include <cstring>

namespace tlscmp::protocol {
namespace {

constexpr std::byte kMagic0{'u'};
constexpr std::byte kMagic1{'T'};

}  // namespace

void encode_datagram_header(const DatagramHeader& header, std::span<std::byte, kDatagramHeaderBytes> out) {
  out[0] = kMagic0;
  out[1] = kMagic1;
  out[2] = static_cast<std::byte>(header.sender);
  out[3] = std::byte{0};
  std::memcpy(out.data() + 4, header.tag.data(), header.tag.size());
  set_datagram_sequence(out, header.sequence);
}

void set_datagram_sequence(std::span<std::byte, kDatagramHeaderBytes> header, std::uint32_t sequence) {
  header[8] = static_cast<std::byte>(sequence >> 24);
  header[9] = static_cast<std::byte>(sequence >> 16);
  header[10] = static_cast<std::byte>(sequence >> 8);
  header[11] = static_cast<std::byte>(sequence);
}

std::optional<DatagramHeader> decode_datagram_header(std::span<const std::byte> datagram) {
  if (datagram.size() < kDatagramHeaderBytes) return std::nullopt;
  if (datagram[0] != kMagic0 || datagram[1] != kMagic1 || datagram[3] != std::byte{0}) return std::nullopt;
  DatagramHeader header;
  header.sender = std::to_integer<std::uint8_t>(datagram[2]);
  std::memcpy(header.tag.data(), datagram.data() + 4, header.tag.size());
  header.sequence = (std::to_integer<std::uint32_t>(datagram[8]) << 24) |
                    (std::to_integer<std::uint32_t>(datagram[9]) << 16) |
                    (std::to_integer<std::uint32_t>(datagram[10]) << 8) |
                    std::to_integer<std::uint32_t>(datagram[11]);
  return header;
}

}  // namespace tlscmp::protocol
