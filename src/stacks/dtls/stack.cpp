// DTLS 1.2 over UDP (tls/dtls.hpp): the datagram kind's encrypted twin of
// udp, on each TLS library that has it (BoringSSL lacks DTLSv1_listen,
// which tlscmp's DTLS server needs). The test request names the library,
// as a TLS one does; the server makes each library's context on first use.

#include <fmt/format.h>
#include <map>
#include <mutex>

#include "error.hpp"
#include "stacks/stack.hpp"
#include "tls/backend.hpp"

namespace tlscmp::stacks {
namespace {

std::string no_dtls() {
  std::string why;
  tls::DtlsContext::available(why);
  return why;
}

std::string dtls_line() {
  return fmt::format("DTLS: {}", tls::has_dtls() ? "yes"
                                                 : "no (tlscmp's DTLS server needs DTLSv1_listen, which this "
                                                   "library lacks)");
}

ClientContexts dtls_client(const tls::ClientOptions& options) {
  return {std::nullopt, tls::DtlsContext::for_client(options)};
}

std::string library_without_dtls(const tls::Backend& library) {
  std::string why;
  return tls::DtlsContext::available(why, &library) ? std::string() : why;
}

// The server's DTLS contexts, one per library a test asks for, made on
// first use from the server's identity; the datagram kind's receiver
// shakes hands with them. The library is found by its name as TLS's is
// (the server's TLS contexts name those it has).
class DtlsPart final : public ServerPart {
 public:
  explicit DtlsPart(const ServerSetup& setup) : identity_(setup.identity), tls_(*setup.tls) {}
  std::string refusal(std::string_view library) const override {
    try {
      std::string why;
      if (tls::DtlsContext::available(why, &tls_.of(library).backend())) return {};
      return why.empty() ? "this server has no DTLS" : why;
    } catch (const Error& e) {
      return e.what();
    }
  }
  const tls::DtlsContext* datagram_context(std::string_view library) const override {
    const tls::Backend& backend = tls_.of(library).backend();
    const std::lock_guard lock(mutex_);
    auto made = made_.find(&backend);
    if (made == made_.end())
      made = made_.emplace(&backend, tls::DtlsContext::for_server(identity_, &backend)).first;
    return &made->second;
  }

 private:
  tls::Identity identity_;
  const tls::ServerContexts& tls_;
  mutable std::mutex mutex_;  // guards made_
  mutable std::map<const tls::Backend*, tls::DtlsContext> made_;
};

std::unique_ptr<ServerPart> dtls_server(const ServerSetup& setup,
                                        const std::function<void(const std::string&)>&) {
  return std::make_unique<DtlsPart>(setup);
}

}  // namespace

extern const Stack kDtlsStack;
const Stack kDtlsStack{
    .mode = Mode::dtls,
    .unavailable = no_dtls,
    .described = "DTLS 1.2",
    .version_line = dtls_line,
    .client_contexts = dtls_client,
    .refuse_library = library_without_dtls,
    .server_part = dtls_server,
};

}  // namespace tlscmp::stacks
