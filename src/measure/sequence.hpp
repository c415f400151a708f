#pragma once

// Loss accounting for datagrams (seeds/002): each sender numbers its
// datagrams 0, 1, 2 ... in 32 bits that wrap; the receiver tracks what came.

#include <cstdint>
#include <vector>

namespace tlscmp::measure {

// One sender's datagrams, by sequence number. The 32-bit numbers are extended
// to 64 bits against the highest seen (a wrap is a step of 2^32), and the last
// kWindow numbers are remembered, to tell duplicates from late arrivals.
class SequenceTracker {
 public:
  static constexpr std::uint64_t kWindow = 1u << 16;

  SequenceTracker() : seen_(kWindow / 64, 0) {}

  void receive(std::uint32_t sequence);

  std::uint64_t received() const { return received_; }      // distinct datagrams
  std::uint64_t duplicates() const { return duplicates_; }  // a number already seen (within the window)
  std::uint64_t reordered() const { return reordered_; }    // came after a higher number
  // One past the highest extended number seen: how many the sender had sent by then.
  std::uint64_t span() const { return any_ ? highest_ + 1 : 0; }
  // Given what the sender says it sent.
  std::uint64_t lost(std::uint64_t sent) const { return sent > received_ ? sent - received_ : 0; }

 private:
  std::uint64_t extend(std::uint32_t sequence) const;
  bool test_and_set(std::uint64_t extended);

  bool any_ = false;
  std::uint64_t highest_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t duplicates_ = 0;
  std::uint64_t reordered_ = 0;
  std::vector<std::uint64_t> seen_;  // bit e % kWindow: number e was seen (e within the window)
};

}  // namespace tlscmp::measure
