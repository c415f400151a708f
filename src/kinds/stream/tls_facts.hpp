#pragma once

#include "kinds/side_result.hpp"
#include "protocol/messages.hpp"
#include "tls/tls_stream.hpp"

namespace tlscmp::kinds {

// What the TLS layer adds to a side's result after its transfer: whether the
// kernel did the record work in each direction, and the record bytes this
// side moved since `before` (read on the receiver, written on the sender).
inline void add_tls_facts(SideResult& result, const tls::TlsStream& stream, const tls::SessionInfo& before) {
  const tls::SessionInfo after = stream.session_info();
  result.ktls_send = after.ktls_send;
  result.ktls_receive = after.ktls_receive;
  result.tls_bytes = result.role == Role::sender ? after.bytes_written - before.bytes_written
                                                 : after.bytes_read - before.bytes_read;
}

}  // namespace tlscmp::kinds
