#include "cli/common_flags.hpp"

#include <fmt/ranges.h>
#include <algorithm>
#include <cctype>

#include "error.hpp"
#include "tls/backend.hpp"

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

CLI::Option* add_seconds(CLI::App* cmd, const std::string& names, std::chrono::milliseconds& target,
                         double min, double max, const std::string& what) {
  return cmd
      ->add_option_function<double>(
          names, [&target](double s) { target = milliseconds_of(s); }, what)
      ->check(NumberRange(min, max))
      ->default_str(fmt::format("{:g}", seconds(target)));
}

void add_timeout_flags(CLI::App* cmd, session::Timeouts& t) {
  add_seconds(cmd, "--connect-timeout", t.connect, 0.001, kMaxTimeoutS,
              "Seconds a TCP connect (and name lookup) may take");
  add_seconds(cmd, "--handshake-timeout", t.handshake, 0.001, kMaxTimeoutS,
              "Seconds a TLS handshake and connection preamble may take");
  add_seconds(cmd, "--control-timeout", t.control, 0.001, kMaxTimeoutS,
              "Seconds each control message may take");
  add_seconds(cmd, "--idle-timeout", t.idle, 0.001, kMaxTimeoutS,
              "Seconds a transfer may go without any progress");
}

void add_tls_library_flag(CLI::App* cmd) {
  cmd->add_option_function<std::string>(
         "--tls-lib",
         [](const std::string& name) {
           std::string why;
           if (!tls::choose_default_backend(name, why)) throw CLI::ValidationError("--tls-lib " + name, why);
         },
         "The TLS library to run TLS with: openssl (the default), or another backend tlscmp --version lists "
         "(boringssl)")
      ->type_name("NAME")
      ->trigger_on_parse();
}

std::vector<const tls::Backend*> checked_libraries(const std::vector<std::string>& given) {
  std::vector<const tls::Backend*> chosen;
  for (const std::string& name : given) {
    if (name == "all") {
      for (const tls::Backend* backend : tls::backends())
        if (std::ranges::find(chosen, backend) == chosen.end()) chosen.push_back(backend);
      continue;
    }
    const tls::Backend* backend = tls::find_backend(name);
    if (backend == nullptr)
      throw UsageError(fmt::format("--tls-lib {}: this tlscmp has no {} backend; give some of {}, or all",
                                   name, name, fmt::join(tls::backend_names(), ", ")));
    if (std::ranges::find(chosen, backend) == chosen.end()) chosen.push_back(backend);
  }
  if (chosen.empty()) chosen.push_back(&tls::default_backend());
  return chosen;
}

void add_tls_libraries_flags(CLI::App* cmd, spec::TlsPolicy& policy) {
  cmd->add_option_function<std::vector<std::string>>(
         "--tls-lib",
         [&policy](const std::vector<std::string>& names) {
           std::vector<const tls::Backend*> chosen;
           try {
             chosen = checked_libraries(names);
           } catch (const UsageError& e) {
             throw CLI::ValidationError(e.what());
           }
           std::string why;
           tls::choose_default_backend(chosen.front()->name(), why);
           policy.libraries.clear();
           for (const tls::Backend* backend : chosen)
             policy.libraries.emplace_back(backend->name());
         },
         "The TLS libraries to run TLS with, comma-separated or all: each its own TLS variants beside tcp, "
         "in the same rounds, the server shaking hands with the same one (--server-tls-lib: another); "
         "openssl (the default) and the other backends tlscmp --version lists")
      ->delimiter(',')
      ->type_name("LIST")
      ->trigger_on_parse();
  cmd->add_option_function<std::string>(
         "--server-tls-lib",
         [&policy](const std::string& name) {
           std::string lower;
           for (const char c : name)
             lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
           if (!spec::is_library_name(lower))
             throw CLI::ValidationError("--server-tls-lib " + name,
                                        "not a library's name (tlscmp --version on the server lists them)");
           policy.server_library = lower;
         },
         "The TLS library the server shakes hands with in every TLS variant, for interop (a BoringSSL client "
         "against an OpenSSL server); default: each variant's own (--tls-lib)")
      ->type_name("NAME");
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
