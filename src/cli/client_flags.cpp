#include "cli/client_flags.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "error.hpp"
#include "kinds/kind.hpp"
#include "measure/clock.hpp"
#include "measure/host.hpp"
#include "stacks/stack.hpp"
#include "transport/socket.hpp"

namespace tlscmp::cli {
namespace {

// The most streams a QUIC connection opens at once: OpenSSL's default limit
// on a peer's concurrent bidirectional streams.
constexpr std::uint32_t kMaxQuicStreams = 100;

std::uint64_t milliseconds_count(double seconds) {
  return static_cast<std::uint64_t>(milliseconds_of(seconds).count());
}

// --repeat N: N; not given, or auto (whose rounds parse_auto_repeat sets): 0.
int repeat_count(const ClientFlags& flags) {
  if (flags.repeat.empty() || flags.repeat == "auto") return 0;
  int n = 0;
  const auto [end, ec] = std::from_chars(flags.repeat.data(), flags.repeat.data() + flags.repeat.size(), n);
  if (ec != std::errc{} || end != flags.repeat.data() + flags.repeat.size() || n < 1 || n > kMaxRounds) {
    throw UsageError(
        fmt::format("--repeat {}: give a number of rounds, 1 to {}, or auto", flags.repeat, kMaxRounds));
  }
  return n;
}

// --mode: one transport, or a list run in turn, the baseline of the ratios
// first (tls,tcp); both is tcp,tls and both-udp udp,dtls, alone or in the
// list (both,quic). Fills `modes`, or says what is wrong with the list.
std::string parse_modes(const std::string& text, std::vector<Mode>& modes) {
  modes.clear();
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string word = text.substr(start, comma - start);
    const std::vector<Mode> named = stacks::modes_of_word(word);
    if (named.empty()) {
      return fmt::format(
          "'{}' is no transport; give {}, or a list of them (tcp,tls,quic), where both stands for tcp,tls "
          "and both-udp for udp,dtls",
          word, stacks::mode_words());
    }
    for (const Mode mode : named) {
      if (std::find(modes.begin(), modes.end(), mode) != modes.end())
        return fmt::format("{} is given twice; give each transport once", to_string(mode));
      modes.push_back(mode);
    }
    start = comma + 1;
  }
  if (std::any_of(modes.begin(), modes.end(),
                  [&](Mode m) { return is_datagram(m) != is_datagram(modes[0]); }))
    return "tcp, tls and quic carry streams, udp and dtls datagrams; one test runs one or the other";
  return {};
}

std::vector<Mode> modes_of(const std::string& text) {
  std::vector<Mode> modes;
  if (const std::string problem = parse_modes(text, modes); !problem.empty())
    throw UsageError(fmt::format("--mode {}: {}", text, problem));
  for (const Mode mode : modes) {
    if (const std::string why = stacks::unavailable(mode); !why.empty()) {
      throw UsageError(fmt::format("--mode {}: this tlscmp has no {} ({}); leave {} out", text,
                                   facts(mode).handshake, why, to_string(mode)));
    }
  }
  return modes;
}

// The one place a test's kind comes from: the flags that ask for it (--crr,
// --rr, --handshakes) and the settings (a datagram --mode): a kind that
// holds the others' work (--flows) where asked, else the last kind of the
// table asked for; none: the first, bulk streams.
TestKind kind_of_flags(const ClientFlags& flags, const session::ClientConfig& c) {
  const std::span<const kinds::KindSlice* const> table = kinds::all_kinds();
  for (const kinds::KindSlice* kind : table) {
    if (kind->holds_work && flags.asked[static_cast<std::size_t>(kind->kind)]) return kind->kind;
  }
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    const kinds::KindSlice& kind = **it;
    if (flags.asked[static_cast<std::size_t>(kind.kind)] || (kind.asked_by != nullptr && kind.asked_by(c)))
      return kind.kind;
  }
  return table.front()->kind;
}

// --repeat auto and its limits; the limits alone are a mistake.
void parse_auto_repeat(const ClientFlags& flags, session::ClientConfig& c) {
  const bool limits = flags.ci_target > 0 || flags.max_rounds > 0 || flags.max_time_s > 0;
  if (flags.repeat != "auto") {
    if (limits) throw UsageError("--ci-target, --max-rounds and --max-time are for --repeat auto");
    return;
  }
  if (!kinds::slice_of(c.test.kind).paired_ratios)
    throw UsageError(fmt::format(
        "--repeat auto repeats rounds until the TLS/TCP ratios are known closely, and {} tests pair no runs: "
        "give --repeat N",
        to_string(c.test.kind)));
  if (c.modes.size() < 2)
    throw UsageError(fmt::format(
        "--repeat auto needs a TLS/TCP ratio, and --mode {} runs one mode: use --mode both", flags.mode));
  measure::AutoRepeat rule;
  if (flags.ci_target > 0) rule.ci_target = flags.ci_target / 100;
  if (flags.max_rounds > 0) rule.max_rounds = flags.max_rounds;
  rule.max_time_s = flags.max_time_s;
  c.auto_repeat = rule;
  c.rounds = rule.max_rounds;
}

// TLS settings where no TLS runs: refused, as -b is without datagrams, so that
// a flag never silently does nothing.
void refuse_tls_flags_without_tls(const ClientFlags& flags, const session::ClientConfig& c) {
  if (c.encrypts()) return;
  // With udp, DTLS would take the first six; the datagram kind's configure refuses the rest.
  const bool datagrams = is_datagram(c.modes.front());
  const std::pair<bool, const char*> given[] = {
      {!flags.tls_policy.version.empty(), "--tls-version"},
      {!flags.tls_policy.cipher.empty(), "--cipher"},
      {!flags.tls_policy.groups.empty(), "--groups"},
      {!flags.ca_file.empty(), "--ca"},
      {flags.insecure, "--insecure"},
      {!flags.cert_file.empty(), "--cert"},
      {flags.tls_policy.ktls && !datagrams, "--ktls"},
      {flags.test.record_size != 0 && !datagrams, "--record-size"},
      {flags.compare_ciphers && !datagrams, "--compare-ciphers"},
      {flags.test.compare_groups && !datagrams, "--compare-groups"}};
  for (const auto& [set, flag] : given) {
    if (set) {
      throw UsageError(fmt::format("{} is for TLS, and --mode {} runs none: use --mode {}", flag, flags.mode,
                                   datagrams ? "dtls or both-udp" : "tls or both"));
    }
  }
}

// The TLS flags a stack of --mode cannot hold (QUIC: TLS 1.2, the
// kernel's TLS), refused in one line that says why.
void refuse_tls_flags_of_stacks(const ClientFlags& flags, const session::ClientConfig& c) {
  for (const Mode mode : c.modes) {
    const stacks::Stack& stack = stacks::stack_of(mode);
    if (stack.refuse_policy == nullptr) continue;
    if (const std::string why = stack.refuse_policy(flags.tls_policy); !why.empty())
      throw UsageError(fmt::format("{}; leave {} out of --mode, or the flag", why, to_string(mode)));
  }
}

// --streams S: S QUIC streams on each of -P connections, against -P x S
// TCP and TLS connections.
// The kinds of the table that have `capability`, by the flag that asks for
// each (or what its flags are for), for a refusal: "bulk runs and --rr".
std::string kinds_with(bool kinds::KindSlice::*capability) {
  std::vector<std::string> names;
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->*capability) names.push_back(kind->flag != nullptr ? kind->flag : kind->flags_are_for);
  }
  return fmt::format("{}", fmt::join(names, " and "));
}

void apply_quic_streams(session::ClientConfig& c) {
  const std::uint32_t s = c.quic_streams;
  if (s == 1) return;
  if (std::none_of(c.modes.begin(), c.modes.end(), [](Mode m) { return facts(m).streams; })) {
    throw UsageError(fmt::format(
        "--streams {}: QUIC streams on each connection, and --mode has no quic; add quic to --mode (--mode "
        "tcp,tls,quic), or use -P for connections",
        s));
  }
  if (!kinds::slice_of(c.test.kind).quic_streams) {
    throw UsageError(
        fmt::format("--streams {}: {} take QUIC streams; {} opens a QUIC connection a transaction", s,
                    kinds_with(&kinds::KindSlice::quic_streams), to_string(c.test.kind)));
  }
  if (std::uint64_t{s} * c.test.streams > protocol::kMaxStreams) {
    throw UsageError(fmt::format("--streams {} with -P {}: {} streams in all, and at most {} run; lower one",
                                 s, c.test.streams, std::uint64_t{s} * c.test.streams,
                                 protocol::kMaxStreams));
  }
  c.test.streams *= s;
}

// -A CLIENT[,SERVER] (or ",SERVER"): CPU numbers, the client's checked here.
void parse_affinity(const ClientFlags& flags, session::ClientConfig& c) {
  if (flags.affinity.empty()) return;
  const auto cpu = [&](const std::string& text, const char* whose) {
    int n = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n < 0 ||
        n > static_cast<int>(protocol::kMaxCpu)) {
      throw UsageError(fmt::format("-A {}: the {} CPU '{}' is not a CPU number; write -A 0, -A 0,1 or -A ,1",
                                   flags.affinity, whose, text));
    }
    return n;
  };
  const auto comma = flags.affinity.find(',');
  const std::string mine = flags.affinity.substr(0, comma);
  if (!mine.empty()) {
    c.client_cpu = cpu(mine, "client");
    if (const std::string why = measure::check_cpu(c.client_cpu); !why.empty())
      throw UsageError(fmt::format("-A {}: {}", flags.affinity, why));
  }
  if (comma != std::string::npos) c.server_cpu = cpu(flags.affinity.substr(comma + 1), "server");
}

// --start-at TIME: "2026-12-01T09:30:00Z" or with a fraction of a second, or "@1796117400".
void parse_start_at(const ClientFlags& flags, session::ClientConfig& c) {
  if (flags.start_at.empty()) {
    if (flags.skew_s > 0) throw UsageError("--max-skew is for --start-at");
    return;
  }
  const std::string& t = flags.start_at;
  const auto bad = [&] {
    return UsageError(
        fmt::format("--start-at {}: write a UTC time as 2026-12-01T09:30:00Z (a fraction of a second may "
                    "follow the seconds) or "
                    "seconds since the epoch as @1796117400",
                    t));
  };
  double seconds = 0;
  if (t.front() == '@') {
    const char* begin = t.c_str() + 1;
    char* end = nullptr;
    seconds = std::strtod(begin, &end);
    if (end == begin || *end != '\0' || !(seconds > 0) || seconds > 1e11) throw bad();
  } else {
    std::tm tm{};
    double second = 0;
    char zone = 0;
    int used = 0;
    if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%c%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &second, &zone, &used) != 7 ||
        zone != 'Z' || static_cast<std::size_t>(used) != t.size() || tm.tm_mon < 1 || tm.tm_mon > 12 ||
        tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || second < 0 ||
        second >= 61) {
      throw bad();
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const std::time_t whole = ::timegm(&tm);
    if (whole < 0) throw bad();
    seconds = static_cast<double>(whole) + second;
  }
  // A fleet starts minutes ahead; a time days away is a typo (a year, a
  // month), and would wait without a word until then.
  const double ahead_s = seconds - static_cast<double>(measure::wall_ns()) / 1e9;
  if (ahead_s > kMaxStartAheadS) {
    throw UsageError(
        fmt::format("--start-at {}: that is {} from now by this host's clock; give a time within a day", t,
                    ahead_s < 2 * 86'400 ? fmt::format("{:.1f} hours", ahead_s / 3600)
                                         : fmt::format("{:.0f} days", ahead_s / 86'400)));
  }
  c.start_at_ns = static_cast<std::int64_t>(seconds * 1e9);
  if (flags.skew_s > 0) c.max_skew_s = flags.skew_s;
}

// HOST as written in URLs: "[::1]", or "[fd00::1]:5678" with a port; a bare
// IPv6 address (::1) or a name is taken as it is.
void split_host(const ClientFlags& flags, session::ClientConfig& c) {
  c.host = flags.target;
  if (flags.target.empty() || flags.target.front() != '[') return;
  const auto close = flags.target.find(']');
  if (close == std::string::npos || close == 1)
    throw UsageError(
        fmt::format("host '{}': write an IPv6 address as [ADDRESS] or [ADDRESS]:PORT", flags.target));
  c.host = flags.target.substr(1, close - 1);
  const std::string rest = flags.target.substr(close + 1);
  if (rest.empty()) return;
  int port = 0;
  const auto [end, ec] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), port);
  if (rest.front() != ':' || ec != std::errc{} || end != rest.data() + rest.size() || port < 1 ||
      port > 65535)
    throw UsageError(fmt::format("host '{}': the port after ']:' must be 1 to 65535", flags.target));
  if (flags.port != session::kDefaultPort && flags.port != port)
    throw UsageError(fmt::format("host '{}' and -p {} name two ports; give one", flags.target, flags.port));
  c.port = static_cast<std::uint16_t>(port);
}

// -w, --sndbuf and --rcvbuf of a client: the warning, or "".
std::string slow_buffers_warning(const ClientFlags& flags) {
  const std::uint32_t send = flags.test.sndbuf_bytes;
  const std::uint32_t receive = flags.test.rcvbuf_bytes;
  std::string given;
  if (flags.window) {
    if (slow_socket_buffer(send)) given = "-w " + size_text(send);
  } else {
    if (slow_socket_buffer(send)) given = "--sndbuf " + size_text(send);
    if (slow_socket_buffer(receive))
      given += (given.empty() ? "--rcvbuf " : " and --rcvbuf ") + size_text(receive);
  }
  return given.empty() ? std::string() : cli::slow_buffers_warning(given);
}

// Where the server is, where this side connects from, and when to start.
void add_target_flags(CLI::App* cmd, ClientFlags& flags) {
  cmd->add_option("host", flags.target, "Server host name or address (none: an embedded server on loopback)");
  cmd->add_option("-p,--port", flags.port, "Server port")->check(CLI::Range(1, 65535))->capture_default_str();
  cmd->add_option("-B,--bind", flags.bind_address,
                  "Connect from this local IP address (the TCP connections; as iperf3's -B); with --flows a "
                  "list or a range of them (127.0.0.1-127.0.0.8), over which the flows are spread")
      ->type_name("ADDR");
  cmd->add_option("-A,--affinity", flags.affinity,
                  "Pin the data threads to a CPU: the client's, and after a comma the server's (as "
                  "iperf3's -A; ',1' pins the server's alone)")
      ->type_name("CLIENT[,SERVER]");
  cmd->add_option("--start-at", flags.start_at,
                  "Start the first run at this wall-clock time, as every host of a fleet does: "
                  "2026-12-01T09:30:00Z (UTC) or @EPOCH_SECONDS")
      ->type_name("TIME");
  cmd->add_option(
         "--max-skew", flags.skew_s,
         "With --start-at: refuse to start if this host's clock is further than this from the server's, "
         "in seconds (default 0.1)")
      ->check(NumberRange(0.0001, 3600.0))
      ->type_name("S");
}

// What a run moves and for how long.
void add_run_flags(CLI::App* cmd, ClientFlags& flags) {
  // The check's name lists the words, for the bash completion (cli/manual.cpp).
  const CLI::Validator transports(
      [](std::string& text) {
        std::vector<Mode> modes;
        return parse_modes(text, modes);
      },
      "{tcp,tls,both,udp,dtls,both-udp}");
  cmd->add_option("--mode", flags.mode,
                  "tcp, tls, or both (alternating tcp, tls); udp, dtls, or both-udp (alternating udp, dtls): "
                  "datagrams from -P senders, counted for loss. A list runs its transports in turn, the "
                  "first the baseline of the ratios: tls,tcp")
      ->check(transports)
      ->capture_default_str();
  CLI::Option* bytes = cmd->add_option("-n,--bytes", flags.bytes,
                                       "Payload bytes per run (default 1G); in datagram modes datagrams per "
                                       "sender (default 1000000); with --rr transactions per run, over all "
                                       "connections. K, M, G, T, P suffixes are powers of 1024")
                           ->type_name("SIZE");
  CLI::Option* time =
      cmd->add_option("-t,--time", flags.time_s, "Seconds the sender sends per run, instead of a byte count")
          ->check(NumberRange(0.001, kMaxSeconds));
  bytes->excludes(time);
  cmd->add_option(
         "-i,--interval", flags.interval_s,
         "Report the receiver's bytes (datagram modes: datagrams received and lost) every this many seconds")
      ->check(NumberRange(kMinIntervalSeconds, kMaxSeconds));
  cmd->add_option(
         "-l,--length", flags.length,
         "Chunk size: bytes per write and per read (default 64K); in datagram modes bytes per datagram, "
         "12-byte header included (default 15)")
      ->type_name("SIZE");
}

// Trust, rounds, and what is printed.
void add_rounds_and_output_flags(CLI::App* cmd, ClientFlags& flags) {
  CLI::Option* ca =
      cmd->add_option("--ca", flags.ca_file, "Trust the CA certificates in this PEM file")->type_name("FILE");
  CLI::Option* insecure =
      cmd->add_flag("--insecure", flags.insecure, "Do not verify the server's certificate or host name");
  ca->excludes(insecure);
  cmd->add_option(
         "--repeat", flags.repeat,
         "Rounds to measure, each running every mode once, in turn (default 5; 3 with --rr and --crr; "
         "1 in datagram modes); auto: until each TLS/TCP ratio's 95% CI is within --ci-target")
      ->type_name("N|auto");
  cmd->add_option(
         "--ci-target", flags.ci_target,
         "--repeat auto: the 95% CI's half-width to reach, in percent of the ratio's median (default 5)")
      ->check(NumberRange(0.1, 100.0))
      ->type_name("PCT");
  cmd->add_option("--max-rounds", flags.max_rounds, "--repeat auto: stop after this many rounds (default 30)")
      ->check(CLI::Range(5, kMaxRounds));
  cmd->add_option("--max-time", flags.max_time_s,
                  "--repeat auto: start no round that would end past this many seconds of rounds")
      ->check(NumberRange(0.001, 1e7))
      ->type_name("S");
  cmd->add_option("--warmup", flags.warmup_rounds, "Rounds to run first and leave out of the statistics")
      ->check(CLI::Range(0, kMaxRounds))
      ->capture_default_str();
  CLI::Option* json = cmd->add_flag("-J,--json", flags.json, "Print one JSON object instead of tables");
  CLI::Option* csv = cmd->add_flag("--csv", flags.csv, "Print CSV: a header line and one row per run");
  CLI::Option* stream = cmd->add_flag(
      "--json-stream", flags.json_stream,
      "Print a JSON object per line as things happen: start, each run (with -i each interval), end");
  json->excludes(csv);
  stream->excludes(json);
  stream->excludes(csv);
  cmd->add_option("--html", flags.html,
                  "Also write a report page to FILE at the end: charts, the ratio and the environment "
                  "(as tlscmp report makes)")
      ->type_name("FILE");
  cmd->add_flag("--verify", flags.test.verify,
                "Send a seeded pattern and check every byte on the receiver (costs CPU; off by default)");
}

// TLS: the policy, client certificates, and the comparisons of suites and groups.
void add_tls_flags(CLI::App* cmd, ClientFlags& flags) {
  add_tls_libraries_flags(cmd, flags.tls_policy);
  add_tls_policy_flags(cmd, flags.tls_policy, "the client");
  cmd->add_flag("--compare-ciphers", flags.compare_ciphers,
                "Run TLS once per suite (the TLS 1.3 suites, TLS 1.2 AES-GCM and ChaCha20) against TCP, in "
                "one table")
      ->excludes(cmd->get_option("--cipher"))
      ->excludes(cmd->get_option("--tls-version"));
  CLI::Option* cert =
      cmd->add_option("--cert", flags.cert_file, "Client certificate chain (PEM), for mutual TLS")
          ->type_name("FILE");
  CLI::Option* key =
      cmd->add_option("--key", flags.key_file, "Client private key (PEM, unencrypted)")->type_name("FILE");
  cert->needs(key);
  key->needs(cert);
  cmd->add_flag("--compare-groups", flags.test.compare_groups,
                "Instead of bulk runs: full and resumed handshakes with each key exchange group the TLS "
                "library has (20 of each per group and round, or --handshakes N), in one table with ratios "
                "to X25519; with --crr, full handshakes under load with each group, against tcp")
      ->excludes(cmd->get_option("--groups"))
      ->excludes(cmd->get_option("--compare-ciphers"));
}

// The workload's shape that every kind shares: buffers, connections, records.
void add_shape_flags(CLI::App* cmd, ClientFlags& flags) {
  spec::Test& sizes = flags.test;
  CLI::Option* window =
      cmd->add_option_function<std::string>(
             "-w,--window",
             [&flags](const std::string& text) {
               flags.test.sndbuf_bytes = flags.test.rcvbuf_bytes =
                   static_cast<std::uint32_t>(parse_size(text, "-w", 1024, protocol::kMaxSocketBufferBytes));
               flags.window = true;
             },
             "SO_SNDBUF and SO_RCVBUF on both ends")
          ->type_name("SIZE");
  add_size(cmd, "--sndbuf", sizes.sndbuf_bytes, "--sndbuf", 1024, protocol::kMaxSocketBufferBytes,
           "SO_SNDBUF on both ends")
      ->excludes(window);
  add_size(cmd, "--rcvbuf", sizes.rcvbuf_bytes, "--rcvbuf", 1024, protocol::kMaxSocketBufferBytes,
           "SO_RCVBUF on both ends")
      ->excludes(window);
  cmd->add_option("-P,--parallel", flags.test.streams,
                  "Parallel data connections per run, each its own stream")
      ->check(CLI::Range(1, static_cast<int>(protocol::kMaxStreams)))
      ->capture_default_str();
  cmd->add_option("--streams", flags.quic_streams,
                  "QUIC streams on each connection (bulk, --rr), against -P x S tcp and tls connections")
      ->check(CLI::Range(1, static_cast<int>(kMaxQuicStreams)))
      ->capture_default_str();
  add_size(cmd, "--record-size", sizes.record_size, "--record-size", protocol::kMinRecordBytes,
           protocol::kMaxRecordBytes,
           "Largest TLS record the sender writes, 512..16K bytes (max send fragment)");
}

// Each kind's own flags, in the table's order, kept for the refusal of one
// given to a test of another kind.
void add_kind_flags(CLI::App* cmd, ClientFlags& flags) {
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->add_flags == nullptr) continue;
    for (CLI::Option* option : kind->add_flags(*cmd, flags))
      flags.kind_options.push_back(option);
  }
}

}  // namespace

void add_client_command(CLI::App& app, ClientFlags& flags) {
  CLI::App* cmd = app.add_subcommand("client", "Run the TCP vs TLS comparison against a server");
  add_target_flags(cmd, flags);
  add_run_flags(cmd, flags);
  add_rounds_and_output_flags(cmd, flags);
  add_tls_flags(cmd, flags);
  add_shape_flags(cmd, flags);
  add_kind_flags(cmd, flags);
  add_timeout_flags(cmd, flags.timeouts);
}

namespace {

// What the flags every kind shares make of the settings, as most kinds take
// them; the test's kind then reads -n, -t, -l and --repeat its own way.
void apply_shared_flags(const ClientFlags& flags, session::ClientConfig& c) {
  if (flags.time_s > 0) c.test.duration_ms = milliseconds_count(flags.time_s);
  c.test.interval_ms = milliseconds_count(flags.interval_s);
  c.test.chunk_bytes = static_cast<std::uint32_t>(
      parse_size(flags.length.empty() ? "64K" : flags.length, "-l/--length", 1, protocol::kMaxChunkBytes));
  c.rounds = repeat_count(flags) > 0 ? repeat_count(flags) : 5;
  parse_affinity(flags, c);
  parse_start_at(flags, c);
}

// -B's list or range: the first address binds the control connection, and
// --flows spreads its connections over all of them.
void split_sources(session::ClientConfig& c) {
  if (c.bind_address.find_first_of(",-") == std::string::npos) return;
  std::string problem;
  std::vector<std::string> addresses = parse_address_list(c.bind_address, problem);
  if (addresses.empty()) throw UsageError(fmt::format("-B {}: {}", c.bind_address, problem));
  if (addresses.size() > 1 && !kinds::slice_of(c.test.kind).several_sources) {
    throw UsageError(fmt::format("-B {}: several source addresses are for {}; give one", c.bind_address,
                                 kinds_with(&kinds::KindSlice::several_sources)));
  }
  c.bind_address = addresses.front();
  if (addresses.size() > 1) c.source_addresses = std::move(addresses);
}

// The test's kind reads the flags as it means them; a flag of another kind,
// or a shared one it has no use for, is refused.
void apply_kind_flags(const ClientFlags& flags, session::ClientConfig& c) {
  const kinds::KindSlice& kind = kinds::slice_of(c.test.kind);
  apply_shared_flags(flags, c);
  std::vector<TestKind> asked;
  for (TestKind k : kAllKinds) {
    if (flags.asked[static_cast<std::size_t>(k)]) asked.push_back(k);
  }
  if (kind.configure != nullptr)
    kind.configure({flags.bytes, flags.time_s, flags.length, repeat_count(flags), flags.mode, asked}, c);
  kinds::refuse_unread(c.test);
  for (const CLI::Option* option : flags.kind_options)
    kinds::refuse_given(*option, c.test);
}

}  // namespace

ClientCommand to_client_command(const ClientFlags& flags) {
  ClientCommand command;
  session::ClientConfig& c = command.config;
  c = flags;  // the settings the flags were bound into, whole
  c.modes = modes_of(flags.mode);
  c.test.kind = kind_of_flags(flags, c);
  // Before the TLS flags: with datagrams, --rr is the mistake to name.
  if (const kinds::KindSlice& kind = kinds::slice_of(c.test.kind);
      kind.flag != nullptr && kind.asked_by == nullptr && is_datagram(c.modes.front())) {
    throw UsageError(
        fmt::format("{} runs over tcp and tls; --mode {} sends datagrams", kind.flag, flags.mode));
  }
  refuse_tls_flags_without_tls(flags, c);
  refuse_tls_flags_of_stacks(flags, c);
  split_host(flags, c);
  split_sources(c);
  apply_kind_flags(flags, c);
  apply_quic_streams(c);
  // Datagram buffers only drop what does not fit, and the loss is counted.
  if (const std::string slow = slow_buffers_warning(flags); !slow.empty() && !is_datagram(c.modes.front()))
    command.warnings.push_back(slow);
  parse_auto_repeat(flags, c);
  for (Mode mode : c.modes) {
    try {
      kinds::check_test(c.test, mode);
    } catch (const spec::Invalid& e) {
      throw UsageError(e.what());
    }
  }
  kinds::check_host(c);
  command.html_path = flags.html;
  command.format = flags.json          ? session::OutputFormat::json
                   : flags.json_stream ? session::OutputFormat::json_stream
                   : flags.csv         ? session::OutputFormat::csv
                                       : session::OutputFormat::text;
  return command;
}

}  // namespace tlscmp::cli
