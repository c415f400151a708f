#include "results/result_file.hpp"

#include <fmt/format.h>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "error.hpp"

namespace tlscmp::results {

using nlohmann::json;

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw UsageError(
        fmt::format("'{}' is not valid JSON (cut short?) at byte {}: make it with tlscmp client -J > FILE",
                    path, e.byte));
  }
  return j;
}

json read_result(const std::string& path) {
  const json j = read_json_file(path);
  if (!j.is_object() || !j.contains("test") || !j["test"].is_object() || !j.contains("tlscmp_version")) {
    throw UsageError(fmt::format(
        "'{}' is not a tlscmp result (no 'test' object): make one with tlscmp client -J > FILE", path));
  }
  return j;
}

std::string text_of(const json& value) {
  if (value.is_string()) return value.get<std::string>().empty() ? "(default)" : value.get<std::string>();
  return value.dump();
}

}  // namespace tlscmp::results
