#pragma once

#include <chrono>
#include <cstdint>

namespace tlscmp::measure {

// Monotonic nanoseconds (CLOCK_MONOTONIC): the one clock every interval is read from.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Wall-clock nanoseconds since the Unix epoch (CLOCK_REALTIME): for times
// hosts agree on (--start-at), never for intervals.
inline std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline double ns_to_us(std::int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}

}  // namespace tlscmp::measure
