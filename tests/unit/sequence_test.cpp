#include <doctest/doctest.h>

#include "measure/sequence.hpp"

using tlscmp::measure::SequenceTracker;

TEST_CASE("in order, nothing lost") {
  SequenceTracker t;
  for (std::uint32_t s = 0; s < 1000; ++s)
    t.receive(s);
  CHECK(t.received() == 1000);
  CHECK(t.lost(1000) == 0);
  CHECK(t.reordered() == 0);
  CHECK(t.duplicates() == 0);
  CHECK(t.span() == 1000);
}

TEST_CASE("gaps are losses") {
  SequenceTracker t;
  for (std::uint32_t s : {0u, 1u, 2u, 5u, 6u, 9u})
    t.receive(s);
  CHECK(t.received() == 6);
  CHECK(t.span() == 10);
  CHECK(t.lost(10) == 4);
  CHECK(t.lost(12) == 6);  // the last two never came either
}

TEST_CASE("late arrivals are reordered, not lost, and repeats are duplicates") {
  SequenceTracker t;
  for (std::uint32_t s : {0u, 2u, 1u, 3u, 3u, 2u, 4u})
    t.receive(s);
  CHECK(t.received() == 5);
  CHECK(t.reordered() == 1);   // 1 after 2
  CHECK(t.duplicates() == 2);  // 3 and 2 again
  CHECK(t.lost(5) == 0);
}

TEST_CASE("the 32-bit sequence number wraps around") {
  SequenceTracker t;
  const std::uint32_t start = 0xfffffff0u;
  for (std::uint32_t i = 0; i < 32; ++i)
    t.receive(start + i);  // wraps after 16
  CHECK(t.received() == 32);
  CHECK(t.duplicates() == 0);
  CHECK(t.reordered() == 0);
  CHECK(t.span() == std::uint64_t{start} + 32);
  t.receive(0xfffffffeu);  // from before the wrap, seen already
  CHECK(t.duplicates() == 1);
  t.receive(10u);  // after the wrap: 0x1_0000_000a, seen already
  CHECK(t.duplicates() == 2);
}

TEST_CASE("a duplicate far behind is still caught within the window, and the window slides") {
  SequenceTracker t;
  for (std::uint32_t s = 0; s < 70000; ++s)
    t.receive(s);
  t.receive(69999 - 1000);
  CHECK(t.duplicates() == 1);
  t.receive(10);  // out of the window: cannot tell, taken as late
  CHECK(t.reordered() == 1);
  t.receive(200000);  // a jump beyond the window clears it
  t.receive(199999);
  CHECK(t.reordered() == 2);
  CHECK(t.duplicates() == 1);
}
