#pragma once

namespace tlscmp::measure {

// CPU time of the calling thread: tlscmp runs each transfer on one thread, so
// the difference of two readings is what that transfer cost on this side.
struct CpuTimes {
  double user_s = 0;    // user-mode CPU seconds
  double system_s = 0;  // kernel-mode CPU seconds
};

CpuTimes thread_cpu_times();

inline CpuTimes operator-(const CpuTimes& a, const CpuTimes& b) {
  return {a.user_s - b.user_s, a.system_s - b.system_s};
}

}  // namespace tlscmp::measure
