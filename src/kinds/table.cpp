// The table of kinds: adding a kind is its folder and a line here.

#include <fmt/format.h>
#include <array>

#include "error.hpp"

#include "kinds/crr/crr.hpp"
#include "kinds/datagram/datagram.hpp"
#include "kinds/flows/flows.hpp"
#include "kinds/handshake/handshake.hpp"
#include "kinds/kind.hpp"
#include "kinds/rr/rr.hpp"
#include "kinds/stream/stream.hpp"

namespace tlscmp::kinds {
namespace {

// In TestKind order.
constexpr std::array<const KindSlice*, 6> kTable{&kStreamKind, &kHandshakeKind, &kDatagramKind,
                                                 &kRrKind,     &kCrrKind,       &kFlowsKind};

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

namespace {

// What a test over QUIC cannot take: its kinds so far, and the settings of
// TCP sockets and TLS records that QUIC has no counterpart of.
void check_quic(const spec::Test& test) {
  if (test.kind != TestKind::stream && test.kind != TestKind::rr && test.kind != TestKind::crr &&
      test.kind != TestKind::flows) {
    throw spec::Invalid(fmt::format(
        "a {} test does not run over quic yet: quic runs bulk streams, --rr, --crr and --flows; leave "
        "quic out of --mode",
        to_string(test.kind)));
  }
  const char* why = nullptr;
  if (test.stream.no_delay) why = "-N sets TCP_NODELAY, and QUIC has no TCP";
  if (test.stream.msg_size != 0) why = "--msg-size and --framing frame TCP and TLS streams alone";
  if (test.sndbuf_bytes != 0 || test.rcvbuf_bytes != 0)
    why = "-w sizes a TCP socket's buffers, and the server's QUIC connections share one UDP socket";
  if (test.record_size != 0) why = "--record-size caps TLS records, and QUIC sends packets of its own size";
  const bool crr =
      test.kind == TestKind::crr || (test.kind == TestKind::flows && test.flows.work == spec::FlowWork::crr);
  if (crr && test.crr.close == spec::Close::fin)
    why = "--close fin ends TCP connections with a FIN, and a QUIC connection ends with CONNECTION_CLOSE";
  if (why != nullptr) throw spec::Invalid(fmt::format("{}: leave quic out of --mode, or the flag", why));
}

}  // namespace

void check_test(const spec::Test& test, Mode mode) {
  if (const char* flag = spec::unread_flag(test))
    throw spec::Invalid(fmt::format("{} does not apply to {} tests", flag, to_string(test.kind)));
  if ((test.kind == TestKind::datagram) != is_datagram(mode)) {
    throw spec::Invalid(test.kind == TestKind::datagram
                            ? std::string("a datagram test runs over udp or dtls")
                            : fmt::format("a {} test runs over tcp, tls or quic", to_string(test.kind)));
  }
  if (mode == Mode::quic) check_quic(test);
  const KindSlice& kind = slice_of(test.kind);
  if (kind.check != nullptr) kind.check(test, mode);
}

void check_host(const session::ClientConfig& config) {
  const KindSlice& kind = slice_of(config.test.kind);
  if (kind.check_host != nullptr) kind.check_host(config);
}

void check_request(const protocol::TestRequest& m) {
  using protocol::ProtocolError;
  try {
    check_test(m.test, m.mode);
  } catch (const spec::Invalid& e) {
    throw ProtocolError(e.what());
  }
  if (!m.key_type.empty() && (m.test.kind != TestKind::crr || m.mode != Mode::tls))
    throw ProtocolError("'key_type' is for crr tests over tls");
}

const KindSlice* slice_of(protocol::ConnectionKind connection) {
  for (const KindSlice* slice : kTable) {
    if (slice->connection == connection) return slice;
  }
  return nullptr;
}

}  // namespace tlscmp::kinds
