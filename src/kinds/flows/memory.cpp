// A flows test's memory readings, as each side sends them and as they come
// out per flow, and what the loops' tallies add up to.

#include <algorithm>

#include "kinds/flows/loop.hpp"
#include "measure/clock.hpp"

namespace tlscmp::kinds {

MemoryReadings memory_readings(const measure::MemoryReading& before, const measure::MemoryReading& idle,
                               const measure::MemoryReading& after) {
  return {before.rss_bytes,        idle.rss_bytes,        after.rss_bytes,
          before.tcp_memory_pages, idle.tcp_memory_pages, after.tcp_memory_pages,
          before.heap_bytes,       idle.heap_bytes,       after.heap_bytes};
}

namespace {

// One reading of the three a side sends.
enum class ReadingWhen { before, idle, after };
measure::MemoryReading reading_at(const MemoryReadings& m, ReadingWhen when) {
  switch (when) {
    case ReadingWhen::before:
      return {m.rss_before, m.tcp_pages_before, m.heap_before};
    case ReadingWhen::idle:
      return {m.rss_idle, m.tcp_pages_idle, m.heap_idle};
    case ReadingWhen::after:
      break;
  }
  return {m.rss_after, m.tcp_pages_after, m.heap_after};
}

}  // namespace

FlowsMemory memory_per_flow(const MemoryReadings& m, std::uint64_t flows) {
  const measure::MemoryReading before = reading_at(m, ReadingWhen::before);
  const measure::PerConnection idle =
      measure::per_connection(before, reading_at(m, ReadingWhen::idle), flows);
  const measure::PerConnection after =
      measure::per_connection(before, reading_at(m, ReadingWhen::after), flows);
  return {idle.rss_bytes,  after.rss_bytes, idle.tcp_bytes,
          after.tcp_bytes, idle.heap_bytes, after.heap_bytes};
}

double traffic_window_us(const std::vector<LoopTally>& tallies) {
  std::int64_t first = INT64_MAX, last = 0;
  for (const LoopTally& t : tallies) {
    first = std::min(first, t.first_request_ns);
    last = std::max(last, t.last_response_ns);
  }
  return last > first ? measure::ns_to_us(last - first) : 0;
}

double loops_cpu_s(const FlowLoops& loops) {
  double total = 0;
  for (const auto& loop : loops)
    total += loop->cpu_s();
  return total;
}

}  // namespace tlscmp::kinds
