// The backends of this process, and what the rest of tlscmp calls on a TLS
// library without naming one: each call goes to the backend it concerns (a
// context's own), or to the default one. No library's headers here.

#include "tls/backend.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "error.hpp"

// A backend's entry, its one instance: a module's (loaded below), or, in a
// program linked with one backend's objects (the unit tests,
// tlscmp-boringssl), that one's, which is then the only one.
extern "C" const tlscmp::tls::Backend* tlscmp_tls_backend_v1() __attribute__((weak));

namespace tlscmp::tls {
namespace {

// The libraries a module may hold, in the order they are loaded and
// listed: OpenSSL, the default, first.
constexpr const char* kLibraries[] = {"openssl", "boringssl", "gnutls", "wolfssl"};

// Where the modules are looked for: TLSCMP_BACKEND_DIR; beside the
// program (backends/, the build tree's layout); ../lib/tlscmp from it,
// where they are installed (/usr/bin/tlscmp, /usr/lib/tlscmp/tls-*.so; or
// any prefix: cmake --install, a binary copied with its modules).
std::vector<std::string> module_dirs() {
  std::vector<std::string> dirs;
  if (const char* dir = std::getenv("TLSCMP_BACKEND_DIR"); dir != nullptr && *dir != '\0') {
    dirs.emplace_back(dir);
    return dirs;
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back((self.parent_path() / "backends").string());
    dirs.push_back((self.parent_path().parent_path() / "lib" / "tlscmp").string());
  }
  return dirs;
}

// Each library's module, from the first folder that has any. A module is
// loaded RTLD_LOCAL: its library's symbols stay its own, so that
// OpenSSL's and BoringSSL's (the same names) do not meet.
struct Loaded {
  std::vector<const Backend*> backends;
  std::vector<std::string> problems;  // a module that did not load, and why
  std::string searched;               // the folders, for the message where none loaded
};

Loaded load_modules() {
  Loaded loaded;
  for (const std::string& dir : module_dirs()) {
    loaded.searched += (loaded.searched.empty() ? "" : ", ") + dir;
    for (const char* library : kLibraries) {
      const std::string path = fmt::format("{}/tls-{}.so", dir, library);
      if (::access(path.c_str(), F_OK) != 0) continue;
      void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      const char* failure = handle == nullptr ? ::dlerror() : nullptr;
      using Entry = const Backend* (*)();
      auto entry =
          handle != nullptr ? reinterpret_cast<Entry>(::dlsym(handle, "tlscmp_tls_backend_v1")) : nullptr;
      if (entry == nullptr) {
        loaded.problems.push_back(
            fmt::format("{}: {}", path, failure != nullptr ? failure : "no tlscmp backend in it"));
        continue;
      }
      loaded.backends.push_back(entry());  // never unloaded: its objects live as long as the process
    }
    if (!loaded.backends.empty()) break;
  }
  return loaded;
}

// The backend --tls-lib chose; null: the first loaded.
std::atomic<const Backend*> chosen_backend{nullptr};

const Loaded& loaded() {
  static const Loaded modules = [] {
    if (tlscmp_tls_backend_v1 != nullptr) return Loaded{{tlscmp_tls_backend_v1()}, {}, {}};
    return load_modules();
  }();
  return modules;
}

}  // namespace

std::span<const Backend* const> backends() {
  const Loaded& modules = loaded();
  if (modules.backends.empty()) {
    throw Error(
        fmt::format("no TLS library: no backend module loaded from {}{}; reinstall tlscmp, or set "
                    "TLSCMP_BACKEND_DIR to the folder of its tls-*.so",
                    modules.searched,
                    modules.problems.empty() ? "" : fmt::format(" ({})", fmt::join(modules.problems, "; "))));
  }
  return modules.backends;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Backend* backend : backends())
    names.emplace_back(backend->name());
  return names;
}

std::span<const std::string> backend_problems() {
  return loaded().problems;
}

const Backend& default_backend() {
  if (const Backend* chosen = chosen_backend.load()) return *chosen;
  return *backends().front();
}

bool choose_default_backend(std::string_view name, std::string& why) {
  if (const Backend* backend = find_backend(name)) {
    chosen_backend = backend;
    return true;
  }
  const std::vector<std::string> names = backend_names();
  if (name.find(',') != std::string_view::npos) {
    why = fmt::format("one library a side for now (several in one run are to come): give one of {}",
                      fmt::join(names, ", "));
    return false;
  }
  why =
      fmt::format("this tlscmp has no {} backend; it has {} (tlscmp --version lists them{})", name,
                  fmt::join(names, ", "), backend_problems().empty() ? "" : ", and those that did not load");
  return false;
}

const Backend* find_backend(std::string_view name) {
  for (const Backend* backend : backends()) {
    const std::string_view own = backend->name();
    const auto same = [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; };
    if (std::ranges::equal(name, own, same)) return backend;  // "BoringSSL" as "boringssl"
  }
  return nullptr;
}

Context Context::for_server(const ServerOptions& config) {
  const Backend& backend = backend_of(config.library);
  if (!config.policy.groups.empty()) return backend.server_context(config);
  // A test server takes every key exchange group its library has, not just
  // the library's default few, so that a client may try any of them
  // (--groups, --compare-groups). Which one is used, the client decides: it
  // sends its key shares in its own order.
  ServerOptions every_group = config;
  every_group.policy.groups = fmt::format("{}", fmt::join(backend.available_groups(), ":"));
  return backend.server_context(every_group);
}

Context Context::for_client(const ClientOptions& config) {
  Context made = backend_of(config.library).client_context(config);
  made.server_library_ = config.server_library;
  return made;
}

void Context::add_server_name(const std::string& server_name, const Context& other) {
  if (&other.backend() != backend_)
    throw Error(fmt::format("a {} context cannot serve the name {} with a {} certificate context",
                            backend_->name(), server_name, other.backend().name()));
  impl_->add_server_name(server_name, *other.impl_);
}

bool DtlsContext::available(std::string& why, const Backend* library) {
  return backend_of(library).dtls_available(why);
}

DtlsContext DtlsContext::for_server(const Identity& identity, const Backend* library) {
  return backend_of(library).dtls_server_context(identity);
}

DtlsContext DtlsContext::for_client(const ClientOptions& config) {
  DtlsContext made = backend_of(config.library).dtls_client_context(config);
  made.made_ = std::make_shared<const Made>(Made{made.made_->impl, config.server_library});
  return made;
}

std::string library_version() {
  return default_backend().library_version();
}

std::string header_version() {
  return default_backend().header_version();
}

std::string library_package() {
  return default_backend().library_package();
}

bool has_dtls() {
  std::string why;
  return default_backend().dtls_available(why);
}

std::vector<std::string> available_groups() {
  return default_backend().available_groups();
}

bool releases_buffers_always() {
  return default_backend().releases_buffers_always();
}

CertificateSet generate_certificates(const std::vector<std::string>& extra_hosts, int validity_days,
                                     KeyType key_type, const std::optional<Identity>& ca) {
  return default_backend().generate_certificates(extra_hosts, validity_days, key_type, ca);
}

Identity load_identity(const std::string& cert_file, const std::string& key_file) {
  return default_backend().load_identity(cert_file, key_file);
}

std::string certificate_key_type(const std::string& chain_pem) {
  return default_backend().certificate_key_type(chain_pem);
}

CertificateFacts certificate_facts(const std::string& chain_pem) {
  return default_backend().certificate_facts(chain_pem);
}

std::string certificate_fingerprint(const std::string& chain_pem) {
  return default_backend().certificate_fingerprint(chain_pem);
}

measure::AeadFigure measure_aead(const SpeedSuite& suite, std::size_t payload_bytes, double seconds) {
  return default_backend().measure_aead(suite, payload_bytes, seconds);
}

}  // namespace tlscmp::tls
