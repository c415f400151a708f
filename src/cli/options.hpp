#pragma once

#include <functional>
#include <string>
#include <variant>

#include "app/speed.hpp"
#include "results/compare.hpp"
#include "results/merge.hpp"
#include "results/sweep.hpp"
#include "session/config.hpp"

namespace CLI {
class App;
}

namespace tlscmp::cli {

// --help was asked for (exit 0), or no subcommand given (exit 2): print `text`.
struct HelpRequest {
  std::string text;
  int exit_code = 0;
};

struct ClientCommand {
  session::ClientConfig config;
  session::OutputFormat format = session::OutputFormat::text;
  std::string html_path;              // --html: a report page at the end, or ""
  std::vector<std::string> warnings;  // settings that run, but badly: a line each, for stderr before the run
};

struct SweepCommand {
  results::SweepConfig config;
  std::string out_prefix = "sweep";   // writes PREFIX.csv and PREFIX.json
  std::string html_path;              // --html: a report page at the end, or ""
  std::vector<std::string> warnings;  // as ClientCommand's
};

// tlscmp report: the result files, and the page to write.
struct ReportCommand {
  std::vector<std::string> paths;
  std::string out;
};

struct CompareCommand {
  results::CompareConfig config;
  bool json = false;
};

struct MergeCommand {
  results::MergeConfig config;
  bool json = false;
};

// tlscmp speed: what to measure, and how to print it.
struct SpeedCommand {
  app::SpeedConfig config;
  bool json = false;
};

using Command = std::variant<HelpRequest, session::CertsConfig, session::ServerConfig, ClientCommand,
                             SweepCommand, CompareCommand, MergeCommand, ReportCommand, SpeedCommand>;

// Options in, validated values out. Throws UsageError with a one-line reason.
Command parse_command_line(int argc, const char* const* argv);

// Builds the whole command line, every subcommand and flag as --help shows
// them, and hands it to `visit`: the man page and the shell completion are
// written from it (cli/manual.hpp).
void visit_command_line(const std::function<void(const CLI::App&)>& visit);

}  // namespace tlscmp::cli
