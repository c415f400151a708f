#include "app/log.hpp"

#include <fmt/format.h>
#include <chrono>
#include <ctime>

namespace tlscmp::app {

void Logger::line(std::string_view text) {
  if (out_ == nullptr) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  const std::string out = fmt::format("{}.{:03}Z {}\n", stamp, ms, text);
  std::lock_guard lock(mutex_);
  std::fwrite(out.data(), 1, out.size(), out_);
  std::fflush(out_);
}

}  // namespace tlscmp::app
