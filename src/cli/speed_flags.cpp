#include "cli/speed_flags.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/common_flags.hpp"
#include "error.hpp"
#include "tls/backend.hpp"
#include "tls/context.hpp"
#include "tls/speed.hpp"

namespace tlscmp::cli {
namespace {

constexpr const char* kParts[] = {"aead", "bulk", "handshakes", "memory"};

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (const tls::SpeedSuite& suite : tls::all_speed_suites())
    names.push_back(suite.name);
  return names;
}

std::vector<std::string> checked_suites(const std::vector<std::string>& given) {
  for (const std::string& name : given) {
    if (!tls::find_speed_suite(name)) {
      throw UsageError(fmt::format("--suites {}: not a suite tlscmp offers; give some of {}", name,
                                   joined(suite_names())));
    }
  }
  return given;
}

std::vector<tls::KeyType> checked_key_types(const std::vector<std::string>& given) {
  std::vector<tls::KeyType> types;
  for (const std::string& name : given) {
    const std::optional<tls::KeyType> type = tls::parse_key_type(name);
    if (!type) {
      std::vector<std::string> known;
      for (tls::KeyType t : tls::all_key_types())
        known.emplace_back(tls::to_string(t));
      throw UsageError(fmt::format("--key-types {}: not a key type; give some of {}", name, joined(known)));
    }
    types.push_back(*type);
  }
  return types;
}

// Groups any of the chosen libraries has; one some of them lack is a note
// for those when it runs.
std::vector<std::string> checked_groups(const std::vector<std::string>& given,
                                        const std::vector<const tls::Backend*>& libraries) {
  std::vector<std::string> available;
  for (const tls::Backend* backend : libraries)
    for (const std::string& group : backend->available_groups())
      if (std::ranges::find(available, group) == available.end()) available.push_back(group);
  for (const std::string& group : given) {
    if (std::find(available.begin(), available.end(), group) == available.end()) {
      throw UsageError(fmt::format("--groups {}: not a group this TLS library ({}) offers; give some of {}",
                                   group, libraries.front()->library_version(), joined(available)));
    }
  }
  return given;
}

void apply_parts(const std::vector<std::string>& parts, app::SpeedConfig& config) {
  if (parts.empty()) return;
  config.aead = config.bulk = config.handshakes = config.memory = false;
  for (const std::string& part : parts) {
    if (part == "aead")
      config.aead = true;
    else if (part == "bulk")
      config.bulk = true;
    else if (part == "handshakes")
      config.handshakes = true;
    else if (part == "memory")
      config.memory = true;
    else
      throw UsageError(fmt::format("--parts {}: give some of aead, bulk, handshakes, memory", part));
  }
}

}  // namespace

void add_speed_command(CLI::App& app, SpeedFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "speed",
      "Measure this host's TLS library in memory: AEAD, bulk TLS, handshakes, memory per connection");
  cmd->add_option("--tls-lib", flags.libraries,
                  "The TLS libraries to measure, one after another (comma-separated, or all): openssl (the "
                  "default), and the other backends tlscmp --version lists")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_option("--suites", flags.suites,
                  "Suites to measure (comma-separated); default: every one tlscmp offers")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_option("--sizes", flags.sizes,
                  "AEAD record payloads, 1 to 16K (comma-separated); default: 1K,4K,16K")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_option(
         "--key-types", flags.key_types,
         "Handshakes per server key type (comma-separated); default: every one, as --compare-key-types")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_option("--groups", flags.groups,
                  "Handshakes per key exchange group (comma-separated); default: every one this library has")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_option("-l,--len", flags.chunk, "Bulk: bytes per write")->type_name("SIZE")->capture_default_str();
  cmd->add_option("--record-size", flags.record_size,
                  "Bulk: the writer's largest record, 512 to 16K; default 16K")
      ->type_name("SIZE");
  cmd->add_option("--sessions", flags.sessions, "Memory: idle connections held at once")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--time", flags.seconds, "Seconds per figure")
      ->check(NumberRange(0.01, 60))
      ->type_name("S")
      ->capture_default_str();
  cmd->add_option("--parts", flags.parts, "What to measure (comma-separated): aead, bulk, handshakes, memory")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_flag("-J,--json", flags.json, "Print JSON instead of tables");
}

SpeedCommand to_speed_command(const SpeedFlags& flags) {
  SpeedCommand command;
  app::SpeedConfig& config = command.config;
  config.suites = checked_suites(flags.suites);
  if (!flags.sizes.empty()) {
    config.sizes.clear();
    for (const std::string& size : flags.sizes)
      config.sizes.push_back(static_cast<std::uint32_t>(parse_size(size, "--sizes", 1, 16384)));
  }
  config.key_types = checked_key_types(flags.key_types);
  config.libraries = checked_libraries(flags.libraries);
  config.groups = checked_groups(flags.groups, config.libraries);
  config.chunk_bytes = static_cast<std::uint32_t>(parse_size(flags.chunk, "-l", 1, 16 * 1024 * 1024));
  if (!flags.record_size.empty())
    config.record_bytes =
        static_cast<std::uint32_t>(parse_size(flags.record_size, "--record-size", 512, 16384));
  config.sessions = flags.sessions;
  config.seconds = flags.seconds;
  apply_parts(flags.parts, config);
  command.json = flags.json;
  return command;
}

}  // namespace tlscmp::cli
