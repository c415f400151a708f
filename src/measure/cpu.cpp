#include "measure/cpu.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <sys/resource.h>
#include <time.h>
#include <cstdlib>
#include <cstring>

namespace tlscmp::measure {
namespace {

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// "syscr: N" and "syscw: N" of /proc/thread-self/io as read now: one read call of its own.
std::optional<IoCalls> read_io_counters() {
  const int fd = ::open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[1024];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  text[n] = '\0';
  const char* reads = std::strstr(text, "syscr: ");
  const char* writes = std::strstr(text, "syscw: ");
  if (reads == nullptr || writes == nullptr) return std::nullopt;
  return IoCalls{std::strtoull(reads + 7, nullptr, 10), std::strtoull(writes + 7, nullptr, 10)};
}

}  // namespace

std::optional<IoCalls> thread_io_calls() {
  return read_io_counters();
}

std::optional<IoCalls> io_calls_since(const std::optional<IoCalls>& start) {
  const std::optional<IoCalls> now = read_io_counters();
  if (!start || !now) return std::nullopt;
  // Each reading makes one read call of its own, which the later one counts.
  const std::uint64_t reads = now->reads - start->reads;
  return IoCalls{reads > 0 ? reads - 1 : 0, now->writes - start->writes};
}

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
