// The server's threads (app/thread_set.hpp): work handed to a waiting thread
// starts at once, never after that thread's linger has run out. A server's
// accepting threads are handed this way; one that did not start left
// connections in the listen queue with the count of accepting threads
// saying one was there.

#include "app/thread_set.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

using tlscmp::app::ThreadSet;

namespace {

// Counts the work that has run, and lets a test wait for a count.
struct Started {
  std::mutex mutex;
  std::condition_variable changed;
  int count = 0;

  void add() {
    std::lock_guard lock(mutex);
    ++count;
    changed.notify_all();
  }
  // Whether `n` ran within `limit`.
  bool wait_for(int n, std::chrono::seconds limit) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, [&] { return count >= n; });
  }
};

}  // namespace

TEST_CASE("work handed to waiting threads at once, from several threads, all starts") {
  // The linger far beyond the wait below: a piece of work that did not
  // start when handed would start only when its thread's linger ran out.
  ThreadSet threads(std::chrono::minutes(10));
  constexpr int kThreads = 8;
  constexpr int kRounds = 300;
  // kThreads threads, each held until all have started, then waiting.
  Started started;
  for (int i = 0; i < kThreads; ++i) {
    threads.spawn([&] {
      started.add();
      started.wait_for(kThreads, std::chrono::seconds(60));
    });
  }
  REQUIRE(started.wait_for(kThreads, std::chrono::seconds(60)));
  for (int round = 1; round <= kRounds; ++round) {
    // Every thread back to waiting, so that each piece below is handed.
    while (threads.waiting() < kThreads)
      std::this_thread::yield();
    std::vector<std::thread> handers;
    for (int i = 0; i < kThreads; ++i)
      handers.emplace_back([&] { threads.spawn([&] { started.add(); }); });
    for (std::thread& t : handers)
      t.join();
    INFO("round " << round << ": " << started.count - round * kThreads << " of " << kThreads << " started");
    REQUIRE(started.wait_for((round + 1) * kThreads, std::chrono::seconds(60)));
  }
}
