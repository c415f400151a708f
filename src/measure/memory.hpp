#pragma once

// What connections cost in memory, as the many-connection tests measure it:
// this process's resident set, and the kernel's TCP buffers (every socket of
// the network namespace's host, not this process's alone). Each reading is
// none where /proc cannot be read.

#include <cstdint>
#include <optional>
#include <string>

namespace tlscmp::measure {

struct MemoryReading {
  std::optional<std::uint64_t> rss_bytes;         // VmRSS of this process
  std::optional<std::uint64_t> tcp_memory_pages;  // /proc/net/sockstat "TCP: ... mem N"
  // The allocator's bytes in use (mallinfo2: every arena, and its mmapped
  // blocks): what live objects hold, whatever pages earlier tests left
  // behind. RSS counts pages, and a process that freed memory before reuses
  // it: a second run in one process grows its RSS less than the first.
  // None under a sanitizer, whose allocator glibc's counters do not see.
  std::optional<std::uint64_t> heap_bytes;
};

MemoryReading read_memory();
// Hands the allocator's free memory back to the kernel (malloc_trim), so
// that a reading taken next starts from what is in use: a long-running
// server's heap keeps what earlier tests freed.
void release_free_memory();
// The "mem" figure of sockstat's TCP line, or none.
std::optional<std::uint64_t> parse_sockstat_tcp_pages(const std::string& sockstat);
// The resident pages of /proc/PID/statm (its second figure), or none.
std::optional<std::uint64_t> parse_statm_resident_pages(const std::string& statm);
std::uint64_t page_bytes();

// Memory per connection between two readings, over `connections`: bytes,
// signed (memory handed back shows as less than none), or none where a
// reading is missing.
struct PerConnection {
  std::optional<double> rss_bytes;
  std::optional<double> tcp_bytes;  // the kernel's pages, in bytes
  std::optional<double> heap_bytes;
};
PerConnection per_connection(const MemoryReading& before, const MemoryReading& after,
                             std::uint64_t connections);

}  // namespace tlscmp::measure
