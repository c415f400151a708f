#include "cli/common_flags.hpp"

#include "error.hpp"

namespace tlscmp::cli {
namespace {

// Socket buffers asked for below this hold fewer than a few TCP segments
// (loopback's are 64 KiB): the sender waits on the window for every segment,
// and -w 1K moved 1 MiB in 75 s. 32K was the smallest that kept loopback at
// full speed; 16K ran at a fortieth of it.
constexpr std::uint32_t kSlowSocketBufferBytes = 32 * 1024;

}  // namespace

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000 + 0.5));
}

void add_timeout_flags(CLI::App* cmd, TimeoutFlags& t) {
  const auto range = NumberRange(0.001, kMaxTimeoutS);
  cmd->add_option("--connect-timeout", t.connect_s, "Seconds a TCP connect (and name lookup) may take")
      ->check(range)
      ->capture_default_str();
  cmd->add_option("--handshake-timeout", t.handshake_s,
                  "Seconds a TLS handshake and connection preamble may take")
      ->check(range)
      ->capture_default_str();
  cmd->add_option("--control-timeout", t.control_s, "Seconds each control message may take")
      ->check(range)
      ->capture_default_str();
  cmd->add_option("--idle-timeout", t.idle_s, "Seconds a transfer may go without any progress")
      ->check(range)
      ->capture_default_str();
}

session::Timeouts to_timeouts(const TimeoutFlags& t) {
  return {milliseconds_of(t.connect_s), milliseconds_of(t.handshake_s), milliseconds_of(t.control_s),
          milliseconds_of(t.idle_s)};
}

// --tls-version, --cipher, --groups and --ktls, the same on both sides.
void add_tls_policy_flags(CLI::App* cmd, tls::Policy& policy, const char* whose) {
  cmd->add_option("--tls-version", policy.version,
                  fmt::format("Only this TLS version for {}: 1.2 or 1.3", whose))
      ->check(CLI::IsMember({"1.2", "1.3"}));
  cmd->add_option("--cipher", policy.cipher,
                  "TLS 1.3 suite(s) such as TLS_AES_128_GCM_SHA256, or a TLS 1.2 OpenSSL cipher list such as "
                  "ECDHE-ECDSA-AES128-GCM-SHA256 (which limits TLS to 1.2)");
  cmd->add_option(
         "--groups", policy.groups,
         "Key exchange groups, colon-separated, e.g. X25519:P-256 or X25519MLKEM768 (tlscmp --version "
         "lists those the TLS library has)")
      ->type_name("LIST");
  cmd->add_flag(
      "--ktls", policy.ktls,
      "Ask for kernel TLS; reported per direction, with a fallback to user space where the kernel has none");
}

// "64/16K": a request and a response size, each 1 byte to 1 GiB.
std::pair<std::uint64_t, std::uint64_t> parse_rr(const std::string& text, const std::string& flag) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || text.find('/', slash + 1) != std::string::npos) {
    throw UsageError(fmt::format("{} '{}': give a request and a response size, e.g. {} 1/1 or {} 64/16K",
                                 flag, text, flag, flag));
  }
  return {parse_size(text.substr(0, slash), flag + " request size", 1, protocol::kMaxRrBytes),
          parse_size(text.substr(slash + 1), flag + " response size", 1, protocol::kMaxRrBytes)};
}

std::string size_text(std::uint64_t bytes) {
  return bytes % 1024 == 0 ? fmt::format("{}K", bytes / 1024) : std::to_string(bytes);
}

bool slow_socket_buffer(std::uint32_t bytes) {
  return bytes != 0 && bytes < kSlowSocketBufferBytes;
}

// The warning for TCP socket buffers small enough to make a run crawl;
// `given` names them as the flags did ("-w 1K").
std::string slow_buffers_warning(const std::string& given) {
  return fmt::format(
      "warning: {}: socket buffers below {} hold fewer than a few TCP segments, so the run may crawl (1 MiB "
      "can take a minute); give 64K or more, or leave the flag out for the kernel's own sizing",
      given, size_text(kSlowSocketBufferBytes));
}

}  // namespace tlscmp::cli
