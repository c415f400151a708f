#pragma once

// The vocabulary every layer shares: which transport, which way, which
// side. Which test (TestKind) is spec/spec.hpp's, with what each kind reads.

#include <array>
#include <cstdint>

namespace tlscmp {

// tcp, tls and quic stream bytes; udp and dtls send datagrams (seeds/002).
// quic: TLS 1.3 inside QUIC over UDP, its bytes on QUIC streams.
enum class Mode : std::uint8_t { tcp, tls, udp, dtls, quic };
inline constexpr std::array kAllModes{Mode::tcp, Mode::tls, Mode::udp, Mode::dtls, Mode::quic};
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
    case Mode::quic:
      return "quic";
    case Mode::tcp:
      break;
  }
  return "tcp";
}
// udp and dtls: datagrams counted one by one, loss allowed.
inline bool is_datagram(Mode mode) {
  return mode == Mode::udp || mode == Mode::dtls;
}
// tls, dtls and quic: encrypted.
inline bool is_encrypted(Mode mode) {
  return mode == Mode::tls || mode == Mode::dtls || mode == Mode::quic;
}
// tls and quic: a TLS 1.3 (tls: or 1.2) handshake, then a byte stream.
inline bool is_tls_stream(Mode mode) {
  return mode == Mode::tls || mode == Mode::quic;
}
inline const char* to_string(Direction direction) {
  return direction == Direction::server_to_client ? "server_to_client" : "client_to_server";
}
inline const char* to_string(Role role) {
  return role == Role::sender ? "sender" : "receiver";
}

}  // namespace tlscmp
