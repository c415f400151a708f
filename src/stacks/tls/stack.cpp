// TLS over TCP, on the TLS library this build links (tls/): TLS 1.2 and
// 1.3 on a TCP connection to the server's port, which the server tells from
// plain TCP by its first byte (a handshake record).

#include "stacks/stack.hpp"

namespace tlscmp::stacks {
namespace {

ClientContexts tls_client(const tls::ClientOptions& options) {
  return {tls::Context::for_client(options), std::nullopt};
}

}  // namespace

extern const Stack kTlsStack;
const Stack kTlsStack{
    .mode = Mode::tls,
    .described = "TLS 1.2, 1.3",
    .client_contexts = tls_client,
    .open_socket = open_tcp_socket,
};

}  // namespace tlscmp::stacks
