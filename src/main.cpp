// tlscmp: what TLS costs over plain TCP. Parses the command line, runs the
// subcommand, and maps every failure to one line on stderr and an exit code.

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <variant>

#include "app/client.hpp"
#include "app/commands.hpp"
#include "cli/options.hpp"
#include "error.hpp"
#include "report/report.hpp"

namespace {

constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;

int run(const tlscmp::cli::Command& command) {
  using namespace tlscmp;
  if (const auto* help = std::get_if<cli::HelpRequest>(&command)) {
    std::cout << help->text;
    return help->exit_code;
  }
  if (const auto* certs = std::get_if<app::CertsConfig>(&command)) {
    app::write_certificates(*certs);
    return 0;
  }
  if (const auto* server = std::get_if<app::ServerConfig>(&command)) {
    app::run_server(*server);
    return 0;
  }
  const auto& client = std::get<cli::ClientCommand>(command);
  const measure::Comparison comparison = app::run_client(client.config);
  std::cout << (client.format == app::OutputFormat::json ? report::render_json(comparison)
                                                         : report::render_text(comparison));
  std::cout.flush();
  if (!comparison.error.empty()) {
    std::cerr << "tlscmp: error: " << comparison.error << "\n";
    return kExitRunFailed;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that vanishes must be an EPIPE error, never a fatal signal (OpenSSL
  // writes to the socket with write(2), which raises SIGPIPE).
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run(tlscmp::cli::parse_command_line(argc, argv));
  } catch (const tlscmp::UsageError& e) {
    std::cerr << "tlscmp: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "tlscmp: error: " << e.what() << "\n";
    return kExitRunFailed;
  }
}
