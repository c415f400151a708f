#pragma once

#include <system_error>

namespace tlscmp {

// Expected outcomes of network I/O. They are error codes, handled where they occur;
// std::system_category() codes (ECONNREFUSED, EPIPE ...) pass through unchanged.
enum class TransportErrc {
  eof = 1,        // the peer ended the stream cleanly (TCP FIN, or TLS close_notify)
  timeout,        // a deadline or the idle timeout passed
  truncated,      // TLS: the connection ended without close_notify
  reset,          // the peer reset the connection (RST)
  tls_failure,    // a TLS protocol error; the stream's error_detail() says which
  not_connected,  // the stream was already shut down
  too_slow,       // less moved in an idle timeout than the stream's minimum rate allows
  would_block,    // event-loop phase: the call must wait; Stream::wanted_events() says for what
};

const std::error_category& transport_category();

inline std::error_code make_error_code(TransportErrc e) {
  return {static_cast<int>(e), transport_category()};
}

}  // namespace tlscmp

template <>
struct std::is_error_code_enum<tlscmp::TransportErrc> : std::true_type {};
