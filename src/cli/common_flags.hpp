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
#include <vector>

#include "kinds/flags.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "spec/size.hpp"
#include "tls/backend.hpp"
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

constexpr double kMaxTimeoutS = 86'400;
constexpr double kMaxStartAheadS = 86'400;  // --start-at: at most a day ahead
constexpr double kMaxSeconds = static_cast<double>(protocol::kMaxDurationMs) / 1000;
constexpr double kMinIntervalSeconds = static_cast<double>(protocol::kMinIntervalMs) / 1000;

std::chrono::milliseconds milliseconds_of(double seconds);
// A duration in seconds (0.5, 10), checked as NumberRange does, that CLI11
// stores straight into `target` in milliseconds; --help shows its default.
CLI::Option* add_seconds(CLI::App* cmd, const std::string& names, std::chrono::milliseconds& target,
                         double min, double max, const std::string& what);
void add_timeout_flags(CLI::App* cmd, session::Timeouts& t);
// --tls-lib: the TLS library this process runs TLS with, chosen as it is
// parsed (so that the flags checked against the library see it).
void add_tls_library_flag(CLI::App* cmd);
// The backends --tls-lib names (a list, or `all`), each once, in the order
// given; the default where none. Throws UsageError naming those there are.
std::vector<const tls::Backend*> checked_libraries(const std::vector<std::string>& given);
// Client: --tls-lib LIST (each library its own TLS variants, the first the
// process's default) and --server-tls-lib NAME, into `policy`.
void add_tls_libraries_flags(CLI::App* cmd, spec::TlsPolicy& policy);
// --tls-version, --cipher, --groups and --ktls, the same on both sides.
void add_tls_policy_flags(CLI::App* cmd, tls::Policy& policy, const char* whose);

using kinds::add_size;
using spec::parse_count;
using spec::parse_rate;
using spec::parse_rr;
using spec::parse_size;

bool slow_socket_buffer(std::uint32_t bytes);
std::string size_text(std::uint64_t bytes);
// The warning for TCP socket buffers small enough to make a run crawl;
// `given` names them as the flags did ("-w 1K").
std::string slow_buffers_warning(const std::string& given);

}  // namespace tlscmp::cli
