// The rr kind's client flags (--rr REQ/RESP, which asks for it, and --rate),
// and what an rr test makes of the flags every kind shares: -n counts
// transactions over all connections, -t is 10 s unless given.

#include <fmt/format.h>
#include <algorithm>

#include "kinds/flags.hpp"
#include "kinds/rr/rr.hpp"
#include "kinds/transactions.hpp"

namespace tlscmp::kinds {

std::vector<CLI::Option*> add_rr_flags(CLI::App& cmd, KindFlags& flags) {
  spec::Rr& rr = flags.test.rr;
  return {
      cmd.add_option_function<std::string>(
             "--rr",
             [&flags, &rr](const std::string& text) {
               std::tie(rr.request_bytes, rr.response_bytes) = spec::parse_rr(text, "--rr");
               flags.ask(TestKind::rr);
             },
             "Instead of bulk runs: transactions of a REQ-byte request and a RESP-byte response (1/1, "
             "64/16K, "
             "1K/1M), closed loop on each of -P connections, for -t seconds (default 10) or -n transactions "
             "in all")
          ->type_name("REQ/RESP"),
      cmd.add_option_function<std::string>(
             "--rate",
             [&rr](const std::string& text) {
               rr.rate_tps = static_cast<double>(
                   spec::parse_rate(text, "--rate", 1, 1'000'000'000, "transactions per second"));
             },
             "With --rr and -t: open loop, this many transactions per second over all connections (K, M: "
             "powers of 1000); latency counts from when each request was due")
          ->type_name("TPS"),
      cmd.add_flag("--stream-per-tx", rr.stream_per_tx,
                   "With --rr, quic runs: each transaction on a QUIC stream of its own, as HTTP/3 carries "
                   "requests (default: a connection's transactions on one stream, as on TCP)"),
  };
}

void configure_rr(const SharedFlags& flags, session::ClientConfig& c) {
  const auto refuse = [](const char* flag) {
    throw UsageError(fmt::format("{} is for bulk runs; {}", flag, kRrKind.takes));
  };
  if (c.test.stream.no_delay) throw UsageError("-N: rr tests always set TCP_NODELAY; leave -N out");
  if (!flags.length.empty()) refuse("-l");
  if (c.test.compare_groups) refuse("--compare-groups");
  configure_transactions(flags, c, "transactions", "connections");
  if (c.test.rr.stream_per_tx) {
    if (std::none_of(c.modes.begin(), c.modes.end(), [](Mode m) { return facts(m).streams; }))
      throw UsageError("--stream-per-tx: streams are QUIC's, and --mode has no quic; add quic to --mode");
    if (c.test.rr.rate_tps > 0)
      throw UsageError("--stream-per-tx takes closed loops alone (not built for --rate yet); leave one out");
    if (c.quic_streams > 1)
      throw UsageError(
          "--stream-per-tx with --streams: each transaction has its own stream already; "
          "use -P for more loops");
  }
  if (c.test.rr.rate_tps > 0) {
    if (flags.time_s == 0)
      throw UsageError("--rate needs -t: an open-loop run goes for a time, not a count (-n)");
    if (const std::string problem = schedule_problem(c.test.rr.rate_tps, c.test.streams); !problem.empty()) {
      throw UsageError("--rate: " + problem);
    }
  }
}

}  // namespace tlscmp::kinds
