#include <doctest/doctest.h>

#include "error.hpp"
#include "spec/size.hpp"

using tlscmp::UsageError;
using tlscmp::spec::parse_size;

namespace {
constexpr std::uint64_t kMax = std::uint64_t{1} << 50;
}

TEST_CASE("sizes without a suffix are bytes") {
  CHECK(parse_size("1", "-n", 1, kMax) == 1);
  CHECK(parse_size("65536", "-n", 1, kMax) == 65536);
}

TEST_CASE("K, M, G, T and P are powers of 1024, in either case") {
  CHECK(parse_size("64K", "-l", 1, kMax) == 65536);
  CHECK(parse_size("64k", "-l", 1, kMax) == 65536);
  CHECK(parse_size("1M", "-n", 1, kMax) == 1048576);
  CHECK(parse_size("1g", "-n", 1, kMax) == 1073741824);
  CHECK(parse_size("2T", "-n", 1, kMax) == 2199023255552);
  CHECK(parse_size("1P", "-n", 1, kMax) == kMax);  // 1 PiB, the most a run moves
  CHECK(parse_size("0.5p", "-n", 1, kMax) == kMax / 2);
  CHECK_THROWS_AS(parse_size("2P", "-n", 1, kMax), UsageError);
}

TEST_CASE("a fraction is allowed and a fraction of a byte is dropped") {
  CHECK(parse_size("1.5M", "-n", 1, kMax) == 1572864);
  CHECK(parse_size("0.5K", "-n", 1, kMax) == 512);
  CHECK(parse_size("1.0001K", "-n", 1, kMax) == 1024);
}

TEST_CASE("anything but a number and one suffix is refused, naming the flag") {
  for (const char* text :
       {"", "K", "abc", "-1", "+5", "1e6", "1 M", "1MB", "1KiB", "1..5", ".5K", "1.2.3", "0x10"}) {
    CAPTURE(text);
    CHECK_THROWS_AS(parse_size(text, "-n", 1, kMax), UsageError);
  }
  CHECK_THROWS_WITH(parse_size("lots", "--bytes", 1, kMax), doctest::Contains("--bytes 'lots'"));
}

TEST_CASE("bounds are inclusive and enforced") {
  CHECK(parse_size("16M", "-l", 1, 16 << 20) == (16u << 20));
  CHECK_THROWS_AS(parse_size("0", "-n", 1, kMax), UsageError);
  CHECK_THROWS_AS(parse_size("0.1", "-n", 1, kMax), UsageError);
  CHECK_THROWS_AS(parse_size("17M", "-l", 1, 16 << 20), UsageError);
  CHECK_THROWS_AS(parse_size("99999999T", "-n", 1, kMax), UsageError);
}
