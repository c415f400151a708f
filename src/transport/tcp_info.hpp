#pragma once

// TCP_INFO (tcp(7)): what the kernel knows of a TCP connection.

#include <optional>

#include "run_facts.hpp"

namespace tlscmp {

// The connection's TCP_INFO now, or nullopt when `fd` is no TCP socket (or
// the kernel refuses). Fields the kernel's struct is too old for stay at
// their defaults (the limited times: nullopt).
std::optional<TcpInfo> read_tcp_info(int fd);

// The congestion window alone (segments), for sampling while data moves; 0 if unknown.
std::uint32_t read_snd_cwnd(int fd);

}  // namespace tlscmp
