#include "kinds/side_result.hpp"

#include <fmt/format.h>

namespace tlscmp::kinds {

std::string SideResult::check(const SideResult& m) {
  if (m.resumed > m.connections)
    return fmt::format("'resumed' = {} is more than the {} connections", m.resumed, m.connections);
  std::uint64_t sum = 0;
  double previous_end = 0;
  for (const ByteInterval& interval : m.intervals) {
    if (interval.end_us < previous_end) return "interval ends out of order";
    previous_end = interval.end_us;
    if (interval.bytes > spec::kMaxTestBytes - sum) return "interval bytes add up to too many";
    sum += interval.bytes;
  }
  if (sum > m.bytes) return "interval bytes add up to more than 'bytes'";
  return {};
}

}  // namespace tlscmp::kinds
