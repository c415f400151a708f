// Writes tlscmp's man page and bash completion from its option definitions,
// at build time: tlscmp-docs MAN_PAGE COMPLETION DATE.

#include <exception>
#include <fstream>

#include <fmt/format.h>

#include "cli/manual.hpp"
#include "version.hpp"

namespace {

bool write_file(const char* path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) fmt::print(stderr, "tlscmp-docs: cannot write '{}'\n", path);
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: tlscmp-docs MAN_PAGE COMPLETION DATE\n");
    return 2;
  }
  try {
    const bool ok = write_file(argv[1], tlscmp::cli::render_man_page(tlscmp::kVersion, argv[3])) &&
                    write_file(argv[2], tlscmp::cli::render_bash_completion());
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tlscmp-docs: {}\n", e.what());
    return 1;
  }
}
