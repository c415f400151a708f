#include <doctest/doctest.h>

#include <vector>

#include "measure/payload.hpp"

using tlscmp::measure::PayloadPattern;

TEST_CASE("the pattern depends on the seed and the offset only") {
  const PayloadPattern p(42);
  std::vector<std::byte> whole(1000);
  p.fill(whole, 5);
  // The same stream, filled in odd pieces at odd offsets.
  std::vector<std::byte> pieces(1000);
  std::size_t done = 0;
  for (std::size_t size : {1u, 7u, 8u, 3u, 250u, 731u}) {
    p.fill({pieces.data() + done, size}, 5 + done);
    done += size;
  }
  CHECK(done == 1000);
  CHECK(whole == pieces);

  std::vector<std::byte> other(1000);
  PayloadPattern(43).fill(other, 5);
  CHECK(other != whole);
}

TEST_CASE("a flipped byte is found at its stream offset") {
  const PayloadPattern p(7);
  std::vector<std::byte> data(10000);
  const std::uint64_t offset = 123457;
  p.fill(data, offset);
  CHECK_FALSE(p.first_mismatch(data, offset).has_value());
  for (std::size_t at : {0u, 1u, 4095u, 4096u, 9999u}) {
    CAPTURE(at);
    std::vector<std::byte> bad = data;
    bad[at] ^= std::byte{0x01};
    const auto found = p.first_mismatch(bad, offset);
    REQUIRE(found.has_value());
    CHECK(*found == offset + at);
  }
  // Right bytes at the wrong offset do not pass either.
  CHECK(p.first_mismatch(data, offset + 1).has_value());
}
