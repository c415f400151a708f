#include "measure/environment.hpp"

#include <sys/utsname.h>

#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

namespace tlscmp::measure {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

std::string cpu_crypto_features() {
  static constexpr const char* kInteresting[] = {"aes",  "pclmulqdq", "vaes",   "vpclmulqdq",
                                                 "avx2", "avx512f",   "sha_ni", "pmull",
                                                 "sha1", "sha2",      "sha3",   "sha512"};
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    // x86: "flags : fpu vme ..."; Arm: "Features : fp asimd aes ..."
    if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    std::istringstream words(line.substr(colon + 1));
    std::set<std::string> present;
    for (std::string w; words >> w;)
      present.insert(w);
    std::string out;
    for (const char* flag : kInteresting) {
      if (present.contains(flag)) out += out.empty() ? flag : std::string(" ") + flag;
    }
    return out;
  }
  return {};
}

std::string kernel_description() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  return fmt::format("{} {} {}", u.sysname, u.release, u.machine);
}

std::optional<std::uint64_t> time_wait_sockets() {
  constexpr std::string_view kTimeWait = "06";  // the kernel's TCP_TIME_WAIT, in the "st" column
  std::optional<std::uint64_t> count;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    if (!in) continue;
    count = count.value_or(0);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      // "  sl  local_address rem_address   st ...": the state is the fourth field.
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state == kTimeWait) ++*count;
    }
  }
  return count;
}

}  // namespace tlscmp::measure
