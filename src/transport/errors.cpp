#include "transport/errors.hpp"

#include <string>

namespace tlscmp {
namespace {

class TransportCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "tlscmp.transport"; }
  std::string message(int value) const override {
    switch (static_cast<TransportErrc>(value)) {
      case TransportErrc::eof:
        return "the peer closed the connection";
      case TransportErrc::timeout:
        return "timed out";
      case TransportErrc::truncated:
        return "the TLS connection ended without close_notify (truncated)";
      case TransportErrc::reset:
        return "the connection was reset by the peer";
      case TransportErrc::tls_failure:
        return "TLS error";
      case TransportErrc::not_connected:
        return "the connection is already shut down";
      case TransportErrc::would_block:
        return "the call would block";
      case TransportErrc::too_slow:
        return "too little moved to keep the connection (the minimum rate)";
    }
    return "unknown transport error";
  }
};

}  // namespace

const std::error_category& transport_category() {
  static const TransportCategory category;
  return category;
}

}  // namespace tlscmp
