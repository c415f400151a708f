// The table of kinds: adding a kind is its folder and a line here.

#include <fmt/format.h>
#include <array>

#include "error.hpp"

#include "kinds/crr/crr.hpp"
#include "kinds/datagram/datagram.hpp"
#include "kinds/handshake/handshake.hpp"
#include "kinds/kind.hpp"
#include "kinds/rr/rr.hpp"
#include "kinds/stream/stream.hpp"

namespace tlscmp::kinds {
namespace {

// In TestKind order.
constexpr std::array<const KindSlice*, 5> kTable{&kStreamKind, &kHandshakeKind, &kDatagramKind, &kRrKind,
                                                 &kCrrKind};

}  // namespace

std::span<const KindSlice* const> all_kinds() {
  return kTable;
}

const KindSlice& slice_of(TestKind kind) {
  for (const KindSlice* slice : kTable) {
    if (slice->kind == kind) return *slice;
  }
  throw Error("no such test kind");  // every TestKind has an entry (a unit test holds the table to it)
}

void check_request(const protocol::TestRequest& m) {
  using protocol::ProtocolError;
  if ((m.kind == TestKind::datagram) != is_datagram(m.mode)) {
    throw ProtocolError(m.kind == TestKind::datagram
                            ? std::string("a datagram test runs over udp or dtls")
                            : fmt::format("a {} test runs over tcp or tls", to_string(m.kind)));
  }
  if (!is_request_response(m.kind) &&
      (m.rr_request_bytes != 0 || m.rr_response_bytes != 0 || m.transactions != 0 || m.rate_tps != 0)) {
    throw ProtocolError(
        "'rr_request_bytes', 'rr_response_bytes', 'transactions' and 'rate_tps' are for rr tests");
  }
  if (m.kind != TestKind::datagram && (m.packets != 0 || m.rate_bps != 0))
    throw ProtocolError("'packets' and 'rate_bps' are for datagram tests");
  if (m.kind != TestKind::handshake && m.handshakes != 0)
    throw ProtocolError("'handshakes' is for handshake tests");
  if (!m.key_type.empty() && (m.kind != TestKind::crr || m.mode != Mode::tls))
    throw ProtocolError("'key_type' is for crr tests over tls");
  const KindSlice& kind = slice_of(m.kind);
  if (kind.check_request != nullptr) kind.check_request(m);
  if (m.bidir && m.streams < 2) throw ProtocolError("'bidir' needs at least 2 streams");
}

const KindSlice* slice_of(protocol::ConnectionKind connection) {
  for (const KindSlice* slice : kTable) {
    if (slice->connection == connection) return slice;
  }
  return nullptr;
}

}  // namespace tlscmp::kinds
