#pragma once

// What the kinds that make transactions (one request, one response: the
// test's `rr` part) share of their settings: -n as a count of them, the
// default time, and what every such test needs of REQ/RESP and its amount.
// Their data path is kinds/exchange.hpp.

#include <cstdint>

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

}  // namespace tlscmp::kinds
