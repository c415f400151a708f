#include "kinds/transactions.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "spec/size.hpp"

namespace tlscmp::kinds {

void configure_transactions(const SharedFlags& flags, session::ClientConfig& c, const char* counted,
                            const char* makers) {
  if (!flags.bytes.empty()) {
    c.test.rr.transactions = spec::parse_count(flags.bytes, "-n", 1, spec::kMaxTransactions, counted);
    if (c.test.rr.transactions < c.test.streams) {
      throw UsageError(fmt::format("-n {}: fewer {} than {} (-P {}); each makes one at least",
                                   c.test.rr.transactions, counted, makers, c.test.streams));
    }
  } else if (flags.time_s == 0) {
    c.test.duration_ms = kDefaultTransactionsMs;
  }
  c.rounds = flags.repeat > 0 ? flags.repeat : 3;
}

void check_transactions(const spec::Test& t, const char* flag) {
  if (t.rr.request_bytes == 0 || t.rr.response_bytes == 0)
    throw spec::Invalid(fmt::format("{} needs REQ/RESP of a byte at least each", flag));
  if ((t.rr.transactions == 0) == (t.duration_ms == 0))
    throw spec::Invalid(fmt::format("{} runs -n transactions or for -t seconds: give one", flag));
  if (t.rr.rate_tps > 0 && t.duration_ms == 0)
    throw spec::Invalid("--rate needs -t: an open-loop run goes for a time");
  if (t.rr.transactions != 0 && t.rr.transactions < t.streams) {
    throw spec::Invalid(
        fmt::format("-n {}: fewer transactions than connections (-P {}); each makes one at least",
                    t.rr.transactions, t.streams));
  }
}

std::string schedule_problem(double rate_tps, std::uint32_t streams) {
  if (rate_tps <= 0 || streams == 0) return {};
  const double spacing_us = 1e6 * streams / rate_tps;
  if (spacing_us >= kMinRequestSpacingUs) return {};
  return fmt::format(
      "a rate of {:g} transactions/s over {} connection{} puts requests {:.3g} us apart on each; the "
      "schedule keeps {:g} us at the least: lower the rate or add connections (-P)",
      rate_tps, streams, streams == 1 ? "" : "s", spacing_us, kMinRequestSpacingUs);
}

std::string transactions_refusal(const protocol::TestRequest& request, const session::ServerSide&) {
  const std::string problem = schedule_problem(request.test.rr.rate_tps, request.test.streams);
  return problem.empty() ? problem : "this server refuses " + problem;
}

std::string transactions_sweep_title(const std::vector<const measure::Comparison*>&) {
  return "transactions per second (p50 / p99 latency), medians over the rounds; tls/tcp: transactions per "
         "second over TCP's (and p50 latency), paired by round";
}

}  // namespace tlscmp::kinds
