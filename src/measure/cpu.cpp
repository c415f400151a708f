#include "measure/cpu.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

namespace tlscmp::measure {
namespace {

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

}  // namespace

CpuTimes thread_cpu_times() {
  rusage usage{};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return {};
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

double thread_cpu_s() {
  timespec t{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double thread_cpu_s(unsigned long thread) {
  clockid_t clock{};
  timespec t{};
  if (::pthread_getcpuclockid(static_cast<pthread_t>(thread), &clock) != 0 || ::clock_gettime(clock, &t) != 0)
    return 0;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace tlscmp::measure
