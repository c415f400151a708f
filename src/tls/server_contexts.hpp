#pragma once

// A server's TLS contexts, one per library it serves on its port: the
// default library's made at the start, another's on the first test that
// asks for it (the request names it), each from the same options and with
// every name (a key type's certificate) added so far, so that a client of
// any library finds the same server.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tls/backend.hpp"
#include "tls/context.hpp"

namespace tlscmp::tls {

class ServerContexts {
 public:
  // Makes the default library's context (or `options.library`'s). Throws tlscmp::Error.
  explicit ServerContexts(ServerOptions options);

  // The context of the library named `name` as --tls-lib takes it ("": the
  // first one's), made on first use. Thread-safe; the reference lives as
  // long as this. Throws tlscmp::Error naming those there are where this
  // process holds no such library, or where its context cannot be made.
  const Context& of(std::string_view name) const;
  const Context& primary() const { return *primary_; }

  // A client that asks for `server_name` (SNI) gets a context of `options`
  // from each library, now and on first use. Throws tlscmp::Error.
  void add_server_name(const std::string& server_name, const ServerOptions& options);

 private:
  Context make(const Backend& library) const;

  ServerOptions options_;
  const Context* primary_ = nullptr;
  mutable std::mutex mutex_;  // guards what follows
  mutable std::map<const Backend*, std::unique_ptr<Context>> made_;
  std::vector<std::pair<std::string, ServerOptions>> names_;
};

}  // namespace tlscmp::tls
