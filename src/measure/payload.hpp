#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace tlscmp::measure {

// The --verify payload: byte k of the stream is a function of the seed and k
// alone, so that the receiver can check any read at its offset without
// keeping state. Word w (bytes 8w..8w+7) is splitmix64(seed + w), little-endian.
class PayloadPattern {
 public:
  explicit PayloadPattern(std::uint64_t seed) : seed_(seed) {}

  // Writes the bytes at stream offsets offset .. offset + out.size() - 1.
  void fill(std::span<std::byte> out, std::uint64_t offset) const;
  // The stream offset of the first byte of `data` (which starts at `offset`)
  // that differs from the pattern; nothing if all match.
  std::optional<std::uint64_t> first_mismatch(std::span<const std::byte> data, std::uint64_t offset) const;

 private:
  std::uint64_t seed_;
};

// Without --verify the payload is one buffer of a fixed pattern, written over
// and over: any bytes will do, since nothing on the path compresses, and a
// pattern rather than zeros shows in a hexdump where data came from.
void fill_plain(std::span<std::byte> out);

}  // namespace tlscmp::measure
