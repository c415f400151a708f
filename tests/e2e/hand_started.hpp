#pragma once

// A test started by hand over a control connection, the way the client starts
// one, for end-to-end tests that then misbehave at a chosen step.

#include <sys/socket.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kinds/side_result.hpp"
#include "protocol/messages.hpp"
#include "session/control.hpp"
#include "tls/context.hpp"
#include "transport/socket.hpp"
#include "transport/stream.hpp"

namespace tlscmp::test {

// How long a hand-driven test waits at each step: longer than the servers' own timeouts in the tests.
inline constexpr std::chrono::milliseconds kHandTimeout{5000};

struct HandStartedTest {
  // Sends the preamble and `request` to the server on 127.0.0.1:`port`, then
  // reads its preamble and acceptance; each step within `timeout`.
  HandStartedTest(std::uint16_t port, const protocol::TestRequest& request, std::chrono::milliseconds timeout)
      : control(connect_tcp("127.0.0.1", port, Deadline::after(timeout))) {
    control.set_deadline(Deadline::after(timeout));
    session::send_preamble(control, protocol::ConnectionKind::control);
    session::send_message(control, request, "the request");
    session::receive_preamble(control);
    accept = session::receive<protocol::TestAccept>(control, "the answer");
  }

  TcpStream control;
  protocol::TestAccept accept;
};

// A test driven by hand, to misbehave at a chosen step, or to lie about it
// afterwards. Each wait lasts `timeout` at most.
class HandDrivenTest {
 public:
  HandDrivenTest(std::uint16_t port, const protocol::TestRequest& test,
                 std::chrono::milliseconds timeout = kHandTimeout)
      : port_(port), timeout_(timeout), started_(port, test, timeout), mode_(test.mode) {}

  // Opens the data connection and takes the server's ready byte.
  Stream& open_data() {
    UniqueFd fd = connect_tcp("127.0.0.1", port_, Deadline::after(timeout_));
    if (mode_ == Mode::tls) {
      tls::ClientOptions config;
      config.insecure = true;
      tls_.emplace(tls::Context::for_client(config));
      auto stream = tls_->client_stream(std::move(fd), "127.0.0.1");
      stream->set_deadline(Deadline::after(timeout_));
      REQUIRE_FALSE(stream->handshake());
      data_ = std::move(stream);
    } else {
      data_ = std::make_unique<TcpStream>(std::move(fd));
    }
    data_->set_deadline(Deadline::after(timeout_));
    std::error_code ec;
    session::send_preamble(*data_, protocol::ConnectionKind::data);
    data_->write_all(protocol::encode_data_header(started_.accept.cookie, 0), ec);
    REQUIRE_FALSE(ec);
    std::byte ready{};
    data_->read_exact({&ready, 1}, ec);
    REQUIRE_FALSE(ec);
    return *data_;
  }

  // As the sender: waits for go, then sends `bytes` of payload.
  void send_payload(std::uint64_t bytes) {
    std::error_code ec;
    std::byte go{};
    data_->read_exact({&go, 1}, ec);
    REQUIRE_FALSE(ec);
    const std::vector<std::byte> chunk(64 * 1024, std::byte{'x'});
    for (std::uint64_t sent = 0; sent < bytes;) {
      const std::size_t n = std::min<std::uint64_t>(chunk.size(), bytes - sent);
      data_->write_all({chunk.data(), n}, ec);
      REQUIRE_FALSE(ec);
      sent += n;
    }
  }

  // The server's account of the test.
  kinds::SideResult server_result() {
    started_.control.set_deadline(Deadline::after(timeout_));
    return session::receive<kinds::SideResult>(started_.control, "the server's result");
  }

  int data_fd() const { return data_->native_handle(); }
  // Ends the payload stream properly (close_notify in TLS, then FIN).
  void end_data() {
    std::error_code ec;
    data_->shutdown_send(ec);
    REQUIRE_FALSE(ec);
  }
  // Closes the data connection with a reset (SO_LINGER 0), not a FIN.
  void reset_data() {
    const linger reset{1, 0};
    ::setsockopt(data_->native_handle(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    data_.reset();
  }
  TcpStream& control() { return started_.control; }
  const protocol::TestAccept& accept() const { return started_.accept; }

 private:
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
  HandStartedTest started_;
  Mode mode_;
  std::optional<tls::Context> tls_;
  std::unique_ptr<Stream> data_;
};

}  // namespace tlscmp::test
