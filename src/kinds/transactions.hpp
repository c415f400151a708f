#pragma once

// What the kinds that make transactions (one request, one response: the
// test's `rr` part) share of their settings: -n as a count of them, the
// default time, and what every such test needs of REQ/RESP and its amount.
// Their data path is kinds/exchange.hpp.

#include <fmt/format.h>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kinds/kind.hpp"
#include "mode.hpp"
#include "spec/spec.hpp"

namespace tlscmp::kinds {

// A test of transactions without -t or -n: 10 s of them.
inline constexpr std::uint64_t kDefaultTransactionsMs = 10'000;

// An open-loop test (--rate) sends each connection's requests at least this
// far apart: a finer schedule is below what a thread's clock and sleeps keep.
inline constexpr double kMinRequestSpacingUs = 1.0;

// A schedule that cannot be kept: requests closer together on a connection
// than kMinRequestSpacingUs. Returns why in one line, or "".
std::string schedule_problem(double rate_tps, std::uint32_t streams);

// -n as the number of `counted` (transactions, connections), at least one
// for each of -P's `makers` (connections, connectors); without -t or -n,
// kDefaultTransactionsMs; 3 rounds unless --repeat. Throws UsageError.
void configure_transactions(const SharedFlags& flags, session::ClientConfig& config, const char* counted,
                            const char* makers);

// What every test of transactions needs of its part, `flag` (--rr, --crr)
// naming it: REQ/RESP of a byte at least each, -n or -t, --rate with -t,
// -n at least -P. Throws spec::Invalid naming the flag.
void check_transactions(const spec::Test& test, const char* flag);

// Server: an open-loop schedule (--rate) its loops cannot keep, refused
// before anything is set up; "" where none.
std::string transactions_refusal(const protocol::TestRequest& request, const session::ServerSide& side);

// --rate: where the runs fell short of the schedule, `who` ("the server or
// the path", "the flows") could not keep up, and the latencies count the
// backlog. A run's window ends with its last response, one latency after
// the last request: the path's own round trip, which is no backlog, comes
// off (its fastest transaction's). Otherwise a 2 s run over a 200 ms round
// trip, every request sent and answered on time, would have fallen 10% short.
template <typename Results>
void note_rate_shortfall(measure::Comparison& comparison, const char* who) {
  const Results* results = comparison.get<Results>();
  const double rate = comparison.parameters.test.rr.rate_tps;
  if (results == nullptr || rate <= 0) return;
  for (const auto& run : results->runs) {
    const double schedule_us = run.elapsed_us - run.latency.min;
    if (run.partial || schedule_us <= 0 ||
        static_cast<double>(run.transactions) / (schedule_us / 1e6) >= 0.95 * rate)
      continue;
    comparison.notes.push_back(fmt::format(
        "{} round {} made {:.0f} of the {:g} transactions/s asked: {} fell behind the schedule, and the "
        "latencies count the backlog",
        run.label(), run.round, run.transactions_per_s(), rate, who));
  }
}

// A sweep of tests of transactions: its table's title, its CSV columns
// (after variant, mode and runs), and a variant's figures but the table's
// cells (the kind's own), from its statistics (rr's and flows' have these
// fields).
std::string transactions_sweep_title(const std::vector<const measure::Comparison*>& points);
inline constexpr const char* kTransactionsSweepColumns[] = {
    "over_tcp_median", "over_tcp_ci95_low", "over_tcp_ci95_high", "transactions_per_s_median",
    "p50_us_median",   "p99_us_median",     "p50_over_tcp_median"};

template <typename Stats>
SweepFigures transactions_sweep_figures(const Stats& s) {
  const auto& over = s.transactions_per_s_over_baseline;
  const auto figure = [](const auto& value) { return fmt::format("{:.4f}", value); };
  SweepFigures f;
  f.variant = s.variant;
  f.mode = s.mode;
  f.runs = s.transactions_per_s.count;
  f.csv = {{"over_tcp_median", over ? figure(over->ratio.median) : ""},
           {"over_tcp_ci95_low", over && over->ci ? figure(over->ci->low) : ""},
           {"over_tcp_ci95_high", over && over->ci ? figure(over->ci->high) : ""},
           {"transactions_per_s_median", fmt::format("{:.1f}", s.transactions_per_s.median)},
           {"p50_us_median", fmt::format("{:.3f}", s.p50_us.median)},
           {"p99_us_median", fmt::format("{:.3f}", s.p99_us.median)},
           {"p50_over_tcp_median", s.p50_over_baseline ? figure(s.p50_over_baseline->ratio.median) : ""}};
  return f;
}

}  // namespace tlscmp::kinds
