#pragma once

#include <string>

namespace tlscmp::cli {

// The man page tlscmp(1), in roff, and a bash completion script, both
// written from the option definitions that --help prints (visit_command_line),
// so that neither can drift from the program.
std::string render_man_page(const std::string& version, const std::string& date);
std::string render_bash_completion();

}  // namespace tlscmp::cli
