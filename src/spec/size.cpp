#include "spec/size.hpp"

#include <fmt/format.h>
#include <charconv>
#include <cmath>

#include "error.hpp"
#include "spec/spec.hpp"

namespace tlscmp::spec {

namespace {

// A bound as the flags take it: "1K" for 1024, "16M", else the plain number.
std::string bound_text(std::uint64_t value, std::uint64_t base) {
  static constexpr const char* kSuffixes[] = {"", "K", "M", "G", "T", "P"};
  std::size_t unit = 0;
  while (value != 0 && value % base == 0 && unit + 1 < std::size(kSuffixes)) {
    value /= base;
    ++unit;
  }
  return std::to_string(value) + kSuffixes[unit];
}

// A number with an optional K, M, G, T or P suffix, each a power of `base`;
// `what` names the unit in messages ("bytes") and `example` shows a valid value.
std::uint64_t parse_scaled(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max,
                           std::uint64_t base, std::string_view what, std::string_view example,
                           bool whole = false) {
  auto bad = [&](const std::string& why) { return UsageError(fmt::format("{} '{}': {}", flag, text, why)); };
  if (text.empty()) throw bad(fmt::format("a number is needed, such as {}", example));
  std::uint64_t unit = 1;
  std::string_view digits = text;
  switch (text.back()) {
    case 'k':
    case 'K':
      unit = base;
      break;
    case 'm':
    case 'M':
      unit = base * base;
      break;
    case 'g':
    case 'G':
      unit = base * base * base;
      break;
    case 't':
    case 'T':
      unit = base * base * base * base;
      break;
    case 'p':
    case 'P':
      unit = base * base * base * base * base;
      break;
    default:
      break;
  }
  if (unit != 1) digits.remove_suffix(1);
  // Digits with at most one '.', nothing else: no sign, no exponent, no spaces.
  if (digits.empty() || digits.front() == '.' ||
      digits.find_first_not_of("0123456789.") != std::string_view::npos ||
      digits.find('.') != digits.rfind('.')) {
    throw bad(
        fmt::format("not a number of {}; use a number with an optional K, M, G, T or P suffix (powers of {})",
                    what, base));
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size()) throw bad("not a number");
  const double scaled = value * static_cast<double>(unit);
  // A byte count drops a fraction of a byte; a count of things cannot have one.
  if (whole && scaled != std::floor(scaled)) {
    throw bad(fmt::format("not a whole number of {}", what));
  }
  const double bytes = std::floor(scaled);
  if (!(bytes >= static_cast<double>(min)) || bytes > static_cast<double>(max)) {
    throw bad(
        fmt::format("must be between {} and {} {}", bound_text(min, base), bound_text(max, base), what));
  }
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max) {
  return parse_scaled(text, flag, min, max, 1024, "bytes", "100M");
}

std::uint64_t parse_count(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max,
                          std::string_view what) {
  return parse_scaled(text, flag, min, max, 1024, what, "1000000", /*whole=*/true);
}

std::uint64_t parse_rate(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max,
                         std::string_view what) {
  return parse_scaled(text, flag, min, max, 1000, what, "100M");
}

std::pair<std::uint64_t, std::uint64_t> parse_rr(const std::string& text, const std::string& flag) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || text.find('/', slash + 1) != std::string::npos) {
    throw UsageError(fmt::format("{} '{}': give a request and a response size, e.g. {} 1/1 or {} 64/16K",
                                 flag, text, flag, flag));
  }
  return {parse_size(text.substr(0, slash), flag + " request size", 1, kMaxRrBytes),
          parse_size(text.substr(slash + 1), flag + " response size", 1, kMaxRrBytes)};
}

}  // namespace tlscmp::spec
