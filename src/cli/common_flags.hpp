#pragma once

// What the subcommands' flags share: number ranges, timeouts, the TLS
// policy flags, sizes, and the warning for socket buffers that crawl.
// Internal to cli/.

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "cli/size.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "tls/policy.hpp"

namespace tlscmp::cli {

constexpr int kMaxRounds = 100'000;

constexpr double seconds(std::chrono::milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000;
}

// CLI::Range for a flag that takes a decimal number (seconds, a percentage),
// but refusing what is no number: CLI11's Range only compares, and every
// comparison with nan is false, so that '-t nan' passed and then read as no
// -t at all (a 1 GiB run).
class NumberRange : public CLI::Validator {
 public:
  NumberRange(double min, double max) : CLI::Validator(CLI::Range(min, max)) {
    func_ = [min, max](std::string& text) -> std::string {
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
        return fmt::format("'{}' is not a number; give one from {:g} to {:g}", text, min, max);
      if (value < min || value > max) return fmt::format("{} is outside {:g} to {:g}", text, min, max);
      return {};
    };
  }
};

// Seconds, as typed; converted to Timeouts once parsing succeeded.
struct TimeoutFlags {
  double connect_s = seconds(session::Timeouts{}.connect);
  double handshake_s = seconds(session::Timeouts{}.handshake);
  double control_s = seconds(session::Timeouts{}.control);
  double idle_s = seconds(session::Timeouts{}.idle);
};

constexpr double kMaxTimeoutS = 86'400;
constexpr double kMaxStartAheadS = 86'400;  // --start-at: at most a day ahead
constexpr double kMaxSeconds = static_cast<double>(protocol::kMaxDurationMs) / 1000;
constexpr double kMinIntervalSeconds = static_cast<double>(protocol::kMinIntervalMs) / 1000;

std::chrono::milliseconds milliseconds_of(double seconds);
void add_timeout_flags(CLI::App* cmd, TimeoutFlags& t);
session::Timeouts to_timeouts(const TimeoutFlags& t);
// --tls-version, --cipher, --groups and --ktls, the same on both sides.
void add_tls_policy_flags(CLI::App* cmd, tls::Policy& policy, const char* whose);

// A size option (64K, 1.5M, 1G: powers of 1024) that CLI11 parses with
// parse_size straight into `target`; a bad value is refused naming `flag`.
template <typename T>
CLI::Option* add_size(CLI::App* cmd, const std::string& names, T& target, const char* flag, std::uint64_t min,
                      std::uint64_t max, const std::string& what) {
  return cmd
      ->add_option_function<std::string>(
          names,
          [&target, flag, min, max](const std::string& text) {
            target = static_cast<T>(parse_size(text, flag, min, max));
          },
          what)
      ->type_name("SIZE");
}

// "64/16K": a request and a response size, each 1 byte to 1 GiB.
std::pair<std::uint64_t, std::uint64_t> parse_rr(const std::string& text, const std::string& flag);

bool slow_socket_buffer(std::uint32_t bytes);
std::string size_text(std::uint64_t bytes);
// The warning for TCP socket buffers small enough to make a run crawl;
// `given` names them as the flags did ("-w 1K").
std::string slow_buffers_warning(const std::string& given);

}  // namespace tlscmp::cli
