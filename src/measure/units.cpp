#include "measure/units.hpp"

#include <fmt/format.h>
#include <iterator>

namespace tlscmp::measure {

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  if (value == static_cast<double>(static_cast<std::uint64_t>(value))) {
    return fmt::format("{:.0f} {}", value, kUnits[unit]);
  }
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

}  // namespace tlscmp::measure
