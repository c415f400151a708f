// TLS over TCP, on the TLS library this build links (tls/): TLS 1.2 and
// 1.3 on a TCP connection to the server's port, which the server tells from
// plain TCP by its first byte (a handshake record).

#include "stacks/stack.hpp"

namespace tlscmp::stacks {
namespace {

constexpr std::byte kTlsHandshakeRecord{0x16};  // the first byte of every TLS ClientHello

ClientContexts tls_client(const tls::ClientOptions& options) {
  return {tls::Context::for_client(options), std::nullopt};
}

std::unique_ptr<Stream> tls_client_stream(UniqueFd fd, const tls::Context* tls, const Dial& dial) {
  return tls->client_stream(std::move(fd), dial.host, dial.resume, dial.server_name);
}

// The server's TLS connections: those on its TCP port that start with a
// handshake record, as Beast's flex server tells them from plain ones.
class TlsPart final : public ServerPart {
 public:
  explicit TlsPart(const tls::Context& context) : context_(context) {}
  std::unique_ptr<Stream> take(UniqueFd& fd, std::byte first) override {
    return first == kTlsHandshakeRecord ? wrap(fd) : nullptr;
  }
  std::unique_ptr<Stream> wrap(UniqueFd& fd) const override { return context_.server_stream(std::move(fd)); }

 private:
  const tls::Context& context_;
};

std::unique_ptr<ServerPart> tls_server(const ServerSetup& setup,
                                       const std::function<void(const std::string&)>&) {
  return std::make_unique<TlsPart>(*setup.tls);
}

}  // namespace

extern const Stack kTlsStack;
const Stack kTlsStack{
    .mode = Mode::tls,
    .described = "TLS 1.2, 1.3",
    .client_contexts = tls_client,
    .open_socket = open_tcp_socket,
    .client_stream = tls_client_stream,
    .server_part = tls_server,
};

}  // namespace tlscmp::stacks
