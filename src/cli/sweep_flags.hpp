#pragma once

// tlscmp sweep's flags: a client's, with the swept settings as lists; and
// the sweep they make, every point checked. Internal to cli/.

#include <map>
#include <string>
#include <vector>

#include "cli/client_flags.hpp"

namespace tlscmp::cli {

// tlscmp sweep: what a client takes, with the swept settings as lists.
struct SweepFlags {
  ClientFlags client;
  std::vector<std::string> lengths, windows, sndbufs, rcvbufs, ciphers;
  // Each kind's swept settings (its entry's sweep_settings), by name:
  // --msg-size, --rr, --flows.
  std::map<std::string, std::vector<std::string>> kind_lists;
  std::string out = "sweep";
};

void add_sweep_command(CLI::App& app, SweepFlags& flags);

// tlscmp sweep: the base settings as a client takes them, and the lists made
// axes, each point checked before anything runs.
SweepCommand to_sweep_command(const SweepFlags& sweep_flags, const std::string& command_line);

}  // namespace tlscmp::cli
