// Any HTTP client on tlscmp's port (h2load, curl, a browser): a connection
// whose first bytes are an HTTP/1.1 request or HTTP/2's preface is answered
// as an http test's server half answers its connections, a GET of /N with N
// bytes of body, for as long as the client keeps it (the server's idle
// timeout ends a silent one, and its caps on connections hold as for any).

#include <fmt/format.h>
#include <array>
#include <string_view>

#include "kinds/http/http.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

std::string_view text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// HTTP/2's connection preface begins so (RFC 9113, 3.4).
constexpr std::string_view kH2Preface = "PRI * HTTP/2.0";

}  // namespace

bool claims_http(std::span<const std::byte> first) {
  const std::string_view text = text_of(first);
  constexpr std::array<std::string_view, 8> kStarts{"GET ",    "HEAD ",    "POST ",  "PUT ",
                                                    "DELETE ", "OPTIONS ", "PATCH ", "PRI * "};
  for (std::string_view start : kStarts) {
    const std::size_t n = std::min(start.size(), text.size());
    if (text.substr(0, n) == start.substr(0, n)) return true;
  }
  return false;
}

std::string serve_foreign_http(Stream& stream, std::span<const std::byte> first,
                               const session::ServerConfig& config) {
  const std::string_view text = text_of(first);
  const std::uint32_t version =
      kH2Preface.starts_with(text.substr(0, std::min(text.size(), kH2Preface.size()))) ? 2 : 1;
  set_nodelay(stream.native_handle(), true);
  const HttpSideResult r = run_http_server(stream, version, config.timeouts.idle, first);
  const std::string what =
      fmt::format("{} client over {}: {} request{} answered", http_version_name(version),
                  to_string(stream.mode()), r.transactions, r.transactions == 1 ? "" : "s");
  return r.error.empty() ? what : fmt::format("{}, then {}", what, r.error);
}

}  // namespace tlscmp::kinds
