// DTLS 1.2 over UDP, on the TLS library this build links (tls/dtls.hpp):
// the datagram kind's encrypted twin of udp. The BoringSSL build has none
// (its library lacks DTLSv1_listen, which tlscmp's DTLS server needs).

#include <fmt/format.h>

#include "stacks/stack.hpp"

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

// The server's DTLS context, where this build has DTLS; the datagram kind's
// receiver shakes hands with it.
class DtlsPart final : public ServerPart {
 public:
  explicit DtlsPart(const tls::Identity& identity) {
    if (tls::DtlsContext::available(why_)) context_.emplace(tls::DtlsContext::for_server(identity));
  }
  std::string refusal() const override {
    return context_ ? std::string() : why_.empty() ? "this server has no DTLS" : why_;
  }
  const tls::DtlsContext* datagram_context() const override { return context_ ? &*context_ : nullptr; }

 private:
  std::string why_;
  std::optional<tls::DtlsContext> context_;
};

std::unique_ptr<ServerPart> dtls_server(const ServerSetup& setup,
                                        const std::function<void(const std::string&)>&) {
  return std::make_unique<DtlsPart>(setup.identity);
}

}  // namespace

extern const Stack kDtlsStack;
const Stack kDtlsStack{
    .mode = Mode::dtls,
    .unavailable = no_dtls,
    .described = "DTLS 1.2",
    .version_line = dtls_line,
    .client_contexts = dtls_client,
    .server_part = dtls_server,
};

}  // namespace tlscmp::stacks
