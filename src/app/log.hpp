#pragma once

#include <cstdio>
#include <mutex>
#include <string_view>

namespace tlscmp::app {

// Writes whole lines, each prefixed with a UTC timestamp, from any thread.
// A Logger made with nullptr discards everything (the embedded server).
class Logger {
 public:
  explicit Logger(std::FILE* out) : out_(out) {}
  void line(std::string_view text);

 private:
  std::FILE* out_;
  std::mutex mutex_;
};

}  // namespace tlscmp::app
