// The table of kinds: adding a kind is its folder and a line here.

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

const KindSlice* slice_of(protocol::ConnectionKind connection) {
  for (const KindSlice* slice : kTable) {
    if (slice->connection == connection) return slice;
  }
  return nullptr;
}

}  // namespace tlscmp::kinds
