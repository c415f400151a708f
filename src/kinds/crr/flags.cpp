// The crr kind's client flags (--crr, which asks for it, --close and
// --compare-key-types), and what a crr test makes of the flags every kind
// shares: -n counts connections, -P connectors, and --rr (default 1/1) sizes
// each connection's transaction.

#include <fmt/format.h>

#include "kinds/crr/crr.hpp"
#include "kinds/flags.hpp"
#include "kinds/transactions.hpp"

namespace tlscmp::kinds {

std::vector<CLI::Option*> add_crr_flags(CLI::App& cmd, KindFlags& flags) {
  spec::Crr& crr = flags.test.crr;
  return {
      cmd.add_flag_callback(
             "--crr", [&flags] { flags.ask(TestKind::crr); },
             "Instead of bulk runs: a new connection per transaction (connect, TLS handshake, one --rr "
             "request and response, default 1/1, close) on each of -P connectors, for -t seconds "
             "(default 10) or -n connections in all; tcp, tls and tls-resumed (quic and quic-resumed "
             "with quic in --mode)")
          ->excludes(cmd.get_option("--handshakes")),
      cmd.add_option_function<std::string>(
             "--close",
             [&crr](const std::string& text) {
               crr.close = text == "fin" ? spec::Close::fin : spec::Close::reset;
             },
             "With --crr: how the client closes each connection: reset (SO_LINGER 0, the default: no "
             "TIME_WAIT, ports never run out) or fin (an orderly close, as most clients do: each port "
             "then waits 60 s in TIME_WAIT)")
          ->check(CLI::IsMember({"reset", "fin"}))
          ->type_name("reset|fin"),
      cmd.add_flag(
             "--compare-key-types", crr.compare_key_types,
             "With --crr: full TLS handshakes against a server certificate of each key type (RSA 2048 and "
             "3072, ECDSA P-256 and P-384, Ed25519) that the server makes for the test, against tcp")
          ->excludes(cmd.get_option("--compare-groups")),
  };
}

void configure_crr(const SharedFlags& flags, session::ClientConfig& c) {
  const auto refuse = [](const char* flag) {
    throw UsageError(fmt::format("{} does not apply to --crr; {}", flag, kCrrKind.takes));
  };
  if (c.test.stream.no_delay) throw UsageError("-N: crr connections always set TCP_NODELAY; leave -N out");
  const std::pair<bool, const char*> not_crr[] = {
      {c.test.record_size != 0, "--record-size"},
      {!flags.length.empty(), "-l"},
      {c.compare_ciphers, "--compare-ciphers"},
      {c.test.rr.rate_tps > 0, "--rate"},
      {c.test.verify, "--verify"},
      {c.tls_policy.ktls, "--ktls"},
      {c.test.interval_ms > 0, "-i"},
      {c.test.sndbuf_bytes != 0 || c.test.rcvbuf_bytes != 0, "-w/--sndbuf/--rcvbuf"}};
  for (const auto& [given, flag] : not_crr) {
    if (given) refuse(flag);
  }
  if ((c.test.crr.compare_key_types || c.test.compare_groups) && !c.encrypts()) {
    throw UsageError(fmt::format("{} compares TLS handshakes, and --mode {} runs none: use --mode both",
                                 c.test.crr.compare_key_types ? "--compare-key-types" : "--compare-groups",
                                 flags.mode));
  }
  if (c.server_cpu >= 0) {
    const std::string client = c.client_cpu >= 0 ? std::to_string(c.client_cpu) : "";
    throw UsageError(
        fmt::format("-A {},{}: --crr connections are served by the server's accepting threads, which serve "
                    "every test: give -A the client's CPU alone (-A {})",
                    client, c.server_cpu, client.empty() ? "0" : client));
  }
  if (c.test.rr.request_bytes == 0) c.test.rr.request_bytes = c.test.rr.response_bytes = 1;  // --rr 1/1
  configure_transactions(flags, c, "connections", "connectors");
}

}  // namespace tlscmp::kinds
