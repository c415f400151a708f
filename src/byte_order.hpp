#pragma once

// Big-endian (network order) integers in byte buffers, through Boost.Endian:
// the wire formats (control frames, data-connection headers, datagram
// headers, len4 message prefixes) all use these.

#include <cstddef>
#include <cstdint>

#include <boost/endian/conversion.hpp>

namespace tlscmp {

inline std::uint16_t load_big_u16(const std::byte* p) {
  return boost::endian::load_big_u16(reinterpret_cast<const unsigned char*>(p));
}
inline std::uint32_t load_big_u32(const std::byte* p) {
  return boost::endian::load_big_u32(reinterpret_cast<const unsigned char*>(p));
}
inline void store_big_u16(std::byte* p, std::uint16_t value) {
  boost::endian::store_big_u16(reinterpret_cast<unsigned char*>(p), value);
}
inline void store_big_u32(std::byte* p, std::uint32_t value) {
  boost::endian::store_big_u32(reinterpret_cast<unsigned char*>(p), value);
}

}  // namespace tlscmp
