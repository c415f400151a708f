#pragma once

// The vocabulary every layer shares: which transport, which way, which
// side. Which test (TestKind) is spec/spec.hpp's, with what each kind reads.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace tlscmp {

// What carries a test's bytes: each mode is a stack (stacks/). tcp, tls and
// quic stream bytes; udp and dtls send datagrams (seeds/002). quic: TLS 1.3
// inside QUIC over UDP, its bytes on QUIC streams.
enum class Mode : std::uint8_t { tcp, tls, udp, dtls, quic };

// What a mode is and can do: one row a mode, which every layer reads when it
// asks what a mode can do rather than which one it is. The stack's code (its
// contexts, connections, listener and --version line) is its entry in the
// table of stacks (stacks/table.cpp); a new stack is a row here, an entry
// there and its folder.
struct ModeFacts {
  Mode mode;
  const char* name;       // on the command line, the wire and in reports: "tls"
  const char* handshake;  // its handshake in messages ("TLS", "QUIC", "DTLS"); "" where it has none
  bool datagram;          // datagrams counted one by one, loss allowed; else a byte stream
  bool encrypted;         // the TLS flags (--tls-version, --groups, --ca ...) apply to it
  bool tls_stream;        // a TLS handshake, then bytes: resumption, handshake times, what TLS negotiated
  bool tls_over_tcp;      // TLS records over TCP: TLS 1.2 suites, --record-size, --ktls, a suite per test,
                          // released buffers; and the TCP connections that try a TLS variant before a run
  bool streams;           // several streams on one connection (--streams, --stream-per-tx)
  bool over_udp;          // its connections are UDP ones beside the control connection
  bool per_library;       // runs on each --tls-lib library (a variant each), its request naming the library
  Mode baseline;          // the plain twin its ratios are against; itself for a plain stack
  Mode twin;              // another stack its runs are held to beside the baseline (quic: tls); itself: none
};

inline constexpr ModeFacts kModeFacts[] = {
    {Mode::tcp, "tcp", "", false, false, false, false, false, false, false, Mode::tcp, Mode::tcp},
    {Mode::tls, "tls", "TLS", false, true, true, true, false, false, true, Mode::tcp, Mode::tls},
    {Mode::udp, "udp", "", true, false, false, false, false, false, false, Mode::udp, Mode::udp},
    {Mode::dtls, "dtls", "DTLS", true, true, false, false, false, false, true, Mode::udp, Mode::dtls},
    {Mode::quic, "quic", "QUIC", false, true, true, false, true, true, false, Mode::tcp, Mode::tls},
};

inline constexpr std::array kAllModes = [] {
  std::array<Mode, std::size(kModeFacts)> modes{};
  for (std::size_t i = 0; i < modes.size(); ++i)
    modes[i] = kModeFacts[i].mode;
  return modes;
}();

constexpr const ModeFacts& facts(Mode mode) {
  for (const ModeFacts& f : kModeFacts) {
    if (f.mode == mode) return f;
  }
  return kModeFacts[0];
}

inline const char* to_string(Mode mode) {
  return facts(mode).name;
}
inline bool is_datagram(Mode mode) {
  return facts(mode).datagram;
}
inline bool is_encrypted(Mode mode) {
  return facts(mode).encrypted;
}
inline bool is_tls_stream(Mode mode) {
  return facts(mode).tls_stream;
}
// Who sends the payload: the client (the default) or, with -R, the server.
enum class Direction : std::uint8_t { client_to_server, server_to_client };
enum class Role : std::uint8_t { sender, receiver };

inline const char* to_string(Direction direction) {
  return direction == Direction::server_to_client ? "server_to_client" : "client_to_server";
}
inline const char* to_string(Role role) {
  return role == Role::sender ? "sender" : "receiver";
}

}  // namespace tlscmp
