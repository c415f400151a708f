#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "transport/deadline.hpp"
#include "transport/unique_fd.hpp"

namespace tlscmp {

// Resolves `host` and connects to the first address that answers, all before
// `deadline`, from the local address `source` when it is not empty (an IP
// address; only the server's addresses of its family are tried). The
// returned socket is non-blocking. Throws tlscmp::Error with a one-line
// reason ("cannot connect to HOST:PORT: Connection refused").
UniqueFd connect_tcp(const std::string& host, std::uint16_t port, Deadline deadline,
                     const std::string& source = {});

// An address resolved once, to connect to many times (crr): the server's,
// as a first connect_tcp reached it, and the local one to connect from.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
};
// The remote (peer) and local addresses of a connected socket; the local
// one with port 0, so that each new socket bound to it gets a port of its own.
SocketAddress peer_socket_address(int fd);
SocketAddress local_socket_address(int fd);
// A new non-blocking TCP socket with TCP_NODELAY, connected to `to` before
// `deadline`, from `from` when given (bound with IP_BIND_ADDRESS_NO_PORT, so
// that the port is chosen at connect() for the whole 4-tuple, not at bind()).
// With `reset_on_close` it has SO_LINGER 0: closing it sends RST and leaves
// no TIME_WAIT behind. On failure: an invalid fd, and `ec` with `where` set to
// the call that failed ("socket", "connect").
UniqueFd connect_to(const SocketAddress& to, const SocketAddress* from, bool reset_on_close,
                    Deadline deadline, std::error_code& ec, const char*& where);
// connect_to without the wait: the socket with its connect under way (or
// done); an event loop waits for POLLOUT and reads connect_result().
UniqueFd start_connect(const SocketAddress& to, const SocketAddress* from, bool reset_on_close,
                       std::error_code& ec, const char*& where);
// The outcome of a non-blocking connect once the socket is writable: {} or why it failed.
std::error_code connect_result(int fd);

// Waits with poll(2) until `fd` has `events` or the deadline passes.
std::error_code wait_fd(int fd, short events, Deadline deadline);
// Waits up to `wait` (to the nanosecond: ppoll(2)) for `fd` to be readable:
// true if it is; `ec` set if the wait itself failed.
bool readable_fd_within(int fd, std::chrono::nanoseconds wait, std::error_code& ec);

// True if the peer has closed or reset the connection (checked without waiting,
// without consuming data).
bool peer_has_closed(int fd);

// Sends FIN and reads and discards what the peer still sends, until it closes,
// `limit` passes or 256 KiB came. Closing with unread data would send a reset,
// and a reset can overtake what was sent last (a TLS alert) at the peer.
void drain_before_close(int fd, std::chrono::milliseconds limit);

void set_nonblocking(int fd, bool on);
// Asks for SO_SNDBUF / SO_RCVBUF; 0 leaves the kernel's default (and autotuning).
void set_socket_buffers(int fd, std::uint32_t sndbuf_bytes, std::uint32_t rcvbuf_bytes);
void set_nodelay(int fd, bool on);

// What the kernel applied, not what was asked: Linux doubles a requested size.
struct SocketSettings {
  int sndbuf_bytes = 0;    // SO_SNDBUF
  int rcvbuf_bytes = 0;    // SO_RCVBUF
  int mss_bytes = 0;       // TCP_MAXSEG
  std::string congestion;  // TCP_CONGESTION, "cubic"
};
SocketSettings socket_settings(int fd);

// True for an IPv4 or IPv6 address literal ("127.0.0.1", "::1").
bool is_ip_literal(const std::string& host);

// The most addresses a list of source addresses may name.
inline constexpr std::size_t kMaxSourceAddresses = 1024;
// Source addresses as -B gives them: one address, a comma-separated list,
// an IPv4 range "127.0.0.1-127.0.0.8", or a list of them; each in the form
// inet_ntop writes it. Empty, with `problem` saying why, where the text is
// none of that.
std::vector<std::string> parse_address_list(const std::string& text, std::string& problem);
// A literal address with port 0, to bind to; none where it is no literal.
std::optional<SocketAddress> literal_address(const std::string& address);
// The local ports this host hands out (net.ipv4.ip_local_port_range): how
// many connections one source address makes to one server port.
std::uint32_t local_port_count();

// "ADDR:PORT" of the remote end ("[ADDR]:PORT" for IPv6), or "?" if unknown.
std::string peer_address(int fd);

// One line describing an error code, with the TLS detail where there is one.
std::string describe(const std::error_code& ec, const std::string& detail = {});

}  // namespace tlscmp
