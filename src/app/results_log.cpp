#include "app/results_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "error.hpp"

namespace tlscmp::app {
namespace {

// Appends `line` to the file `fd` in one write, or not at all: a write the
// disk cannot take in full is cut back off, so that the file never ends in
// half a line. Returns "" or why not.
std::string append_whole_line(int fd, const std::string& line) {
  struct stat before {};
  if (::fstat(fd, &before) != 0) return std::strerror(errno);
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      if (written > 0 && ::ftruncate(fd, before.st_size) != 0) {
        return why + fmt::format(", and cutting off the partial line failed: {}", std::strerror(errno));
      }
      return why;
    }
    written += static_cast<std::size_t>(n);
  }
  return {};
}

// "2026-12-01T01:02:03.456Z": now, in UTC.
std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

// Text from a peer as a JSON string: bytes that are not UTF-8 replaced.
std::string json_text(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

ResultsLog::ResultsLog(const std::string& path, Logger& log) : path_(path), log_(log) {
  if (path.empty()) return;
  file_.reset(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (!file_.valid()) {
    throw Error(fmt::format("--results {}: cannot open it to append to: {}", path, std::strerror(errno)));
  }
}

void ResultsLog::record(const std::string& address, const std::string& source,
                        const protocol::TestRequest& request, const char* outcome, const std::string& text,
                        const std::vector<std::string>& server_results,
                        const std::vector<std::string>& client_results) {
  if (!file_.valid()) return;
  // Each piece already JSON text: joined, not parsed again.
  const auto list = [](const std::vector<std::string>& items) {
    return "[" + fmt::format("{}", fmt::join(items, ",")) + "]";
  };
  const std::string line = fmt::format(
      R"({{"time":{},"client":{},"client_address":{},"kind":"{}","outcome":"{}","log":{},"request":{},)"
      R"("server_results":{},"client_results":{}}})"
      "\n",
      nlohmann::json(utc_now()).dump(), json_text(address), nlohmann::json(source).dump(),
      to_string(request.test.kind), outcome, json_text(text), protocol::body_text(request),
      list(server_results), list(client_results));
  std::lock_guard lock(mutex_);
  const std::string problem = append_whole_line(file_.get(), line);
  if (!problem.empty()) {
    // Said once, not a line per test, and again when lines are kept once more.
    if (lost_++ == 0) {
      log_.line(
          fmt::format("--results {}: cannot write: {}; the lines of the tests served meanwhile are lost",
                      path_, problem));
    }
  } else if (lost_ > 0) {
    log_.line(fmt::format("--results {}: writing again; {} line{} lost", path_, lost_,
                          lost_ == 1 ? " was" : "s were"));
    lost_ = 0;
  }
}

}  // namespace tlscmp::app
