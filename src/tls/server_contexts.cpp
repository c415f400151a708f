#include "tls/server_contexts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "error.hpp"

namespace tlscmp::tls {
namespace {

// A context of `options` made by `library`.
Context made_by(const Backend& library, ServerOptions options) {
  options.library = &library;
  return Context::for_server(options);
}

}  // namespace

ServerContexts::ServerContexts(ServerOptions options) : options_(std::move(options)) {
  const Backend& first = backend_of(options_.library);
  auto made = std::make_unique<Context>(make(first));
  primary_ = made.get();
  made_.emplace(&first, std::move(made));
}

Context ServerContexts::make(const Backend& library) const {
  Context context = made_by(library, options_);
  for (const auto& [name, named] : names_)
    context.add_server_name(name, made_by(library, named));
  return context;
}

const Context& ServerContexts::of(std::string_view name) const {
  if (name.empty()) return *primary_;
  const Backend* library = find_backend(name);
  if (library == nullptr) {
    throw Error(fmt::format(
        "this server holds no TLS library '{}' (it has {}): name one of those (--tls-lib, --server-tls-lib)",
        name, fmt::join(backend_names(), ", ")));
  }
  std::lock_guard lock(mutex_);
  auto it = made_.find(library);
  if (it == made_.end()) it = made_.emplace(library, std::make_unique<Context>(make(*library))).first;
  return *it->second;
}

void ServerContexts::add_server_name(const std::string& server_name, const ServerOptions& options) {
  std::lock_guard lock(mutex_);
  for (auto& [library, context] : made_)
    context->add_server_name(server_name, made_by(*library, options));
  names_.emplace_back(server_name, options);
}

}  // namespace tlscmp::tls
