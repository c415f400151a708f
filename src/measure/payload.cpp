#include "measure/payload.hpp"

#include <array>
#include <cstring>

namespace tlscmp::measure {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::byte byte_of(std::uint64_t word, std::uint64_t index) {
  return static_cast<std::byte>(word >> (8 * index));
}

}  // namespace

void PayloadPattern::fill(std::span<std::byte> out, std::uint64_t offset) const {
  std::size_t i = 0;
  // Head: up to the next word boundary.
  while (i < out.size() && (offset + i) % 8 != 0) {
    out[i] = byte_of(splitmix64(seed_ + (offset + i) / 8), (offset + i) % 8);
    ++i;
  }
  // Whole words.
  for (; i + 8 <= out.size(); i += 8) {
    const std::uint64_t word = splitmix64(seed_ + (offset + i) / 8);
    std::array<std::byte, 8> bytes{};
    for (std::size_t b = 0; b < 8; ++b)
      bytes[b] = byte_of(word, b);
    std::memcpy(out.data() + i, bytes.data(), 8);
  }
  // Tail.
  for (; i < out.size(); ++i)
    out[i] = byte_of(splitmix64(seed_ + (offset + i) / 8), (offset + i) % 8);
}

std::optional<std::uint64_t> PayloadPattern::first_mismatch(std::span<const std::byte> data,
                                                            std::uint64_t offset) const {
  std::array<std::byte, 4096> expected{};
  for (std::size_t done = 0; done < data.size();) {
    const std::size_t n = std::min(expected.size(), data.size() - done);
    fill({expected.data(), n}, offset + done);
    if (std::memcmp(expected.data(), data.data() + done, n) != 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if (expected[i] != data[done + i]) return offset + done + i;
      }
    }
    done += n;
  }
  return std::nullopt;
}

void fill_plain(std::span<std::byte> out) {
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>('a' + i % 26);
}

}  // namespace tlscmp::measure
