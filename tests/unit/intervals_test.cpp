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

TEST_CASE("parallel streams' intervals add up period by period, a stalled one counted once") {
  const std::vector<Interval> a{{0, 1.001, 100}, {1.001, 2.002, 200}, {2.002, 2.5, 50}};
  // b's loop stalled over the second boundary: its second interval spans two periods.
  const std::vector<Interval> b{{0, 1.004, 10}, {1.004, 3.001, 20}, {3.001, 3.2, 5}};
  const std::vector<Interval> sums = sum_intervals({a, b}, 1.0);
  REQUIRE(sums.size() == 4);
  CHECK(sums[0].bytes == 110);
  CHECK(sums[0].start_s == 0);
  CHECK(sums[0].end_s == doctest::Approx(1.004));
  CHECK(sums[1].bytes == 220);
  CHECK(sums[1].start_s == doctest::Approx(1.001));
  CHECK(sums[1].end_s == doctest::Approx(3.001));
  CHECK(sums[2].bytes == 50);
  CHECK(sums[3].bytes == 5);
  std::uint64_t total = 0;
  for (const Interval& i : sums)
    total += i.bytes;
  CHECK(total == 385);
  CHECK(sum_intervals({a}, 1.0).size() == a.size());
  CHECK(sum_intervals({}, 1.0).empty());
}

namespace {
struct Recording final : TransferObserver {
  void begin_run(const std::string&) override {}
  std::chrono::milliseconds tick_period() const override { return std::chrono::milliseconds(1000); }
  void on_tick(const Interval& last, std::uint64_t total) override { ticks.push_back({last, total}); }
  void on_end() override { ++ends; }
  std::vector<std::pair<Interval, std::uint64_t>> ticks;
  int ends = 0;
};
}  // namespace

TEST_CASE("a joined live view waits for every stream's period, and ends when all have ended") {
  Recording target;
  JoinedObserver joined(target, 3);
  TransferObserver* s0 = joined.stream(0);
  TransferObserver* s1 = joined.stream(1);
  TransferObserver* s2 = joined.stream(2);
  CHECK(s0->tick_period() == std::chrono::milliseconds(1000));

  s0->on_tick({0, 1.0, 10}, 10);
  s1->on_tick({0, 1.01, 20}, 20);
  CHECK(target.ticks.empty());  // stream 2 has not reported period 0
  s2->on_tick({0, 1.02, 30}, 30);
  REQUIRE(target.ticks.size() == 1);
  CHECK(target.ticks[0].first.bytes == 60);
  CHECK(target.ticks[0].first.end_s == doctest::Approx(1.02));
  CHECK(target.ticks[0].second == 60);

  // Stream 1 stalls across period 1; stream 2 ends. Period 1 waits for stream 1.
  s0->on_tick({1.0, 2.0, 1}, 11);
  s2->on_end();
  CHECK(target.ticks.size() == 1);
  s1->on_tick({1.01, 3.05, 2}, 22);  // starts in period 1: counted there, once
  REQUIRE(target.ticks.size() == 2);
  CHECK(target.ticks[1].first.bytes == 3);
  CHECK(target.ticks[1].second == 11 + 22 + 30);

  // Period 2 has only stream 0's bytes; stream 1 passed it without a tick of its own.
  s0->on_tick({2.0, 3.0, 4}, 15);
  CHECK(target.ticks.size() == 2);  // stream 1 has reached period 1 only
  s1->on_tick({3.05, 4.0, 8}, 30);
  REQUIRE(target.ticks.size() == 3);
  CHECK(target.ticks[2].first.bytes == 4);
  CHECK(target.ends == 0);
  s0->on_end();
  CHECK(target.ends == 0);
  s1->on_end();
  REQUIRE(target.ticks.size() == 4);  // period 3, stream 1's last tick, forwarded once all ended
  CHECK(target.ticks[3].first.bytes == 8);
  CHECK(target.ends == 1);
}
