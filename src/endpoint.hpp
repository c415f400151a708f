#pragma once

#include <fmt/format.h>
#include <cstdint>
#include <string>
#include <string_view>

namespace tlscmp {

// "host:port", with an IPv6 address in brackets as URLs write it: "[::1]:5678".
inline std::string host_port(std::string_view host, std::uint16_t port) {
  return host.find(':') != std::string_view::npos ? fmt::format("[{}]:{}", host, port)
                                                  : fmt::format("{}:{}", host, port);
}

}  // namespace tlscmp
