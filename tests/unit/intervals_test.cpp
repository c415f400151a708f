#include <doctest/doctest.h>

#include "measure/intervals.hpp"

using namespace tlscmp::measure;

namespace {
constexpr std::int64_t kSecond = 1'000'000'000;
}

TEST_CASE("intervals close at the real time the loop gets there, on a nominal grid") {
  IntervalRecorder r(0, kSecond, 100);
  CHECK_FALSE(r.due(kSecond - 1));
  CHECK(r.due(kSecond));
  r.advance(kSecond + kSecond / 10, 1000);  // the loop got there 0.1 s late
  CHECK(r.due(2 * kSecond));                // the grid did not move
  CHECK_FALSE(r.due(2 * kSecond - 1));
  r.advance(2 * kSecond, 3000);
  r.finish(2 * kSecond + kSecond / 2, 3500);
  REQUIRE(r.intervals().size() == 3);
  CHECK(r.intervals()[0].start_s == 0);
  CHECK(r.intervals()[0].end_s == doctest::Approx(1.1));
  CHECK(r.intervals()[0].bytes == 1000);
  CHECK(r.intervals()[1].start_s == doctest::Approx(1.1));
  CHECK(r.intervals()[1].bytes == 2000);
  CHECK(r.intervals()[2].end_s == doctest::Approx(2.5));
  CHECK(r.intervals()[2].bytes == 500);
  CHECK(r.intervals()[2].mbytes_per_s() == doctest::Approx(500 / 0.5 / 1e6));
}

TEST_CASE("a late loop skips the boundaries it missed") {
  IntervalRecorder r(0, kSecond, 100);
  r.advance(3 * kSecond + 5, 900);
  CHECK_FALSE(r.due(4 * kSecond - 1));
  CHECK(r.due(4 * kSecond));
  REQUIRE(r.intervals().size() == 1);
  CHECK(r.intervals()[0].bytes == 900);
}

TEST_CASE("finish adds nothing when an interval just closed") {
  IntervalRecorder r(0, kSecond, 100);
  r.advance(kSecond, 10);
  r.finish(kSecond, 10);
  CHECK(r.intervals().size() == 1);
}

TEST_CASE("past the cap, intervals merge into the last kept one") {
  IntervalRecorder r(0, kSecond, 2);
  for (int i = 1; i <= 4; ++i)
    r.advance(i * kSecond, static_cast<std::uint64_t>(i) * 100);
  REQUIRE(r.intervals().size() == 2);
  CHECK(r.truncated());
  CHECK(r.intervals()[1].bytes == 300);
  CHECK(r.intervals()[1].end_s == doctest::Approx(4));
}

TEST_CASE("a live recorder keeps only the latest interval") {
  IntervalRecorder r(0, kSecond, 0);
  r.advance(kSecond, 10);
  const Interval& last = r.advance(2 * kSecond, 30);
  CHECK(r.intervals().empty());
  CHECK(last.bytes == 20);
  CHECK(last.start_s == doctest::Approx(1));
}
