#pragma once

// The quic stack's parts, as its entry (stack.cpp) puts them together.

#include <functional>
#include <memory>
#include <string>

#include "stacks/stack.hpp"

namespace tlscmp::stacks {

// Its part of a server: the listener on the server's port over UDP (server.cpp).
std::unique_ptr<ServerPart> quic_server(const ServerSetup& setup,
                                        const std::function<void(const std::string&)>& log);

}  // namespace tlscmp::stacks
