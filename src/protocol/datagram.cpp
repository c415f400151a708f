#include "protocol/datagram.hpp"

#include <cstring>

#include "byte_order.hpp"

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
  store_big_u32(header.data() + 8, sequence);
}

std::optional<DatagramHeader> decode_datagram_header(std::span<const std::byte> datagram) {
  if (datagram.size() < kDatagramHeaderBytes) return std::nullopt;
  if (datagram[0] != kMagic0 || datagram[1] != kMagic1 || datagram[3] != std::byte{0}) return std::nullopt;
  DatagramHeader header;
  header.sender = std::to_integer<std::uint8_t>(datagram[2]);
  std::memcpy(header.tag.data(), datagram.data() + 4, header.tag.size());
  header.sequence = load_big_u32(datagram.data() + 8);
  return header;
}

}  // namespace tlscmp::protocol
