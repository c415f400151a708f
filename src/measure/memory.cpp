#include "measure/memory.hpp"

#include <malloc.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace tlscmp::measure {
namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> difference(const std::optional<std::uint64_t>& before,
                                 const std::optional<std::uint64_t>& after, double unit,
                                 std::uint64_t count) {
  if (!before || !after || count == 0) return std::nullopt;
  return (static_cast<double>(*after) - static_cast<double>(*before)) * unit / static_cast<double>(count);
}

}  // namespace

std::uint64_t page_bytes() {
  static const auto bytes = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return bytes;
}

std::optional<std::uint64_t> parse_sockstat_tcp_pages(const std::string& sockstat) {
  std::istringstream lines(sockstat);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("TCP:", 0) != 0) continue;
    std::istringstream words(line.substr(4));
    std::string name;
    std::uint64_t value = 0;
    while (words >> name >> value) {
      if (name == "mem") return value;
    }
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_statm_resident_pages(const std::string& statm) {
  std::istringstream words(statm);
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (words >> size >> resident) return resident;
  return std::nullopt;
}

void release_free_memory() {
  ::malloc_trim(0);
}

MemoryReading read_memory() {
  MemoryReading reading;
  if (const auto pages = parse_statm_resident_pages(read_text("/proc/self/statm")))
    reading.rss_bytes = *pages * page_bytes();
  reading.tcp_memory_pages = parse_sockstat_tcp_pages(read_text("/proc/net/sockstat"));
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  // A sanitizer's allocator leaves glibc's counters at zero: none then.
  const struct mallinfo2 info = ::mallinfo2();
  if (const std::uint64_t used = static_cast<std::uint64_t>(info.uordblks) + info.hblkhd; used > 0)
    reading.heap_bytes = used;
#endif
  return reading;
}

PerConnection per_connection(const MemoryReading& before, const MemoryReading& after,
                             std::uint64_t connections) {
  return {difference(before.rss_bytes, after.rss_bytes, 1, connections),
          difference(before.tcp_memory_pages, after.tcp_memory_pages, static_cast<double>(page_bytes()),
                     connections),
          difference(before.heap_bytes, after.heap_bytes, 1, connections)};
}

}  // namespace tlscmp::measure
