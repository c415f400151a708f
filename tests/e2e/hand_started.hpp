#pragma once

// A test started by hand over a control connection, the way the client starts
// one, for end-to-end tests that then misbehave at a chosen step.

#include <chrono>
#include <cstdint>

#include "app/control.hpp"
#include "protocol/messages.hpp"
#include "transport/socket.hpp"
#include "transport/stream.hpp"

namespace tlscmp::test {

struct HandStartedTest {
  // Sends the preamble and `request` to the server on 127.0.0.1:`port`, then
  // reads its preamble and acceptance; each step within `timeout`.
  HandStartedTest(std::uint16_t port, const protocol::TestRequest& request, std::chrono::milliseconds timeout)
      : control(connect_tcp("127.0.0.1", port, Deadline::after(timeout))) {
    control.set_deadline(Deadline::after(timeout));
    app::send_preamble(control, protocol::ConnectionKind::control);
    app::send_message(control, request, "the request");
    app::receive_preamble(control);
    accept = app::receive<protocol::TestAccept>(control, "the answer");
  }

  TcpStream control;
  protocol::TestAccept accept;
};

}  // namespace tlscmp::test
