#include "cli/size.hpp"

#include <fmt/format.h>
#include <charconv>
#include <cmath>

#include "error.hpp"

namespace tlscmp::cli {

std::uint64_t parse_size(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max) {
  auto bad = [&](const std::string& why) { return UsageError(fmt::format("{} '{}': {}", flag, text, why)); };
  if (text.empty()) throw bad("a size is needed, such as 100M");
  std::uint64_t unit = 1;
  std::string_view digits = text;
  switch (text.back()) {
    case 'k':
    case 'K':
      unit = std::uint64_t{1} << 10;
      break;
    case 'm':
    case 'M':
      unit = std::uint64_t{1} << 20;
      break;
    case 'g':
    case 'G':
      unit = std::uint64_t{1} << 30;
      break;
    case 't':
    case 'T':
      unit = std::uint64_t{1} << 40;
      break;
    default:
      break;
  }
  if (unit != 1) digits.remove_suffix(1);
  // Digits with at most one '.', nothing else: no sign, no exponent, no spaces.
  if (digits.empty() || digits.front() == '.' ||
      digits.find_first_not_of("0123456789.") != std::string_view::npos ||
      digits.find('.') != digits.rfind('.')) {
    throw bad("not a size; use a number with an optional K, M, G or T suffix (powers of 1024)");
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size()) throw bad("not a number");
  const double bytes = std::floor(value * static_cast<double>(unit));
  if (!(bytes >= static_cast<double>(min)) || bytes > static_cast<double>(max)) {
    throw bad(fmt::format("must be between {} and {} bytes", min, max));
  }
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace tlscmp::cli
