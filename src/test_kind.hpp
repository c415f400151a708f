#pragma once

// The vocabulary every layer shares: which test, which transport, which way,
// which side.

#include <array>
#include <cstdint>

namespace tlscmp {

// What a test measures; each kind's folder under kinds/ runs it. A test
// request names its kind, and nothing infers it from other fields.
//   stream: bulk bytes (-n, -t, -P, --bidir); handshake: --handshakes and
//   --compare-groups alone; datagram: --mode udp or dtls; rr: --rr; crr: --crr.
enum class TestKind : std::uint8_t { stream, handshake, datagram, rr, crr };
inline constexpr std::array kAllKinds{TestKind::stream, TestKind::handshake, TestKind::datagram, TestKind::rr,
                                      TestKind::crr};

// tcp and tls stream bytes; udp and dtls send datagrams (seeds/002).
enum class Mode : std::uint8_t { tcp, tls, udp, dtls };
// Who sends the payload: the client (the default) or, with -R, the server.
enum class Direction : std::uint8_t { client_to_server, server_to_client };
enum class Role : std::uint8_t { sender, receiver };

inline const char* to_string(TestKind kind) {
  switch (kind) {
    case TestKind::handshake:
      return "handshake";
    case TestKind::datagram:
      return "datagram";
    case TestKind::rr:
      return "rr";
    case TestKind::crr:
      return "crr";
    case TestKind::stream:
      break;
  }
  return "stream";
}
// rr and crr: transactions of a request and a response, of the rr sizes.
inline bool is_request_response(TestKind kind) {
  return kind == TestKind::rr || kind == TestKind::crr;
}
inline const char* to_string(Mode mode) {
  switch (mode) {
    case Mode::tls:
      return "tls";
    case Mode::udp:
      return "udp";
    case Mode::dtls:
      return "dtls";
    case Mode::tcp:
      break;
  }
  return "tcp";
}
// udp and dtls: datagrams counted one by one, loss allowed.
inline bool is_datagram(Mode mode) {
  return mode == Mode::udp || mode == Mode::dtls;
}
// tls and dtls: encrypted.
inline bool is_encrypted(Mode mode) {
  return mode == Mode::tls || mode == Mode::dtls;
}
inline const char* to_string(Direction direction) {
  return direction == Direction::server_to_client ? "server_to_client" : "client_to_server";
}
inline const char* to_string(Role role) {
  return role == Role::sender ? "sender" : "receiver";
}

}  // namespace tlscmp
