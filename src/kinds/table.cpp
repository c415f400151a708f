// The table of kinds: adding a kind is its folder and a line here.

#include <fmt/format.h>
#include <array>
#include <string>
#include <vector>

#include "error.hpp"

#include "kinds/crr/crr.hpp"
#include "kinds/datagram/datagram.hpp"
#include "kinds/flows/flows.hpp"
#include "kinds/handshake/handshake.hpp"
#include "kinds/http/http.hpp"
#include "kinds/kind.hpp"
#include "kinds/rr/rr.hpp"
#include "kinds/stream/stream.hpp"
#include "stacks/stack.hpp"

namespace tlscmp::kinds {
namespace {

// In TestKind order.
constexpr std::array<const KindSlice*, 7> kTable{&kStreamKind, &kHandshakeKind, &kDatagramKind, &kRrKind,
                                                 &kCrrKind,    &kFlowsKind,     &kHttpKind};

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

std::vector<std::string> alpn_protocols() {
  std::vector<std::string> out;
  for (const KindSlice* kind : kTable)
    out.insert(out.end(), kind->alpn.begin(), kind->alpn.end());
  return out;
}

namespace {

// What a test over QUIC cannot take: its kinds so far, and the settings of
// TCP sockets and TLS records that QUIC has no counterpart of.
// The kinds of the table that run over a stream stack over UDP, by the
// flag that asks for each (or what its flags are for): "bulk streams, --rr".
std::string kinds_over_udp_streams() {
  std::vector<std::string> names;
  for (const KindSlice* kind : all_kinds()) {
    if (kind->over_udp_streams) names.emplace_back(kind->flag != nullptr ? kind->flag : "bulk streams");
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

// What a stack holds of a test: a stream stack over UDP (QUIC) the kinds
// built for it alone, and the fields of the test it cannot hold.
void check_stack(const spec::Test& test, Mode mode) {
  const ModeFacts& f = facts(mode);
  if (f.over_udp && !f.datagram && !slice_of(test.kind).over_udp_streams) {
    throw spec::Invalid(fmt::format("a {} test does not run over {} yet: {} runs {}; leave {} out of --mode",
                                    to_string(test.kind), f.name, f.name, kinds_over_udp_streams(), f.name));
  }
  const stacks::Stack& stack = stacks::stack_of(mode);
  if (stack.refuse_test == nullptr) return;
  if (const std::string why = stack.refuse_test(test); !why.empty())
    throw spec::Invalid(fmt::format("{}: leave {} out of --mode, or the flag", why, f.name));
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
  check_stack(test, mode);
  const KindSlice& kind = slice_of(test.kind);
  if (kind.check != nullptr) kind.check(test, mode);
}

void check_host(const session::ClientConfig& config) {
  const KindSlice& kind = slice_of(config.test.kind);
  if (kind.check_host != nullptr) kind.check_host(config);
}

void check_result(const protocol::KindResult& r) {
  if (r.type == SideResult::kWireType) {
    (void)protocol::read_result<SideResult>(r);
  } else if (r.type == FlowsResult::kWireType) {
    (void)protocol::read_result<FlowsResult>(r);
  } else if (r.type == DatagramResult::kWireType) {
    (void)protocol::read_result<DatagramResult>(r);
  } else {
    throw protocol::ProtocolError(
        fmt::format("bad control message: no kind has results of type '{}'", r.type));
  }
}

void check_request(const protocol::TestRequest& m) {
  using protocol::ProtocolError;
  try {
    check_test(m.test, m.mode);
  } catch (const spec::Invalid& e) {
    throw ProtocolError(e.what());
  }
  // The fields a request adds for some kinds, each the capability of the kind that has it.
  const KindSlice& kind = slice_of(m.test.kind);
  const auto refuse = [](const char* key, bool KindSlice::*has, const char* over) {
    for (const KindSlice* slice : kTable) {
      if (slice->*has)
        throw ProtocolError(
            fmt::format("bad control message: '{}' is for {} tests{}", key, to_string(slice->kind), over));
    }
    throw ProtocolError(fmt::format("bad control message: no kind takes '{}'", key));
  };
  if (!m.flow_sources.empty() && !kind.several_sources)
    refuse("flow_sources", &KindSlice::several_sources, "");
  const bool over_tls = facts(m.mode).tls_over_tcp;
  if (m.release_buffers && (!kind.release_buffers || !over_tls))
    refuse("release_buffers", &KindSlice::release_buffers, " over tls");
  if (!m.key_type.empty() && (!kind.key_types || !over_tls))
    refuse("key_type", &KindSlice::key_types, " over tls");
}

std::uint64_t bytes_asked(const spec::Test& test) {
  return test.stream.bytes;
}

Direction direction_of(const spec::Test& test) {
  return test.stream.direction;
}

LiveGoal live_goal(const spec::Test& test) {
  return {test.stream.bytes * test.forward_streams(), test.duration_s(), test.rr.transactions};
}

const KindSlice* slice_of(protocol::ConnectionKind connection) {
  for (const KindSlice* slice : kTable) {
    if (slice->connection == connection) return slice;
  }
  return nullptr;
}

}  // namespace tlscmp::kinds
