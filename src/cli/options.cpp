#include "cli/options.hpp"

// The command line: each subcommand's flags (client_flags, server_flags,
// sweep_flags and the small ones here), parsed into one Command.

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <functional>
#include <regex>

#include "app/about.hpp"
#include "cli/client_flags.hpp"
#include "cli/common_flags.hpp"
#include "cli/server_flags.hpp"
#include "cli/speed_flags.hpp"
#include "cli/sweep_flags.hpp"
#include "error.hpp"
#include "tls/identity.hpp"

namespace tlscmp::cli {
namespace {

constexpr int kMaxCertificateDays = 3650;

void add_certs_command(CLI::App& app, session::CertsConfig& certs) {
  CLI::App* cmd = app.add_subcommand("certs", "Write a CA, a server and a client certificate for TLS tests");
  cmd->add_option("--dir", certs.dir, "Directory to write ca.pem, server.pem/.key, client.pem/.key into")
      ->type_name("DIR")
      ->capture_default_str();
  cmd->add_option("--host", certs.hosts,
                  "Extra DNS name or IP address for the server certificate (repeatable); "
                  "localhost, 127.0.0.1 and ::1 are always in it");
  std::vector<std::string> key_types;
  for (tls::KeyType type : tls::all_key_types())
    key_types.emplace_back(tls::to_string(type));
  cmd->add_option_function<std::string>(
         "--key-type", [&certs](const std::string& text) { certs.key_type = *tls::parse_key_type(text); },
         "Key type of all three certificates")
      ->check(CLI::IsMember(key_types))
      ->default_str(tls::to_string(certs.key_type));
  cmd->add_flag(
      "--new-ca", certs.new_ca,
      "Make a new CA even where --dir holds one (whose ca.pem copies on clients then stop working)");
  cmd->add_option("--days", certs.validity_days, "Validity in days")
      ->check(CLI::Range(1, kMaxCertificateDays))
      ->capture_default_str();
}

// CLI11's messages, kept to one line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

// CLI11 says "--port: At Most 1 required but received 3" of a flag given
// three times; say it plainly. Other mismatches keep CLI11's words.
std::string plain_mismatch(const std::string& text) {
  static const std::regex repeated(R"(^(\S+): At Most 1 required but received (\d+)$)");
  std::smatch m;
  if (!std::regex_match(text, m, repeated)) return text;
  return fmt::format("{} was given {} times; give it once", m[1].str(), m[2].str());
}

// "-n/--bytes", "-t/--time", or a positional's name: the flag as the user may have typed it.
std::string flag_names(const CLI::Option& option) {
  std::string names;
  for (const std::string& name : option.get_snames())
    names += (names.empty() ? "-" : "/-") + name;
  for (const std::string& name : option.get_lnames())
    names += (names.empty() ? "--" : "/--") + name;
  return names.empty() ? option.get_name(true) : names;
}

// An empty value (-n '', or a shell variable that was never set) would read
// as the flag left out, and the run would go with the defaults (1 GiB, the
// system's CAs, no report page): refused, naming the flag.
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& value : option->results()) {
        if (!value.empty()) continue;
        throw UsageError(
            fmt::format("{} '': empty (a shell variable that is not set?); give a value, or "
                        "leave the flag out",
                        flag_names(*option)));
      }
    }
  }
}

// tlscmp compare BASE NEW.
struct CompareFlags {
  std::string base;
  std::string next;
  std::vector<std::string> ignore;
  double fail_if_slower = -1;  // -1: not given
  bool json = false;
};

void add_compare_command(CLI::App& app, CompareFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare two results (-J): the change in each figure, its 95% CI, faster or slower");
  cmd->add_option("base", flags.base, "The earlier result, from tlscmp client -J")
      ->required()
      ->type_name("BASE.json");
  cmd->add_option("new", flags.next, "The later result")->required()->type_name("NEW.json");
  cmd->add_option(
         "--ignore", flags.ignore,
         "A setting that may differ between the two (repeatable, or comma-separated): cipher, bytes ...")
      ->delimiter(',')
      ->type_name("SETTING");
  cmd->add_option("--fail-if-slower", flags.fail_if_slower,
                  "Exit 1 if a figure is significantly slower by at least PCT percent (for CI gating)")
      ->check(NumberRange(0.0, 100.0))
      ->type_name("PCT");
  cmd->add_flag("-J,--json", flags.json, "Print JSON instead of a table");
}

// tlscmp merge CLIENT.json...
struct MergeFlags {
  std::vector<std::string> paths;
  std::string results;
  bool json = false;
};

void add_merge_command(CLI::App& app, MergeFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge many clients' results (-J) into one: the totals, each host, and the server's account");
  cmd->add_option("client-results", flags.paths,
                  "The clients' results (-J), each named after its host (HOST.json)")
      ->required()
      ->type_name("CLIENT.json ...");
  cmd->add_option("--results", flags.results, "The server's --results file, for its account of each client")
      ->type_name("FILE");
  cmd->add_flag("-J,--json", flags.json, "Print JSON instead of tables");
}

// tlscmp report RESULT.json... -o FILE
struct ReportFlags {
  std::vector<std::string> paths;
  std::string out;
};

void add_report_command(CLI::App& app, ReportFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "report", "Draw results (-J, or a sweep's JSON) as one self-contained HTML page; several are overlaid");
  cmd->add_option("result-files", flags.paths,
                  "Results of tlscmp client -J or sweep --out, each named by its file")
      ->required()
      ->type_name("RESULT.json ...");
  cmd->add_option("-o,--output", flags.out, "Write the page here")->required()->type_name("FILE");
}

// Every flag of every subcommand, bound to these values.
struct Flags {
  session::CertsConfig certs;
  ServerFlags server;
  ClientFlags client;
  SweepFlags sweep;
  CompareFlags compare;
  MergeFlags merge;
  ReportFlags report;
  SpeedFlags speed;
};

void define_command_line(CLI::App& app, Flags& flags) {
  app.set_version_flag(
      "-V,--version", [] { return app::build_description(); },
      "Print the version, TLS library, transports and kernel TLS support, and exit");
  app.require_subcommand(0, 1);
  add_certs_command(app, flags.certs);
  add_server_command(app, flags.server);
  add_client_command(app, flags.client);
  add_sweep_command(app, flags.sweep);
  add_compare_command(app, flags.compare);
  add_merge_command(app, flags.merge);
  add_report_command(app, flags.report);
  add_speed_command(app, flags.speed);
}

constexpr const char* kProgramDescription =
    "tlscmp: what TLS costs over plain TCP, on these hosts, for this workload";

}  // namespace

void visit_command_line(const std::function<void(const CLI::App&)>& visit) {
  CLI::App app{kProgramDescription, "tlscmp"};
  Flags flags;
  define_command_line(app, flags);
  visit(app);
}

namespace {

// The command as a shell would take it back: "tlscmp" and each argument,
// quoted where it holds anything but plain characters.
std::string shell_command_line(int argc, const char* const* argv) {
  std::string line = "tlscmp";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_@%+=:,./-") == std::string::npos;
    line += ' ';
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (const char c : arg)
      line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace

Command parse_command_line(int argc, const char* const* argv) {
  CLI::App app{kProgramDescription, "tlscmp"};
  Flags flags;
  define_command_line(app, flags);
  const session::CertsConfig& certs = flags.certs;
  const ServerFlags& server_flags = flags.server;
  const ClientFlags& client_flags = flags.client;
  const SweepFlags& sweep_flags = flags.sweep;

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* sub = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
    return HelpRequest{sub->help(), 0};
  } catch (const CLI::CallForVersion& e) {
    return HelpRequest{std::string(e.what()) + "\n", 0};
  } catch (const CLI::ArgumentMismatch& e) {
    throw UsageError(plain_mismatch(one_line(e.what())));
  } catch (const CLI::ParseError& e) {
    throw UsageError(one_line(e.what()));
  }
  refuse_empty_values(app);

  if (app.got_subcommand("certs")) return certs;
  if (app.got_subcommand("server")) {
    return to_server_config(server_flags);
  }
  if (app.got_subcommand("client")) {
    ClientCommand client = to_client_command(client_flags);
    client.config.command_line = shell_command_line(argc, argv);
    return client;
  }
  if (app.got_subcommand("merge")) {
    MergeCommand merge;
    merge.config.paths = flags.merge.paths;
    merge.config.results_path = flags.merge.results;
    merge.json = flags.merge.json;
    return merge;
  }
  if (app.got_subcommand("report")) return ReportCommand{flags.report.paths, flags.report.out};
  if (app.got_subcommand("compare")) {
    CompareCommand compare;
    compare.config.base_path = flags.compare.base;
    compare.config.next_path = flags.compare.next;
    compare.config.ignore = flags.compare.ignore;
    if (flags.compare.fail_if_slower >= 0) compare.config.fail_if_slower = flags.compare.fail_if_slower;
    compare.json = flags.compare.json;
    return compare;
  }
  if (app.got_subcommand("speed")) return to_speed_command(flags.speed);
  if (app.got_subcommand("sweep")) return to_sweep_command(sweep_flags, shell_command_line(argc, argv));
  return HelpRequest{app.help(), 2};
}

}  // namespace tlscmp::cli
