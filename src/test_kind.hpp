#pragma once

// The vocabulary every layer shares: which transport, which way, which side.

#include <cstdint>

namespace tlscmp {

enum class Mode : std::uint8_t { tcp, tls };
// Who sends the payload: the client (the default) or, with -R, the server.
enum class Direction : std::uint8_t { client_to_server, server_to_client };
enum class Role : std::uint8_t { sender, receiver };

inline const char* to_string(Mode mode) {
  return mode == Mode::tls ? "tls" : "tcp";
}
inline const char* to_string(Direction direction) {
  return direction == Direction::server_to_client ? "server_to_client" : "client_to_server";
}
inline const char* to_string(Role role) {
  return role == Role::sender ? "sender" : "receiver";
}

}  // namespace tlscmp
