// QUIC's part of a server: its listener on the server's port over UDP,
// where this build and the server's TLS settings allow it, and why not
// otherwise (every quic test is then refused with it).

#include <sys/socket.h>

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <string>
#include <vector>

#include "error.hpp"
#include "stacks/quic/quic_library.hpp"
#include "transport/datagram.hpp"
#include "transport/socket.hpp"

namespace tlscmp::stacks {
namespace {

namespace asio = boost::asio;

// SO_RCVBUF and SO_SNDBUF of the server's QUIC socket, which all its QUIC connections share.
constexpr std::uint32_t kQuicSocketBuffer = 8u << 20;

// The server's UDP sockets at its TCP listener's address and port, each a
// listener's (QuicPort). The library serves every connection of a listener
// at each round of its events, a round costing about a microsecond a
// connection: with 1,000 --flows on one listener a round took 1.3 ms and
// carried 13 transactions. Eight keep rounds short at thousands of
// connections (1,000 flows, `--rr 1/1`, on this 2-core test host: 6,500
// transactions/s on 1 listener, 15,300 on 4, 19,500 to 21,600 on 8, as
// many on 16), at the cost of two idle threads each (the server's
// accepting thread and the library's assistant).
constexpr std::size_t kQuicShards = 8;

// One of the server's UDP sockets at its TCP listener's address and port,
// sharing it with the others (SO_REUSEPORT: the kernel gives each peer's
// datagrams to one socket, by the peer's address and port, the same one as
// long as the sockets stay).
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
  if (!ec) udp.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true), ec);
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

class QuicPart final : public ServerPart {
  // A listener of the port, as the server's thread for it sees it.
  class Shard final : public Listener {
   public:
    Shard(QuicPart& part, std::size_t index) : part_(part), index_(index) {}
    std::unique_ptr<Stream> accept(std::chrono::milliseconds wait, sockaddr_storage& peer) override {
      return part_.port_->accept(index_, wait, peer);
    }
    // Where the library does not name the peer (OpenSSL 3.5 and 3.6), the
    // caps count every QUIC connection as from one source.
    const char* unnamed_source() const override { return "quic"; }
    bool names_peers() const override { return part_.quic_->names_peers(); }

   private:
    QuicPart& part_;
    std::size_t index_;
  };

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
      std::vector<UniqueFd> sockets;
      for (std::size_t i = 0; i < kQuicShards; ++i)
        sockets.push_back(bind_quic_socket(setup));
      port_ = quic_->listen(*context_, std::move(sockets));
      for (std::size_t i = 0; i < port_->shards(); ++i)
        shards_.push_back(std::make_unique<Shard>(*this, i));
    } catch (const Error& e) {
      why_ = e.what();
      shards_.clear();
      port_.reset();
      context_.reset();
      log(fmt::format("quic: off: {}", why_));
    }
  }

  std::string refusal(std::string_view) const override {
    if (port_) return {};
    return fmt::format(
        "this server has no QUIC ({}); leave quic out of --mode, or run a server built with OpenSSL 3.5 or "
        "newer",
        why_);
  }
  std::vector<Listener*> listeners() override {
    std::vector<Listener*> out;
    for (const auto& shard : shards_)
      out.push_back(shard.get());
    return out;
  }
  std::unique_ptr<StreamPollSet> poll_set() const override { return quic_->poll_set(); }
  std::optional<UdpPath> port_path() const override { return port_ ? port_->port_path() : std::nullopt; }

 private:
  const QuicLibrary* quic_ = nullptr;
  std::string why_;
  std::optional<tls::Context> context_;  // the QUIC connections' TLS
  std::unique_ptr<QuicEndpoint> port_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace

std::unique_ptr<ServerPart> quic_server(const ServerSetup& setup,
                                        const std::function<void(const std::string&)>& log) {
  return std::make_unique<QuicPart>(setup, log);
}

}  // namespace tlscmp::stacks
