// TLS over TCP, on the TLS libraries this build has (tls/backend.hpp): TLS
// 1.2 and 1.3 on a TCP connection to the server's port, which the server
// tells from plain TCP by its first byte (a handshake record). A client
// that asks the server for a library by name (a run of several libraries,
// --tls-lib a,b) names it in the clear before its ClientHello: a first byte
// no TLS record or tlscmp preamble starts with, then the name.

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <array>
#include <cerrno>
#include <cstring>

#include "error.hpp"
#include "spec/tls_policy.hpp"
#include "stacks/stack.hpp"
#include "transport/socket.hpp"

namespace tlscmp::stacks {
namespace {

constexpr std::byte kTlsHandshakeRecord{0x16};  // the first byte of every TLS ClientHello
constexpr std::byte kLibraryNamed{0x01};        // then a length byte and the library's name

ClientContexts tls_client(const tls::ClientOptions& options) {
  return {tls::Context::for_client(options), std::nullopt};
}

void name_library(int fd, const std::string& library) {
  if (!spec::is_library_name(library))
    throw Error(fmt::format("a TLS library's name is 1 to {} bytes of a-z, 0-9 and '-', not '{}'",
                            spec::kLongestLibraryName, library));
  std::string named(1, static_cast<char>(kLibraryNamed));
  named += static_cast<char>(library.size());
  named += library;
  // The socket was just connected: its send buffer takes these bytes at once.
  const ssize_t sent = ::send(fd, named.data(), named.size(), MSG_NOSIGNAL);
  if (sent != static_cast<ssize_t>(named.size())) {
    throw Error(fmt::format("cannot name the TLS library {} to the server: {}", library,
                            sent < 0 ? std::strerror(errno) : "short write"));
  }
}

std::unique_ptr<Stream> tls_client_stream(UniqueFd fd, const tls::Context* tls, const Dial& dial) {
  if (!dial.library.empty()) name_library(fd.get(), dial.library);
  return tls->client_stream(std::move(fd), dial.host, dial.resume, dial.server_name);
}

// Reads what follows kLibraryNamed: the name, within `wait`.
std::string named_library(int fd, std::chrono::milliseconds wait) {
  const Deadline deadline = Deadline::after(wait);
  std::array<char, 2 + spec::kLongestLibraryName> got{};
  std::size_t have = 0;
  std::size_t want = 2;
  while (have < want) {
    if (const std::error_code ec = wait_fd(fd, POLLIN, deadline))
      throw Error(fmt::format("a connection began to name its TLS library and stopped: {}", describe(ec)));
    const ssize_t n = ::recv(fd, got.data() + have, want - have, 0);
    if (n == 0) throw Error("a connection closed while naming its TLS library");
    if (n < 0 && errno != EINTR && errno != EAGAIN)
      throw Error(fmt::format("reading a connection's TLS library name: {}", std::strerror(errno)));
    have += n > 0 ? static_cast<std::size_t>(n) : 0;
    if (have >= 2 && want == 2) {
      const auto length = static_cast<unsigned char>(got[1]);
      if (length == 0 || length > spec::kLongestLibraryName)
        throw Error(fmt::format("a connection named a TLS library of {} bytes (1 to {} are names)", length,
                                spec::kLongestLibraryName));
      want = 2 + length;
    }
  }
  std::string name(got.data() + 2, want - 2);
  // A name as --tls-lib takes it: nothing else reaches the log.
  if (!spec::is_library_name(name))
    throw Error("a connection named a TLS library with bytes no library's name has");
  return name;
}

// The server's TLS connections: those on its TCP port that start with a
// handshake record, as Beast's flex server tells them from plain ones, on
// its default library; or with a library's name, on that library.
class TlsPart final : public ServerPart {
 public:
  TlsPart(const tls::ServerContexts& contexts, std::chrono::milliseconds wait)
      : contexts_(contexts), wait_(wait) {}
  std::unique_ptr<Stream> take(UniqueFd& fd, std::byte first) override {
    if (first == kTlsHandshakeRecord) return wrap(fd, {});
    if (first != kLibraryNamed) return nullptr;
    return wrap(fd, named_library(fd.get(), wait_));
  }
  std::unique_ptr<Stream> wrap(UniqueFd& fd, std::string_view library) const override {
    return contexts_.of(library).server_stream(std::move(fd));
  }

 private:
  const tls::ServerContexts& contexts_;
  std::chrono::milliseconds wait_;
};

std::unique_ptr<ServerPart> tls_server(const ServerSetup& setup,
                                       const std::function<void(const std::string&)>&) {
  return std::make_unique<TlsPart>(*setup.tls, setup.preamble_timeout);
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
