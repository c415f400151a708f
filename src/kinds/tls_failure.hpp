#pragma once

// The client's account of a failed TLS handshake or a data connection the
// server would not take, in one line that says what to change. Shared by the
// kinds that open TLS connections (stream, handshake).

#include <string>
#include <system_error>

#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "tls/context.hpp"
#include "tls/tls_stream.hpp"
#include "transport/stream.hpp"

namespace tlscmp::kinds {

// Why a TLS handshake with the server failed: the certificate (expired, not
// yet valid, not for this name, not from the trusted CA), a cipher the
// certificate cannot serve, or what each side offers when they share nothing.
std::string explain_handshake_failure(const tls::TlsStream& stream, std::error_code ec,
                                      const session::ClientConfig& config, const tls::Offer& mine,
                                      const protocol::TestAccept& accept);

// A hint to add where the server closed a connection after its handshake:
// the client certificate it wanted or refused, or "".
std::string rejection_hint(const Stream& stream, const session::ClientConfig& config);

}  // namespace tlscmp::kinds
