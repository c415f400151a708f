// Plain UDP: the baseline of the datagram stacks. The datagram kind opens
// its own sockets (one a sender) to the ports the server names.

#include "stacks/stack.hpp"

namespace tlscmp::stacks {

extern const Stack kUdpStack;
const Stack kUdpStack{
    .mode = Mode::udp,
};

}  // namespace tlscmp::stacks
