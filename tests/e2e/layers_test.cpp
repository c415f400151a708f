// The build's layer check (cmake/TlscmpCheckLayers.cmake), run as the build
// runs it, on small trees of sources: the kinds and the stacks are peers, a
// layer includes only those below it, and src/ as it is passes.

#include <filesystem>
#include <fstream>
#include <map>

#include "e2e/e2e.hpp"

using namespace tlscmp::test;

namespace {

// Runs the check on a tree of `files` (path under src/ -> its text).
ProcessResult check_layers(const std::map<std::string, std::string>& files) {
  const TempDir dir;
  for (const auto& [path, text] : files) {
    const std::filesystem::path file = dir.path() / "src" / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  return run_process({TLSCMP_CMAKE_COMMAND, "-DSRC=" + (dir.path() / "src").string(),
                      "-DSTAMP=" + (dir.path() / "stamp").string(), "-P",
                      std::string(TLSCMP_SOURCE_DIR) + "/cmake/TlscmpCheckLayers.cmake"});
}

}  // namespace

TEST_CASE("the layer check: a kind or a stack that includes another's folder fails the build, src/ passes") {
  const std::string peer_a = "#include \"kinds/a/a.hpp\"\n";
  SUBCASE("kinds that include only their own folder and the shared part pass") {
    const ProcessResult r =
        check_layers({{"kinds/a/a.hpp", "#include \"kinds/kind.hpp\"\n"},
                      {"kinds/kind.hpp", ""},
                      {"kinds/table.cpp", peer_a},
                      {"kinds/b/b.cpp", "#include \"kinds/kind.hpp\"\n#include \"stacks/stack.hpp\"\n"},
                      {"stacks/stack.hpp", ""}});
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
  }
  SUBCASE("a kind that includes another kind's folder") {
    const ProcessResult r = check_layers({{"kinds/a/a.hpp", ""}, {"kinds/b/b.cpp", peer_a}});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(
              "src/kinds/b/b.cpp: #include \"kinds/a/a.hpp\": the b kind includes another kind's folder") !=
          std::string::npos);
  }
  SUBCASE("a stack that includes another stack's folder, and the stacks' shared part one of them") {
    const ProcessResult r = check_layers({{"stacks/tls/tls.hpp", ""},
                                          {"stacks/quic/quic.cpp", "#include \"stacks/tls/tls.hpp\"\n"},
                                          {"stacks/stack.hpp", "#include \"stacks/tls/tls.hpp\"\n"}});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("the quic stack includes another stack's folder") != std::string::npos);
    CHECK(
        r.err.find("src/stacks/stack.hpp: #include \"stacks/tls/tls.hpp\": the stacks' shared part reaches a "
                   "stack through the table") != std::string::npos);
  }
  SUBCASE("a kind that reaches into a stack's folder rather than through the table") {
    const ProcessResult r = check_layers(
        {{"stacks/quic/quic.hpp", ""}, {"kinds/flows/loop.cpp", "#include \"stacks/quic/quic.hpp\"\n"}});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("kinds/ reaches a stack through the table of stacks (stacks/stack.hpp)") !=
          std::string::npos);
  }
  SUBCASE("a layer that includes one above it") {
    const ProcessResult r = check_layers({{"stacks/stack.hpp", "#include \"kinds/kind.hpp\"\n"}});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("src/stacks/stack.hpp: #include \"kinds/kind.hpp\": stacks/ may include only") !=
          std::string::npos);
  }
  SUBCASE("src/ as it is") {
    const TempDir stamp;
    const ProcessResult r =
        run_process({TLSCMP_CMAKE_COMMAND, "-DSRC=" + std::string(TLSCMP_SOURCE_DIR) + "/src",
                     "-DSTAMP=" + stamp.file("stamp"), "-P",
                     std::string(TLSCMP_SOURCE_DIR) + "/cmake/TlscmpCheckLayers.cmake"});
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
  }
}
