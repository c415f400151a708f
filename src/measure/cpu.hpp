#pragma once

namespace tlscmp::measure {

// CPU time of the calling thread: tlscmp runs each transfer on one thread, so
// the difference of two readings is what that transfer cost on this side.
struct CpuTimes {
  double user_s = 0;    // user-mode CPU seconds
  double system_s = 0;  // kernel-mode CPU seconds
};

CpuTimes thread_cpu_times();
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
