#pragma once

#include <cstdint>
#include <optional>

namespace tlscmp::measure {

// CPU time of the calling thread: tlscmp runs each transfer on one thread, so
// the difference of two readings is what that transfer cost on this side.
struct CpuTimes {
  double user_s = 0;    // user-mode CPU seconds
  double system_s = 0;  // kernel-mode CPU seconds
};

CpuTimes thread_cpu_times();

// The calling thread's read and write system calls so far (syscr and syscw
// of /proc/thread-self/io, less the reading's own): none where the kernel
// does not count them.
struct IoCalls {
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
};
std::optional<IoCalls> thread_io_calls();
// The calls from `start` to now (none where either reading is none).
std::optional<IoCalls> io_calls_since(const std::optional<IoCalls>& start);
// The calling thread's CPU seconds so far, user and system together, exact
// to the nanosecond (CLOCK_THREAD_CPUTIME_ID). getrusage's figures lag by up
// to a scheduler tick: fine over a transfer, useless over one short connection.
double thread_cpu_s();
// Another thread's CPU seconds so far (its pthread_t), user and system
// together, exact as thread_cpu_s(); 0 where the clock cannot be read.
double thread_cpu_s(unsigned long thread);

inline CpuTimes operator-(const CpuTimes& a, const CpuTimes& b) {
  return {a.user_s - b.user_s, a.system_s - b.system_s};
}

}  // namespace tlscmp::measure
