// The -J output's key paths, one run of each kind, against the paths recorded
// in tests/e2e/schema/: a key that disappears or is renamed fails here, so
// that a restructure (or any change) cannot drop a field scripts read
// without saying so. Arrays are one path ("runs[].bytes"). New keys are named
// in a message, not failed: record them with
//   TLSCMP_SCHEMA_WRITE=tests/e2e/schema build/tests/tlscmp_e2e_tests -tc='*key paths*'
// which writes the paths one run gave; what is committed is those that
// every one of several runs gave, on both backends (a figure of a run too
// short to sample is null, with no keys under it).

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;
using nlohmann::json;

namespace {

// Every key's path, objects' and arrays' included, so that a figure that is
// sometimes null and sometimes an object ("host_cpu" of a short run) still
// has a path of its own to keep.
void collect_paths(const json& value, const std::string& path, std::set<std::string>& out) {
  if (value.is_object()) {
    if (!path.empty()) out.insert(path);
    for (const auto& [key, item] : value.items())
      collect_paths(item, path.empty() ? key : path + "." + key, out);
  } else if (value.is_array()) {
    out.insert(path + "[]");
    for (const json& item : value)
      collect_paths(item, path + "[]", out);
  } else {
    out.insert(path);
  }
}

std::set<std::string> recorded_paths(const std::string& kind) {
  std::set<std::string> paths;
  // A path, not a string sum: GCC 12's -Warray-bounds misreads the sum
  // once inlined into the test (a false positive that fails the build).
  std::istringstream in(read_file(std::filesystem::path(TLSCMP_SOURCE_DIR) / "tests/e2e/schema" / (kind + ".txt")));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') paths.insert(line);
  }
  return paths;
}

struct KindRun {
  std::string kind;
  std::vector<std::string> args;
};

}  // namespace

TEST_CASE("the -J output keeps its key paths, one run of each kind") {
  const std::vector<KindRun> runs{
      {"bulk", {"-n", "1M", "-P", "2", "--bidir", "-i", "0.1", "--repeat", "1"}},
      // Long enough for /proc/stat to tick (10 ms) in each side's window:
      // the host's CPU split is null for a run shorter than a tick.
      {"rr", {"--rr", "1/1", "-n", "2000", "--repeat", "1"}},
      {"crr", {"--crr", "-n", "100", "--repeat", "1"}},
      {"datagram", {"--mode", "udp", "-n", "100", "-b", "1M", "-i", "0.1"}},
      {"handshakes", {"--handshakes", "5", "--repeat", "1"}},
      {"groups", {"--compare-groups", "--handshakes", "2", "--repeat", "1"}},
      {"flows", {"--flows", "20", "--rr", "1/1", "-n", "200", "--repeat", "1"}},
      {"flows-stream", {"--flows", "20", "-n", "2M", "--repeat", "1"}},
      {"flows-crr", {"--flows", "20", "--crr", "-n", "200", "--repeat", "1"}},
  };
  const char* write_dir = std::getenv("TLSCMP_SCHEMA_WRITE");
  for (const KindRun& run : runs) {
    CAPTURE(run.kind);
    std::set<std::string> seen;
    collect_paths(client_json(run.args), "", seen);
    if (write_dir != nullptr) {
      std::ofstream out(std::string(write_dir) + "/" + run.kind + ".txt");
      out << "# tlscmp client -J " << run.kind << ": the key paths tests/e2e/schema_test.cpp requires\n";
      for (const std::string& path : seen)
        out << path << "\n";
      continue;
    }
    const std::set<std::string> want = recorded_paths(run.kind);
    REQUIRE_FALSE(want.empty());
    std::string missing;
    for (const std::string& path : want) {
      if (!seen.contains(path)) missing += " " + path;
    }
    CHECK_MESSAGE(missing.empty(), "keys gone from the " << run.kind << " JSON:" << missing);
    std::string added;
    for (const std::string& path : seen) {
      if (!want.contains(path)) added += " " + path;
    }
    if (!added.empty()) MESSAGE("new keys in the " << run.kind << " JSON (record them):" << added);
  }
}
