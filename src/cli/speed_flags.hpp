#pragma once

// tlscmp speed's flags, and the measurement they ask for, every name and
// size checked. Internal to cli/.

#include <string>
#include <vector>

#include "cli/options.hpp"

namespace tlscmp::cli {

struct SpeedFlags {
  std::vector<std::string> libraries, suites, sizes, key_types, groups, parts;
  std::string chunk = "64K";
  std::string record_size;
  std::uint32_t sessions = 200;
  double seconds = 0.5;
  bool json = false;
};

void add_speed_command(CLI::App& app, SpeedFlags& flags);

// The flags as a measurement; throws UsageError naming a flag and what to give.
SpeedCommand to_speed_command(const SpeedFlags& flags);

}  // namespace tlscmp::cli
