#pragma once

#include <chrono>
#include <climits>

namespace tlscmp {

using SteadyClock = std::chrono::steady_clock;

// An absolute point in time by which a blocking step must be done.
class Deadline {
 public:
  static Deadline after(std::chrono::milliseconds timeout) { return Deadline(SteadyClock::now() + timeout); }
  static Deadline never() { return Deadline(SteadyClock::time_point::max()); }

  static Deadline earlier(Deadline a, Deadline b) { return a.at_ < b.at_ ? a : b; }

  bool expired() const { return SteadyClock::now() >= at_; }

  // Milliseconds left, clamped to [0, INT_MAX], in the unit poll(2) takes.
  int remaining_ms() const {
    if (at_ == SteadyClock::time_point::max()) return INT_MAX;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(at_ - SteadyClock::now()).count();
    if (left <= 0) return 0;
    return left > INT_MAX ? INT_MAX : static_cast<int>(left);
  }

  SteadyClock::time_point at() const { return at_; }

 private:
  explicit Deadline(SteadyClock::time_point at) : at_(at) {}
  SteadyClock::time_point at_;
};

}  // namespace tlscmp
