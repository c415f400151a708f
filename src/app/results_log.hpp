#pragma once

// server --results FILE: a JSON line per test served, appended whole or not
// at all, so that one file can follow a whole fleet's tests (docs/server.md).

#include <mutex>
#include <string>
#include <vector>

#include "app/log.hpp"
#include "protocol/messages.hpp"
#include "transport/unique_fd.hpp"

namespace tlscmp::app {

class ResultsLog {
 public:
  // `path` "": no file, and record() does nothing. Throws Error, in one line,
  // if the file cannot be opened to append to.
  ResultsLog(const std::string& path, Logger& log);

  // One test's line: who (`address` as logged, `source` the peer's address
  // alone), what it asked, `outcome` ("ok", "refused" or "failed"), `text`
  // (the log line, or why), and each side's result messages as JSON text.
  // A line the disk cannot take is logged once, and again when lines are kept
  // once more; the server serves on either way.
  void record(const std::string& address, const std::string& source, const protocol::TestRequest& request,
              const char* outcome, const std::string& text, const std::vector<std::string>& server_results,
              const std::vector<std::string>& client_results);

 private:
  std::string path_;
  Logger& log_;
  UniqueFd file_;  // not valid: no --results
  std::mutex mutex_;
  int lost_ = 0;  // lines not written since the last one that was
};

}  // namespace tlscmp::app
