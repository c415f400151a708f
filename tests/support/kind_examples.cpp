#include "support/kind_examples.hpp"

namespace tlscmp::test {

// A test of `kind` that its kind's check passes, every field of its parts off its default.
KindExample example_of(TestKind kind) {
  spec::Test t;
  t.kind = kind;
  t.streams = 2;
  switch (kind) {
    case TestKind::stream:
      t.stream.bytes = 5 << 20;
      t.stream.direction = Direction::server_to_client;
      t.stream.no_delay = true;
      t.stream.framing = framing::Framing::len4;
      t.stream.msg_size = 1000;
      t.stream.max_msg = 4096;
      t.stream.read_size = 777;
      t.stream.bidir = true;
      t.verify = true;
      t.record_size = 4096;
      t.interval_ms = 250;
      t.sndbuf_bytes = t.rcvbuf_bytes = 1 << 20;
      break;
    case TestKind::handshake:
      t.streams = 1;
      t.handshake.handshakes = 7;
      t.compare_groups = true;
      break;
    case TestKind::datagram:
      t.chunk_bytes = 1200;
      t.datagram.packets = 99;
      t.datagram.rate_bps = 1'000'000;
      t.datagram.gso = true;
      break;
    case TestKind::rr:
      t.rr = {64, 16384, 0, 2500.5};
      t.duration_ms = 3000;
      break;
    case TestKind::crr:
      t.rr = {10, 20, 40, 0};
      t.crr = {spec::Close::fin, true};
      break;
  }
  return {t, kind == TestKind::datagram ? Mode::udp : Mode::tls};
}

}  // namespace tlscmp::test
