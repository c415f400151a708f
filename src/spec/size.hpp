#pragma once

// Sizes, counts and rates as the client's flags write them (64K, 1M, 100M),
// read into numbers; and --rr's REQ/RESP. Every kind's flags use them.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tlscmp::spec {

// Parses a byte count: a number with an optional suffix K, M, G, T or P
// (either case), each a power of 1024 as in iperf3: "64K" = 65536, "1.5M" =
// 1572864, "1P" = 2^50.
// A fraction of a byte is dropped. Throws UsageError naming `flag` for anything
// else, or a count outside min..max.
std::uint64_t parse_size(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max);

// A count of `what` (datagrams, transactions), with the same suffixes (powers
// of 1024: "1M" = 1048576).
std::uint64_t parse_count(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max,
                          std::string_view what = "datagrams");

// Bits per second, as iperf3's -b, or another rate (`what`): suffixes K, M,
// G, T, P are powers of 1000 ("100M" = 100,000,000).
std::uint64_t parse_rate(std::string_view text, std::string_view flag, std::uint64_t min, std::uint64_t max,
                         std::string_view what = "bits per second");

// "64/16K": a request and a response size, each 1 byte to 1 GiB (--rr).
std::pair<std::uint64_t, std::uint64_t> parse_rr(const std::string& text, const std::string& flag);

}  // namespace tlscmp::spec
