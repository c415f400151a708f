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
