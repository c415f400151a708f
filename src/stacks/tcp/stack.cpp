// Plain TCP: the baseline of the stream stacks. Its data connections are
// TCP connections to the server's port; the server takes every connection
// that no other stack claims by its first byte as plain TCP.

#include "stacks/stack.hpp"

namespace tlscmp::stacks {

extern const Stack kTcpStack;
const Stack kTcpStack{
    .mode = Mode::tcp,
    .open_socket = open_tcp_socket,
};

}  // namespace tlscmp::stacks
