#pragma once

// What the QUIC stack's files share of the library (quic.cpp: the listener,
// the poll set, the contexts; quic_io.cpp: a connection's I/O and counts).
// Included by them alone.

#include <sys/time.h>

#include <chrono>
#include <span>

#include "stacks/quic/quic.hpp"
#include "tls/ossl_ptr.hpp"
#include "tls/ssl_compat.hpp"

namespace tlscmp::stacks {

namespace compat = tls::compat;
using tls::throw_tls_error;

namespace detail {

// Why this build has no QUIC, thrown.
[[noreturn]] void refuse_quic();

#if TLSCMP_HAVE_QUIC

timeval to_timeval(std::chrono::microseconds limit);
// Polls `own` for up to `limit`, watching the listener too where `watch`
// wants it (ListenerWatch); own's revents are set. 1 if any of own is ready,
// 0 if none came within `limit`, -1 if the poll failed (the call that
// follows says why).
int poll_watching(std::span<SSL_POLL_ITEM> own, std::chrono::microseconds limit, ListenerWatch* watch);
// A datagram BIO on `fd` under a filter that counts what the library hands
// the kernel and takes from it (in `counted_with`'s counts, another
// listener of the port, where given); throws if there is none.
BIO* counted_datagrams(int fd, const char* whose, SSL* counted_with = nullptr);

#endif

}  // namespace detail
}  // namespace tlscmp::stacks
