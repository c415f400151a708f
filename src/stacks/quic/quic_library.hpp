#pragma once

// QUIC as the stack's library-free files (stack.cpp, server.cpp) see it:
// the table of the TLS library that runs it, which that library's backend
// holds (tls::Backend::stack_library("quic"); quic.cpp for OpenSSL 3.5 or
// newer, whose builds without QUIC have the same table, refusing).

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stacks/stack.hpp"
#include "tls/context.hpp"
#include "transport/stream.hpp"
#include "transport/unique_fd.hpp"

struct sockaddr_storage;

namespace tlscmp::stacks {

// A server's QUIC endpoint: the listeners on its UDP port, one a socket
// (shards: the kernel gives each peer's datagrams to one of them).
class QuicEndpoint {
 public:
  virtual ~QuicEndpoint() = default;
  virtual std::size_t shards() const = 0;
  // Waits up to `wait` for a new connection on shard `shard`; returns it,
  // its handshake perhaps not done yet (Stream::handshake() finishes it),
  // and its peer's address in `peer` where the library tells it (else
  // AF_UNSPEC); or null if none came.
  virtual std::unique_ptr<Stream> accept(std::size_t shard, std::chrono::milliseconds wait,
                                         sockaddr_storage& peer) = 0;
  // The port's datagrams so far, every listener's, and its connections now.
  virtual std::optional<UdpPath> port_path() const = 0;
};

class QuicLibrary {
 public:
  virtual ~QuicLibrary() = default;
  // Whether it has QUIC; where not, `why` (if given) says why, as --version
  // and refusals put it: "needs OpenSSL 3.5 or newer; this build has ...".
  virtual bool available(std::string* why) const = 0;
  // Whether it names a QUIC connection's peer to the server; where it does
  // not, a server counts every QUIC peer as one source.
  virtual bool names_peers() const = 0;
  // How QUIC's contexts are made: the library's QUIC method, TLS 1.3
  // alone, ALPN tlscmp, the domain's threading.
  virtual const tls::ContextShape& shape() const = 0;
  // A client's QUIC connection on `udp` (connected to the server), its
  // handshake not yet run. Throws tlscmp::Error.
  virtual std::unique_ptr<Stream> client_stream(const tls::Context& context, UniqueFd udp,
                                                const Dial& dial) const = 0;
  // The server's endpoint on `sockets`, UDP sockets bound to one port, with
  // `context` made with shape(). Throws tlscmp::Error.
  virtual std::unique_ptr<QuicEndpoint> listen(const tls::Context& context,
                                               std::vector<UniqueFd> sockets) const = 0;
  // A server's QUIC streams waited on together by one --flows loop.
  virtual std::unique_ptr<StreamPollSet> poll_set() const = 0;
};

// The QUIC of the default TLS library; null where it has none, with `why`
// (if given) saying so.
const QuicLibrary* quic_library(std::string* why = nullptr);

// Its part of a server: the listener on the server's port over UDP (server.cpp).
std::unique_ptr<ServerPart> quic_server(const ServerSetup& setup,
                                        const std::function<void(const std::string&)>& log);

}  // namespace tlscmp::stacks
