#include "app/about.hpp"

#include <sys/utsname.h>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>

#include "framing/http3.hpp"
#include "stacks/stack.hpp"
#include "tls/backend.hpp"
#include "tls/context.hpp"
#include "version.hpp"

namespace tlscmp::app {
namespace {

// Where the running kernel's modules would be: tls.ko may be there unloaded
// (the kernel loads it on the first TCP_ULP "tls"), or built in.
std::string tls_module_state() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  const std::filesystem::path dir = std::filesystem::path("/lib/modules") / u.release;
  std::ifstream builtin(dir / "modules.builtin");
  for (std::string line; std::getline(builtin, line);) {
    if (line.ends_with("/tls.ko")) return "built in";
  }
  std::error_code ec;
  for (const char* name : {"tls.ko", "tls.ko.xz", "tls.ko.zst", "tls.ko.gz"}) {
    if (std::filesystem::exists(dir / "kernel/net/tls" / name, ec)) return "a module, loaded on first use";
  }
  return {};
}

std::string kernel_tls_line() {
  std::string ulps;
  if (tls::kernel_has_tls_ulp(ulps)) return "yes: this kernel offers the tls ULP, so --ktls can use it";
  const std::string module = tls_module_state();
  if (!module.empty() && module != "unknown") return fmt::format("yes: the tls ULP is {}", module);
  return fmt::format(
      "no: this kernel offers no tls ULP (tcp_available_ulp: {}); --ktls falls back to user space",
      ulps.empty() ? "none" : ulps);
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words)
    out += (out.empty() ? "" : " ") + w;
  return out;
}

// The stacks this build runs, each with what it is: "tcp, tls (TLS 1.2, 1.3), ...".
std::string stacks_line() {
  std::string out;
  for (const stacks::Stack* stack : stacks::all_stacks()) {
    if (!stacks::unavailable(stack->mode).empty()) continue;
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", to_string(stack->mode),
                       stack->described != nullptr ? fmt::format(" ({})", stack->described) : "");
  }
  return out;
}

// "OpenSSL 3.0.19 27 Jan 2026 (built with ... headers) from Debian's ...".
std::string library_line(const tls::Backend& backend) {
  std::string library = backend.library_version();
  const std::string headers = backend.header_version();
  if (!headers.empty() && headers != library) library += fmt::format(" (built with {} headers)", headers);
  if (const std::string package = backend.library_package(); !package.empty()) library += " from " + package;
  return library;
}

// Every backend module this program loaded, by name, and those that did not load.
std::string backends_line() {
  std::string out;
  for (const tls::Backend* backend : tls::backends())
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", backend->name(), library_line(*backend));
  for (const std::string& problem : tls::backend_problems())
    out += fmt::format("; not loaded: {}", problem);
  return out;
}

}  // namespace

std::string build_description() {
  std::string out = fmt::format("tlscmp {}\n", kVersion);  // CLI11 adds the last newline
  out += fmt::format("TLS library: {}\n", library_line(tls::default_backend()));
  out += fmt::format("TLS backends: {}\n", backends_line());
  out += fmt::format("transports: {}\n", stacks_line());
  for (const stacks::Stack* stack : stacks::all_stacks()) {
    if (stack->version_line != nullptr) out += stack->version_line() + "\n";
  }
  std::string no_http3;
  out += fmt::format("http/3: {}\n", framing::has_http3(&no_http3) ? framing::http3_library()
                                                                   : fmt::format("no ({})", no_http3));
  out += fmt::format("key exchange groups: {}\n", join(tls::available_groups()));
  out += fmt::format("kernel TLS: {}", kernel_tls_line());
  return out;
}

}  // namespace tlscmp::app
