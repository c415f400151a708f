#include "tls/server_contexts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "error.hpp"

namespace tlscmp::tls {

ServerContexts::ServerContexts(ServerOptions options) : options_(std::move(options)) {
  const Backend& first = backend_of(options_.library);
  auto made = std::make_unique<Context>(make(first));
  primary_ = made.get();
  made_.emplace(&first, std::move(made));
}

Context ServerContexts::make(const Backend& library) const {
  ServerOptions options = options_;
  options.library = &library;
  Context context = Context::for_server(options);
  for (const auto& [name, named] : names_) {
    ServerOptions of_name = named;
    of_name.library = &library;
    context.add_server_name(name, Context::for_server(of_name));
  }
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
  for (auto& [library, context] : made_) {
    ServerOptions of_name = options;
    of_name.library = library;
    context->add_server_name(server_name, Context::for_server(of_name));
  }
  names_.emplace_back(server_name, options);
}

}  // namespace tlscmp::tls
