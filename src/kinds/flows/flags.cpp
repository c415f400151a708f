// The flows kind's client flags (--flows N, which asks for it, and
// --threads T), and what a flows test makes of the flags every kind shares:
// its flows carry bulk streams (-R, -l, -n bytes), --rr transactions or
// --crr connections (-n of them), -n in all or for -t (10 s unless given).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/flags.hpp"
#include "kinds/flows/flows.hpp"
#include "kinds/transactions.hpp"
#include "measure/host.hpp"
#include "transport/descriptors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// Both ends hold a descriptor per flow; the embedded server's are this process's too.
void refuse_beyond_descriptors(const session::ClientConfig& c) {
  const std::uint64_t flows = c.test.flows.flows;
  const bool embedded = c.host.empty();
  const std::uint64_t needed = (embedded ? 2 : 1) * flows + kReservedDescriptors;
  const std::uint64_t hard = descriptor_hard_limit();
  if (needed <= hard) return;
  throw UsageError(fmt::format(
      "--flows {}: this process may open {} files (its hard limit, ulimit -Hn), and {} flows need {}{}; give "
      "at most {}{}, or raise the hard limit (ulimit -Hn as root, LimitNOFILE=)",
      flows, hard, flows, needed,
      embedded ? " (the embedded server holds the other end of each in this process too)" : "",
      hard > kReservedDescriptors ? (hard - kReservedDescriptors) / (embedded ? 2 : 1) : 0,
      embedded ? ", run the server apart" : ""));
}

// One source address reaches one server port from each of its local ports.
void refuse_beyond_ports(const session::ClientConfig& c) {
  const std::uint64_t addresses = std::max<std::size_t>(1, c.source_addresses.size());
  const std::uint64_t ports = local_port_count();
  if (c.test.flows.flows <= addresses * ports) return;
  throw UsageError(fmt::format(
      "--flows {}: {} source address{} reach{} {} connections to one server port ({} local ports each, "
      "net.ipv4.ip_local_port_range); give more with -B (a range: -B 127.0.0.1-127.0.0.8), or fewer flows",
      c.test.flows.flows, addresses, addresses == 1 ? "" : "es", addresses == 1 ? "es" : "",
      addresses * ports, ports));
}

}  // namespace

std::vector<CLI::Option*> add_flows_flags(CLI::App& cmd, KindFlags& flags) {
  spec::Flows& f = flags.test.flows;
  return {
      cmd.add_option_function<std::string>(
             "--flows",
             [&flags, &f](const std::string& text) {
               f.flows = static_cast<std::uint32_t>(
                   spec::parse_count(text, "--flows", 1, spec::kMaxFlows, "connections"));
               flags.ask(TestKind::flows);
             },
             "Instead of -P threads: N connections held on --threads event loops at each end, each a "
             "bulk stream (-R: the server sends), --rr transactions (closed loop, or --rate over all of "
             "them) or --crr connectors; reports the rate, CPU per unit, the spread over flows and memory "
             "per connection on each side")
          ->type_name("N"),
      cmd.add_option("--threads", f.threads,
                     "With --flows: event loops at each end (default: one per CPU each end may use)")
          ->check(CLI::Range(1u, spec::kMaxFlowThreads))
          ->type_name("T"),
  };
}

void add_flows_sweep_flags(CLI::App& cmd, KindFlags& flags) {
  cmd.add_option("--threads", flags.test.flows.threads, "With --flows: event loops at each end")
      ->check(CLI::Range(1u, spec::kMaxFlowThreads));
}

namespace {

// The work's own flags: bulk's -n bytes, or rr's and crr's sizes and -n
// transactions (connections); --rate for rr alone.
void configure_flow_work(const SharedFlags& flags, session::ClientConfig& c) {
  const spec::FlowWork work = c.test.flows.work;
  const std::uint32_t flows = c.test.flows.flows;
  if (work == spec::FlowWork::stream) {
    if (!flags.bytes.empty()) {
      c.test.stream.bytes = spec::parse_size(flags.bytes, "-n/--bytes", 1, spec::kMaxTestBytes);
      if (c.test.stream.bytes < flows)
        throw UsageError(fmt::format("-n {}: fewer bytes than flows (--flows {}); each moves one at least",
                                     flags.bytes, flows));
    } else if (flags.time_s == 0) {
      c.test.duration_ms = kDefaultTransactionsMs;
    }
    c.rounds = flags.repeat > 0 ? flags.repeat : 3;
    return;
  }
  if (work == spec::FlowWork::crr && c.test.rr.request_bytes == 0)
    c.test.rr.request_bytes = c.test.rr.response_bytes = 1;  // --crr alone: 1/1
  const char* counted = work == spec::FlowWork::crr    ? "connections"
                        : work == spec::FlowWork::http ? "requests"
                                                       : "transactions";
  configure_transactions(flags, c, counted, "connections");
  if (c.test.rr.rate_tps > 0) {
    if (work != spec::FlowWork::rr)
      throw UsageError("--rate is for --flows with --rr: an open loop of transactions");
    if (flags.time_s == 0)
      throw UsageError("--rate needs -t: an open-loop run goes for a time, not a count (-n)");
    const double spacing_us = 1e6 * flows / c.test.rr.rate_tps;
    if (spacing_us < kMinRequestSpacingUs) {
      throw UsageError(
          fmt::format("--rate {:g}: {} flows would each have a request every {:.3g} us; the schedule "
                      "keeps {:g} us at the least: lower the rate or add flows",
                      c.test.rr.rate_tps, flows, spacing_us, kMinRequestSpacingUs));
    }
  }
  if (c.test.rr.transactions != 0 && c.test.rr.transactions < flows) {
    throw UsageError(fmt::format("-n {}: fewer {} than flows (--flows {}); each makes one at least",
                                 c.test.rr.transactions, counted, flows));
  }
}

}  // namespace

void configure_flows(const SharedFlags& flags, session::ClientConfig& c) {
  const auto asked = [&](TestKind kind) {
    return std::find(flags.asked.begin(), flags.asked.end(), kind) != flags.asked.end();
  };
  if (asked(TestKind::handshake))
    throw UsageError("--flows holds connections for bulk streams, --rr or --crr; leave --handshakes out");
  if (asked(TestKind::http) && (asked(TestKind::crr) || asked(TestKind::rr)))
    throw UsageError(
        "--flows with --http and --rr or --crr: a flow does one work; --request and --response set an HTTP "
        "flow's sizes");
  spec::Flows& f = c.test.flows;
  f.work = asked(TestKind::crr)    ? spec::FlowWork::crr
           : asked(TestKind::http) ? spec::FlowWork::http
           : asked(TestKind::rr)   ? spec::FlowWork::rr
                                   : spec::FlowWork::stream;
  const auto refuse = [](const char* flag, const char* why) {
    throw UsageError(fmt::format("{} {}; {}", flag, why, kFlowsKind.takes));
  };
  const spec::Stream plain_stream;
  const bool stream = f.work == spec::FlowWork::stream;
  if (c.test.streams != 1) refuse("-P", "is a thread per connection, and --flows holds its on event loops");
  if (!flags.length.empty() && !stream) refuse("-l", "is for bulk flows");
  if (c.test.stream.direction != plain_stream.direction && !stream) refuse("-R", "is for bulk flows");
  if (c.test.stream.no_delay) refuse("-N", "does nothing here: flows always set TCP_NODELAY");
  if (c.test.stream.bidir) refuse("--bidir", "is for -P streams");
  if (c.test.stream.framing != plain_stream.framing || c.test.stream.msg_size != 0 ||
      c.test.stream.read_size != 0)
    refuse("--framing, --msg-size and --read-size", "are for -P streams");
  if (c.test.crr.close != spec::Crr{}.close && f.work != spec::FlowWork::crr)
    refuse("--close", "is for --crr");
  if (c.test.crr.compare_key_types) refuse("--compare-key-types", "is for --crr without --flows");
  if (c.test.compare_groups) refuse("--compare-groups", "is for handshake and crr tests");
  if (c.test.verify) refuse("--verify", "is for -P connections");
  if (f.work == spec::FlowWork::http) {
    if (c.quic_streams > 1) refuse("--streams", "is HTTP/2's requests in flight; a flow makes one at a time");
    if (!c.urls.empty()) refuse("--url", "loads a server of another make from -P connections");
    if (c.test.http.version == 3)
      throw UsageError(
          "--flows with --http 3: HTTP/3 runs on -P connections (each its thread); --flows holds HTTP/1.1 or "
          "2");
    if (c.test.http.requests_per_connection != 0 || c.test.http.resume_percent != 0)
      refuse("--requests-per-connection and --resume-ratio", "are for --http on -P connectors");
  }
  if (c.test.interval_ms > 0) refuse("-i", "is for -P connections");
  configure_flow_work(flags, c);
}

void check_flows_host(const session::ClientConfig& c) {
  refuse_beyond_ports(c);
  refuse_beyond_descriptors(c);
}

std::uint32_t flow_threads(const spec::Test& test, int cpu) {
  const std::uint32_t cpus =
      cpu >= 0 ? 1 : std::max<std::uint32_t>(1, static_cast<std::uint32_t>(measure::allowed_cpus().size()));
  return std::clamp<std::uint32_t>(test.flows.threads > 0 ? test.flows.threads : cpus, 1,
                                   std::max<std::uint32_t>(1, test.flows.flows));
}

}  // namespace tlscmp::kinds
