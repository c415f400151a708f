#pragma once

// The file descriptors this process may hold: a socket each, so a server of
// thousands of connections needs thousands. The kernel's default soft limit
// is often 1,024, below what --max-connections allows; the hard limit is
// what an unprivileged process may raise it to (ulimit -Hn, LimitNOFILE=).

#include <cstdint>

namespace tlscmp {

// Descriptors kept for what is not a connection: listening and datagram
// sockets, the results file, the loader's and the TLS library's files.
inline constexpr std::uint64_t kReservedDescriptors = 64;

// The hard limit on open descriptors (RLIMIT_NOFILE).
std::uint64_t descriptor_hard_limit();

// Raises the soft limit to the hard limit; returns the soft limit now.
std::uint64_t raise_descriptor_limit();

}  // namespace tlscmp
