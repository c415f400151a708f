#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "error.hpp"
#include "stacks/stack.hpp"
#include "support/skip.hpp"
#include "transport/descriptors.hpp"

using namespace tlscmp;

namespace {

cli::Command parse(std::vector<std::string> args) {
  args.insert(args.begin(), "tlscmp");
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  return cli::parse_command_line(static_cast<int>(argv.size()), argv.data());
}

session::ClientConfig client(std::vector<std::string> args) {
  args.insert(args.begin(), "client");
  return std::get<cli::ClientCommand>(parse(args)).config;
}

}  // namespace

TEST_CASE("client defaults: both modes, 1 GiB in 64 KiB chunks, client to server, embedded server") {
  const session::ClientConfig c = client({});
  CHECK(c.host.empty());
  CHECK(c.port == 5678);
  CHECK(c.modes == std::vector<Mode>{Mode::tcp, Mode::tls});
  CHECK(c.test.stream.bytes == (std::uint64_t{1} << 30));
  CHECK(c.test.chunk_bytes == 64 * 1024);
  CHECK(c.test.stream.direction == Direction::client_to_server);
  CHECK(c.rounds == 5);
  CHECK(c.warmup_rounds == 0);
  CHECK(c.test.duration().count() == 0);
  CHECK(c.test.interval().count() == 0);
  CHECK_FALSE(c.test.verify);
  CHECK_FALSE(c.insecure);
  CHECK(c.ca_file.empty());
  CHECK(std::get<cli::ClientCommand>(parse({"client"})).format == session::OutputFormat::text);
}

TEST_CASE("client flags use iperf3's letters") {
  const auto command = parse({"client", "server.example", "-p", "7000", "-n", "200M", "-l", "16K", "-R", "-J",
                              "--mode", "tls", "--repeat", "5", "--insecure", "-N"});
  const auto& c = std::get<cli::ClientCommand>(command);
  CHECK(c.config.host == "server.example");
  CHECK(c.config.port == 7000);
  CHECK(c.config.test.stream.bytes == 200u << 20);
  CHECK(c.config.test.chunk_bytes == 16u << 10);
  CHECK(c.config.test.stream.direction == Direction::server_to_client);
  CHECK(c.config.modes == std::vector<Mode>{Mode::tls});
  CHECK(c.config.rounds == 5);
  CHECK(c.config.insecure);
  CHECK(c.config.test.stream.no_delay);
  CHECK(c.format == session::OutputFormat::json);
}

TEST_CASE("--mode takes a list of transports, the baseline first") {
  CHECK(client({"--mode", "tls,tcp"}).modes == std::vector<Mode>{Mode::tls, Mode::tcp});
  CHECK(client({"--mode", "tcp,tls"}).modes == std::vector<Mode>{Mode::tcp, Mode::tls});
  CHECK(client({"--mode", "both"}).modes == std::vector<Mode>{Mode::tcp, Mode::tls});
  CHECK(client({"--mode", "both-udp"}).modes == std::vector<Mode>{Mode::udp, Mode::dtls});
  const session::ClientConfig datagrams = client({"--mode", "dtls,udp"});
  CHECK(datagrams.modes == std::vector<Mode>{Mode::dtls, Mode::udp});
  CHECK(datagrams.test.kind == TestKind::datagram);
  CHECK(client({"--mode", "tls,tcp", "--repeat", "auto"}).auto_repeat.has_value());
  CHECK(client({"--mode", "tcp,tls", "--cipher", "TLS_AES_128_GCM_SHA256"}).modes.size() == 2);
  const auto refused = [](const std::string& mode, const char* words) {
    CAPTURE(mode);
    CHECK_THROWS_WITH_AS(client({"--mode", mode}), doctest::Contains(words), UsageError);
  };
  refused("tcp,tcp", "tcp is given twice");
  refused("both,tls", "tls is given twice");
  refused("both,udp", "one test runs one or the other");
  refused("tcp,udp", "one test runs one or the other");
  refused("tls,quick", "'quick' is no transport");
  refused("tcp,udp,tls", "one test runs one or the other");
  refused("quic,dtls", "one test runs one or the other");
  if (stacks::unavailable(Mode::quic).empty()) {
    CHECK(client({"--mode", "tcp,tls,quic"}).modes == std::vector<Mode>{Mode::tcp, Mode::tls, Mode::quic});
    CHECK(client({"--mode", "both,quic"}).modes == std::vector<Mode>{Mode::tcp, Mode::tls, Mode::quic});
  } else {
    refused("tcp,tls,quic", "this tlscmp has no QUIC (needs OpenSSL 3.5 or newer");
  }
  refused("tcp,", "'' is no transport");
  CHECK_THROWS_WITH_AS(client({"--mode", "tcp", "--repeat", "auto"}), doctest::Contains("runs one mode"),
                       UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "tcp", "--cipher", "TLS_AES_128_GCM_SHA256"}),
                       doctest::Contains("--mode tcp runs none"), UsageError);
}

TEST_CASE("bad client flags are refused with a one-line reason") {
  CHECK_THROWS_AS(client({"--frobnicate"}), UsageError);
  CHECK_THROWS_AS(client({"--mode", "sctp"}), UsageError);
  CHECK_THROWS_AS(client({"-p", "0"}), UsageError);
  CHECK_THROWS_AS(client({"-p", "65536"}), UsageError);
  CHECK_THROWS_AS(client({"-n", "0"}), UsageError);
  CHECK_THROWS_AS(client({"-n", "ten"}), UsageError);
  CHECK_THROWS_AS(client({"-l", "17M"}), UsageError);  // above the protocol's chunk bound
  CHECK_THROWS_AS(client({"--repeat", "0"}), UsageError);
  CHECK_THROWS_AS(client({"--ca", "ca.pem", "--insecure"}), UsageError);
  try {
    client({"--frobnicate"});
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
    CHECK(std::string(e.what()).find("--frobnicate") != std::string::npos);
  }
}

TEST_CASE("an empty value or a number that is none is refused, not read as the flag left out") {
  // Each of these ran the defaults before (-n '' and -t nan a 1 GiB run, --ca '' the system's CAs).
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"client", "-n", ""},
                                             {"client", "-l", ""},
                                             {"client", "--repeat", ""},
                                             {"client", "--ca", ""},
                                             {"client", "--cipher", ""},
                                             {"client", "--html", ""},
                                             {"client", "--start-at", ""},
                                             {"client", "-B", ""},
                                             {"client", ""},
                                             {"server", "--bind", ""},
                                             {"certs", "--host", ""},
                                             {"sweep", "-n", "", "--msg-size", "1,2"}}) {
    CAPTURE(args);
    CHECK_THROWS_WITH_AS(parse(args), doctest::Contains("'': empty"), UsageError);
  }
  CHECK_THROWS_WITH_AS(client({"-n", ""}),
                       "-n/--bytes '': empty (a shell variable that is not set?); give a "
                       "value, or leave the flag out",
                       UsageError);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"client", "-t", "nan"},
                                             {"client", "-t", "inf"},
                                             {"client", "-t", "1e400"},
                                             {"client", "-i", "nan"},
                                             {"client", "--connect-timeout", "nan"},
                                             {"client", "--idle-timeout", "-nan"},
                                             {"client", "--max-skew", "nan"},
                                             {"client", "--repeat", "auto", "--ci-target", "nan"},
                                             {"client", "--repeat", "auto", "--max-time", "nan"},
                                             {"server", "--max-duration", "nan"},
                                             {"server", "--preamble-timeout", "nan"},
                                             {"server", "--shutdown-grace", "nan"},
                                             {"sweep", "-t", "nan", "--msg-size", "1,2"},
                                             {"compare", "a.json", "b.json", "--fail-if-slower", "nan"}}) {
    CAPTURE(args);
    CHECK_THROWS_WITH_AS(parse(args), doctest::Contains("is not a number; give one from"), UsageError);
  }
  CHECK_THROWS_WITH_AS(client({"-t", "nan"}), "--time: 'nan' is not a number; give one from 0.001 to 86400",
                       UsageError);
  CHECK_THROWS_WITH_AS(client({"-t", "0"}), "--time: 0 is outside 0.001 to 86400", UsageError);
  CHECK_THROWS_WITH_AS(client({"-n", "nan"}), doctest::Contains("not a number"), UsageError);
  CHECK_THROWS_WITH_AS(client({"--mode", "udp", "-b", "nan"}), doctest::Contains("not a number"), UsageError);
  CHECK_THROWS_WITH_AS(client({"--rr", "1/1", "-t", "1", "--rate", "nan"}), doctest::Contains("not a number"),
                       UsageError);
  CHECK(client({"-t", "1e1"}).test.duration().count() == 10'000);  // an exponent is a number
}

TEST_CASE("socket buffers small enough to make a TCP run crawl are a warning, and the run still goes") {
  const auto warnings = [](std::vector<std::string> args) {
    return std::get<cli::ClientCommand>(parse(args)).warnings;
  };
  const std::vector<std::string> one_k = warnings({"client", "-w", "1K"});
  REQUIRE(one_k.size() == 1);
  CHECK(
      one_k[0] ==
      "warning: -w 1K: socket buffers below 32K hold fewer than a few TCP segments, so the run may crawl (1 "
      "MiB can take a minute); give 64K or more, or leave the flag out for the kernel's own sizing");
  CHECK(warnings({"client", "--sndbuf", "8K", "--rcvbuf", "16K"})
            .at(0)
            .find("--sndbuf 8K and --rcvbuf 16K: ") != std::string::npos);
  CHECK(warnings({"client", "--rcvbuf", "4K", "--sndbuf", "1M"}).at(0).find("warning: --rcvbuf 4K: ") == 0);
  CHECK(warnings({"client", "-w", "32K"}).empty());
  CHECK(warnings({"client"}).empty());
  CHECK(
      warnings({"client", "--mode", "udp", "--rcvbuf", "4K"}).empty());  // datagrams are dropped, and counted
  const auto sweep = std::get<cli::SweepCommand>(parse({"sweep", "-w", "4K,16K,64K"}));
  REQUIRE(sweep.warnings.size() == 1);
  CHECK(sweep.warnings[0].find("warning: -w 4K, -w 16K: ") == 0);
}

TEST_CASE("duration, intervals, warm-up, CSV and verification") {
  const session::ClientConfig timed = client({"-t", "2.5", "-i", "0.5", "--warmup", "2", "--verify"});
  CHECK(timed.test.stream.bytes == 0);
  CHECK(timed.test.duration().count() == 2500);
  CHECK(timed.test.interval().count() == 500);
  CHECK(timed.warmup_rounds == 2);
  CHECK(timed.test.verify);
  CHECK(std::get<cli::ClientCommand>(parse({"client", "--csv"})).format == session::OutputFormat::csv);
}

TEST_CASE("impossible combinations are refused before anything starts") {
  CHECK_THROWS_WITH_AS(client({"-t", "2", "-n", "1G"}), doctest::Contains("excludes"), UsageError);
  CHECK_THROWS_AS(client({"-J", "--csv"}), UsageError);
  CHECK_THROWS_AS(client({"-t", "0"}), UsageError);
  CHECK_THROWS_AS(client({"-t", "-1"}), UsageError);
  CHECK_THROWS_AS(client({"-i", "0.01"}), UsageError);  // below 0.1 s
  CHECK_THROWS_AS(client({"--warmup", "-1"}), UsageError);
  CHECK_THROWS_AS(client({"-n", "-5"}), UsageError);
}

TEST_CASE("server flags") {
  const auto s = std::get<session::ServerConfig>(
      parse({"server", "-p", "0", "--bind", "::1", "--cert", "a.pem", "--key", "a.key"}));
  CHECK(s.port == 0);
  CHECK(s.bind_address == "::1");
  CHECK(s.cert_file == "a.pem");
  CHECK(s.key_file == "a.key");
  CHECK(std::get<session::ServerConfig>(parse({"server"})).port == 5678);
  CHECK_THROWS_AS(parse({"server", "--cert", "a.pem"}), UsageError);  // --cert needs --key
  CHECK_THROWS_AS(parse({"server", "--key", "a.key"}), UsageError);
}

TEST_CASE("--max-connections is held to the descriptors this process may open") {
  const std::uint64_t hard = descriptor_hard_limit();
  if (hard < 2 * kReservedDescriptors) {
    test::skip("this process may open only " + std::to_string(hard) + " descriptors");
    return;
  }
  const auto most = static_cast<int>(std::min<std::uint64_t>(hard - kReservedDescriptors, 100'000));
  const auto s =
      std::get<session::ServerConfig>(parse({"server", "--max-connections", std::to_string(most)}));
  CHECK(s.max_connections == most);
  // The default that follows from --max-clients stays within it.
  const auto many = std::get<session::ServerConfig>(parse({"server", "--max-clients", "10000"}));
  CHECK(many.max_connections <= most);
  CHECK(many.max_connections >= std::min(most, 512));
  if (hard - kReservedDescriptors < 100'000) {
    CHECK_THROWS_WITH_AS(parse({"server", "--max-connections", "100000"}),
                         doctest::Contains("the server holds a descriptor per connection"), UsageError);
    CHECK_THROWS_WITH_AS(parse({"server", "--max-connections", "100000"}), doctest::Contains("ulimit -Hn"),
                         UsageError);
  }
}

TEST_CASE("certs flags") {
  const auto c = std::get<session::CertsConfig>(
      parse({"certs", "--dir", "out", "--host", "a.example", "--host", "10.0.0.1"}));
  CHECK(c.dir == "out");
  CHECK(c.hosts == std::vector<std::string>{"a.example", "10.0.0.1"});
  CHECK(std::get<session::CertsConfig>(parse({"certs"})).dir == "certs");
  CHECK_THROWS_AS(parse({"certs", "--days", "0"}), UsageError);
}

TEST_CASE("help and a missing subcommand") {
  const auto help = std::get<cli::HelpRequest>(parse({"client", "--help"}));
  CHECK(help.exit_code == 0);
  CHECK(help.text.find("--reverse") != std::string::npos);
  CHECK(std::get<cli::HelpRequest>(parse({})).exit_code == 2);
  CHECK_THROWS_AS(parse({"serve"}), UsageError);
}

TEST_CASE("--rr: sizes, 10 s per run and 3 rounds by default, -n counts transactions, --rate needs -t") {
  const session::ClientConfig c = client({"--rr", "64/16K"});
  CHECK(c.test.rr.request_bytes == 64);
  CHECK(c.test.rr.response_bytes == 16384);
  CHECK(c.test.stream.bytes == 0);
  CHECK(c.test.duration() == std::chrono::seconds(10));
  CHECK(c.rounds == 3);
  CHECK(c.test.rr.transactions == 0);
  const session::ClientConfig n = client({"--rr", "1/1", "-n", "5000", "-P", "4", "--repeat", "1"});
  CHECK(n.test.rr.transactions == 5000);
  CHECK(n.test.streams == 4);
  CHECK(n.test.duration().count() == 0);
  CHECK(n.rounds == 1);
  const session::ClientConfig open = client({"--rr", "1K/1M", "-t", "3", "--rate", "20k"});
  CHECK(open.test.rr.rate_tps == 20000);
  CHECK(open.test.duration() == std::chrono::seconds(3));
  CHECK_THROWS_AS(client({"--rr", "1/1", "-n", "3", "-P", "4"}), UsageError);  // fewer than the connections
  CHECK_THROWS_AS(client({"--rr", "1/1", "--rate", "10"}), UsageError);
  CHECK_THROWS_AS(client({"--rr", "1/1", "--bidir"}), UsageError);
  CHECK_THROWS_AS(client({"--rr", "1/1", "-N"}), UsageError);
  CHECK_THROWS_AS(client({"--rr", "1/0"}), UsageError);
  CHECK_THROWS_AS(client({"--rr", "1/1/1"}), UsageError);
}
