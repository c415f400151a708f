#include "measure/sequence.hpp"

#include <algorithm>

namespace tlscmp::measure {

std::uint64_t SequenceTracker::extend(std::uint32_t sequence) const {
  constexpr std::uint64_t kWrap = std::uint64_t{1} << 32;
  constexpr std::uint64_t kHalf = kWrap / 2;
  std::uint64_t candidate = (highest_ & ~(kWrap - 1)) | sequence;
  if (candidate + kHalf < highest_) {
    candidate += kWrap;  // wrapped past the top
  } else if (candidate > highest_ + kHalf && candidate >= kWrap) {
    candidate -= kWrap;  // a late one from before the last wrap
  }
  return candidate;
}

bool SequenceTracker::test_and_set(std::uint64_t extended) {
  const std::uint64_t bit = extended % kWindow;
  std::uint64_t& word = seen_[bit / 64];
  const std::uint64_t mask = std::uint64_t{1} << (bit % 64);
  const bool was = (word & mask) != 0;
  word |= mask;
  return was;
}

void SequenceTracker::receive(std::uint32_t sequence) {
  if (!any_) {
    any_ = true;
    highest_ = sequence;
    test_and_set(highest_);
    ++received_;
    return;
  }
  const std::uint64_t e = extend(sequence);
  if (e > highest_) {
    // Forget what falls out of the window as it slides forward.
    const std::uint64_t step = e - highest_;
    if (step >= kWindow) {
      std::fill(seen_.begin(), seen_.end(), 0);
    } else {
      for (std::uint64_t n = highest_ + 1; n <= e; ++n) {
        seen_[(n % kWindow) / 64] &= ~(std::uint64_t{1} << (n % kWindow % 64));
      }
    }
    highest_ = e;
    test_and_set(e);
    ++received_;
    return;
  }
  if (highest_ - e >= kWindow) {
    ++reordered_;  // too old to tell: taken as a late arrival
    ++received_;
    return;
  }
  if (test_and_set(e)) {
    ++duplicates_;
  } else {
    ++reordered_;
    ++received_;
  }
}

}  // namespace tlscmp::measure
