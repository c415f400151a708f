#pragma once

// The vocabulary every layer shares: which transport, which way, which
// side. Which test (TestKind) is spec/spec.hpp's, with what each kind reads.

#include <array>
#include <cstdint>

namespace tlscmp {

// tcp and tls stream bytes; udp and dtls send datagrams (seeds/002).
enum class Mode : std::uint8_t { tcp, tls, udp, dtls };
inline constexpr std::array kAllModes{Mode::tcp, Mode::tls, Mode::udp, Mode::dtls};
// Who sends the payload: the client (the default) or, with -R, the server.
enum class Direction : std::uint8_t { client_to_server, server_to_client };
enum class Role : std::uint8_t { sender, receiver };

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
