// QUIC's part of a server: its listener on the server's port over UDP,
// where this build and the server's TLS settings allow it, and why not
// otherwise (every quic test is then refused with it).

#include <sys/socket.h>

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/ip/v6_only.hpp>

#include "error.hpp"
#include "stacks/quic/quic_library.hpp"
#include "transport/datagram.hpp"
#include "transport/socket.hpp"

namespace tlscmp::stacks {
namespace {

namespace asio = boost::asio;

// SO_RCVBUF and SO_SNDBUF of the server's QUIC socket, which all its QUIC connections share.
constexpr std::uint32_t kQuicSocketBuffer = 8u << 20;

// The server's UDP socket at its TCP listener's address and port.
UniqueFd bind_quic_socket(const ServerSetup& setup) {
  asio::io_context io;
  asio::ip::udp::socket udp(io);
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(setup.address, ec);
  if (ec) throw Error(fmt::format("cannot bind UDP to '{}': {}", setup.address, ec.message()));
  const asio::ip::udp::endpoint endpoint(address, setup.port);
  udp.open(endpoint.protocol(), ec);
  if (!ec && endpoint.protocol() == asio::ip::udp::v6() && setup.dual_stack)
    udp.set_option(asio::ip::v6_only(false), ec);
  if (!ec) udp.bind(endpoint, ec);
  if (ec) throw Error(fmt::format("cannot bind UDP port {}: {}", endpoint.port(), ec.message()));
  UniqueFd fd(udp.release());
  set_nonblocking(fd.get(), true);
  // Room for bursts of datagrams from many connections (the kernel caps
  // it at net.core.rmem_max / wmem_max).
  set_receive_buffer(fd.get(), kQuicSocketBuffer);
  set_send_buffer(fd.get(), kQuicSocketBuffer);
  return fd;
}

class QuicPart final : public ServerPart, public Listener {
 public:
  QuicPart(const ServerSetup& setup, const std::function<void(const std::string&)>& log) {
    quic_ = quic_library(&why_);
    if (quic_ == nullptr) return;
    if (setup.policy.version == "1.2") {
      why_ = "its --tls-version 1.2 leaves QUIC out, which runs TLS 1.3";
      return;
    }
    try {
      context_.emplace(tls::Context::for_server({setup.identity,
                                                 0,
                                                 setup.policy,
                                                 setup.client_ca_file,
                                                 setup.require_client_cert,
                                                 setup.resumption,
                                                 &quic_->shape(),
                                                 nullptr,
                                                 {}}));
      listener_ = quic_->listen(*context_, bind_quic_socket(setup));
    } catch (const Error& e) {
      why_ = e.what();
      listener_.reset();
      context_.reset();
      log(fmt::format("quic: off: {}", why_));
    }
  }

  std::string refusal(std::string_view) const override {
    if (listener_) return {};
    return fmt::format(
        "this server has no QUIC ({}); leave quic out of --mode, or run a server built with OpenSSL 3.5 or "
        "newer",
        why_);
  }
  Listener* listener() override { return listener_ ? this : nullptr; }

  std::unique_ptr<Stream> accept(std::chrono::milliseconds wait, sockaddr_storage& peer) override {
    return listener_->accept(wait, peer);
  }
  std::unique_ptr<StreamPollSet> poll_set() const override { return quic_->poll_set(); }
  // Where the library does not name the peer (OpenSSL 3.5 and 3.6), the
  // caps count every QUIC connection as from one source.
  const char* unnamed_source() const override { return "quic"; }
  bool names_peers() const override { return quic_->names_peers(); }

 private:
  const QuicLibrary* quic_ = nullptr;
  std::string why_;
  std::optional<tls::Context> context_;  // the QUIC connections' TLS
  std::unique_ptr<QuicEndpoint> listener_;
};

}  // namespace

std::unique_ptr<ServerPart> quic_server(const ServerSetup& setup,
                                        const std::function<void(const std::string&)>& log) {
  return std::make_unique<QuicPart>(setup, log);
}

}  // namespace tlscmp::stacks
