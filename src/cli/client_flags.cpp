#include "cli/client_flags.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "error.hpp"
#include "kinds/kind.hpp"
#include "measure/clock.hpp"
#include "measure/host.hpp"

namespace tlscmp::cli {
namespace {

// --rr and --crr without -t or -n: 10 s of transactions.
constexpr std::uint64_t kDefaultRrMs = 10'000;

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
// first (tls,tcp); both is tcp,tls and both-udp udp,dtls. Fills `modes`, or
// says what is wrong with the list.
std::string parse_modes(const std::string& text, std::vector<Mode>& modes) {
  modes.clear();
  if (text == "both" || text == "both-udp") {
    modes =
        text == "both" ? std::vector<Mode>{Mode::tcp, Mode::tls} : std::vector<Mode>{Mode::udp, Mode::dtls};
    return {};
  }
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string word = text.substr(start, comma - start);
    const auto known =
        std::find_if(kAllModes.begin(), kAllModes.end(), [&](Mode m) { return word == to_string(m); });
    if (known == kAllModes.end()) {
      return fmt::format(
          "'{}' is no transport; give tcp, tls, udp or dtls, a list of them (tls,tcp), both or both-udp",
          word);
    }
    if (std::find(modes.begin(), modes.end(), *known) != modes.end())
      return fmt::format("{} is given twice; give each transport once", word);
    modes.push_back(*known);
    start = comma + 1;
  }
  if (is_datagram(modes.front()) != is_datagram(modes.back()))
    return "tcp and tls carry streams, udp and dtls datagrams; one test runs one or the other";
  return {};
}

std::vector<Mode> modes_of(const std::string& text) {
  std::vector<Mode> modes;
  if (const std::string problem = parse_modes(text, modes); !problem.empty())
    throw UsageError(fmt::format("--mode {}: {}", text, problem));
  return modes;
}

bool any_encrypted(const std::vector<Mode>& modes) {
  return std::any_of(modes.begin(), modes.end(), [](Mode m) { return is_encrypted(m); });
}

// The one place a test's kind comes from: the flags that ask for it.
TestKind kind_of_flags(const ClientFlags& flags) {
  for (TestKind kind : kAllKinds) {
    if (asked_for(flags, kind)) return kind;  // the kind's own flag (--crr), first
  }
  if (!flags.rr.empty()) return TestKind::rr;
  if (is_datagram(modes_of(flags.mode).front())) return TestKind::datagram;
  if (flags.test.handshake.handshakes > 0 || flags.test.compare_groups) return TestKind::handshake;
  return TestKind::stream;
}

// --repeat auto and its limits; the limits alone are a mistake.
void parse_auto_repeat(const ClientFlags& flags, session::ClientConfig& c) {
  const bool limits = flags.ci_target > 0 || flags.max_rounds > 0 || flags.max_time_s > 0;
  if (flags.repeat != "auto") {
    if (limits) throw UsageError("--ci-target, --max-rounds and --max-time are for --repeat auto");
    return;
  }
  if (c.test.kind == TestKind::datagram || c.test.kind == TestKind::handshake)
    throw UsageError(
        "--repeat auto repeats rounds until the TLS/TCP ratios are known closely: bulk, --rr and --crr runs "
        "have them; datagram modes and handshake tests do not");
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

// Datagram modes: what -n, -l, -b and -P mean there, and what does not apply.
void to_datagram_config(const ClientFlags& flags, session::ClientConfig& c) {
  const auto refuse = [](const char* flag) {
    throw UsageError(fmt::format(
        "{} is for tcp and tls; datagram modes take -n, -t, -l, -b, -P, -i, --rcvbuf, --sndbuf", flag));
  };
  if ((flags.test.stream.direction == Direction::server_to_client))
    throw UsageError("-R: datagram tests go from the client's senders to the server's receiver");
  if (const char* flag = spec::unread_flag(c.test)) refuse(flag);  // the stream kind's, --handshakes
  if (flags.test.verify) refuse("--verify");
  if (flags.compare_ciphers) refuse("--compare-ciphers");
  if (flags.test.compare_groups) refuse("--compare-groups");
  if (flags.test.record_size != 0) refuse("--record-size");
  if (flags.tls_policy.ktls) refuse("--ktls");
  if (!flags.bind.empty()) refuse("-B");
  if (flags.test.streams > protocol::kMaxSenders) {
    throw UsageError(fmt::format("-P {}: at most {} senders", flags.test.streams, protocol::kMaxSenders));
  }
  if (flags.time_s > 0) {
    c.test.duration_ms = milliseconds_count(flags.time_s);
  } else {
    c.test.datagram.packets =
        parse_count(flags.bytes.empty() ? "1000000" : flags.bytes, "-n", 1, protocol::kMaxPackets);
  }
  const bool dtls = any_encrypted(c.modes);
  const std::uint32_t largest = dtls ? protocol::kMaxDtlsDatagramBytes : protocol::kMaxUdpDatagramBytes;
  const auto length = parse_size(flags.length.empty() ? "15" : flags.length, "-l", 1, 1u << 30);
  if (length < protocol::kDatagramHeaderBytes) {
    throw UsageError(fmt::format("-l {}: each datagram carries a {}-byte header; use -l {} or more", length,
                                 protocol::kDatagramHeaderBytes, protocol::kDatagramHeaderBytes));
  }
  if (length > largest) {
    throw UsageError(
        dtls ? fmt::format(
                   "-l {}: above the largest DTLS record ({} bytes); DTLS sends one record per datagram",
                   length, largest)
             : fmt::format("-l {}: above the largest UDP datagram over IPv4 ({} bytes)", length, largest));
  }
  c.test.chunk_bytes = static_cast<std::uint32_t>(length);
  if (!flags.rate.empty()) c.test.datagram.rate_bps = parse_rate(flags.rate, "-b", 0, protocol::kMaxRateBps);
  c.rounds = repeat_count(flags) > 0 ? repeat_count(flags) : 1;
}

// --rr: what -n, -t, -P and --rate mean there, and what does not apply.
void to_rr_config(const ClientFlags& flags, session::ClientConfig& c) {
  const auto refuse = [](const char* flag) {
    throw UsageError(
        fmt::format("{} is for bulk runs; --rr takes -t, -n, -P, -i, --rate, --verify, --repeat, "
                    "--warmup, -w/--sndbuf/--rcvbuf and the TLS flags",
                    flag));
  };
  if (flags.test.stream.no_delay) throw UsageError("-N: rr tests always set TCP_NODELAY; leave -N out");
  // The other kinds' flags (-R, --bidir, --msg-size, --handshakes, --gso ...), and those of the shared part
  // rr has no use for.
  if (const char* flag = spec::unread_flag(c.test)) refuse(flag);
  const std::pair<bool, const char*> bulk_only[] = {{!flags.length.empty(), "-l"},
                                                    {flags.test.compare_groups, "--compare-groups"},
                                                    {!flags.rate.empty(), "-b"}};
  for (const auto& [given, flag] : bulk_only) {
    if (given) refuse(flag);
  }
  std::tie(c.test.rr.request_bytes, c.test.rr.response_bytes) = parse_rr(flags.rr, "--rr");
  if (!flags.bytes.empty()) {
    c.test.rr.transactions = parse_count(flags.bytes, "-n", 1, protocol::kMaxTransactions, "transactions");
    if (c.test.rr.transactions < c.test.streams) {
      throw UsageError(
          fmt::format("-n {}: fewer transactions than connections (-P {}); each makes one at least",
                      c.test.rr.transactions, c.test.streams));
    }
  } else {
    c.test.duration_ms = flags.time_s > 0 ? milliseconds_count(flags.time_s) : kDefaultRrMs;
  }
  if (!flags.rr_rate.empty()) {
    if (flags.time_s == 0) {
      throw UsageError("--rate needs -t: an open-loop run goes for a time, not a count (-n)");
    }
    c.test.rr.rate_tps =
        static_cast<double>(parse_rate(flags.rr_rate, "--rate", 1, 1'000'000'000, "transactions per second"));
    if (const std::string problem = protocol::rr_schedule_problem(c.test.rr.rate_tps, c.test.streams);
        !problem.empty()) {
      throw UsageError("--rate: " + problem);
    }
  }
  c.rounds = repeat_count(flags) > 0 ? repeat_count(flags) : 3;
}

// --crr: -n counts connections, -P connectors; --rr (default 1/1) sizes the
// transaction each connection makes.
void to_crr_config(const ClientFlags& flags, session::ClientConfig& c) {
  const auto refuse = [](const char* flag) {
    throw UsageError(
        fmt::format("{} does not apply to --crr; it takes --rr, -t, -n, -P, --close, --repeat, "
                    "--warmup and the TLS flags",
                    flag));
  };
  if (flags.test.stream.no_delay)
    throw UsageError("-N: crr connections always set TCP_NODELAY; leave -N out");
  // The other kinds' flags (-R, --bidir, --msg-size, --gso ...), and those of the shared part crr has no use
  // for.
  if (const char* flag = spec::unread_flag(c.test)) refuse(flag);
  const std::pair<bool, const char*> not_crr[] = {
      {flags.test.record_size != 0, "--record-size"},
      {!flags.length.empty(), "-l"},
      {flags.compare_ciphers, "--compare-ciphers"},
      {!flags.rate.empty(), "-b"},
      {!flags.rr_rate.empty(), "--rate"},
      {flags.test.verify, "--verify"},
      {flags.tls_policy.ktls, "--ktls"},
      {flags.interval_s > 0, "-i"},
      {flags.test.sndbuf_bytes != 0 || flags.test.rcvbuf_bytes != 0, "-w/--sndbuf/--rcvbuf"}};
  for (const auto& [given, flag] : not_crr) {
    if (given) refuse(flag);
  }
  if ((flags.test.crr.compare_key_types || flags.test.compare_groups) && !any_encrypted(c.modes)) {
    throw UsageError(
        fmt::format("{} compares TLS handshakes, and --mode tcp runs none: use --mode both",
                    flags.test.crr.compare_key_types ? "--compare-key-types" : "--compare-groups"));
  }
  if (flags.crr_close == "fin") c.test.crr.close = spec::Close::fin;
  std::tie(c.test.rr.request_bytes, c.test.rr.response_bytes) =
      parse_rr(flags.rr.empty() ? "1/1" : flags.rr, "--rr");
  if (!flags.bytes.empty()) {
    c.test.rr.transactions = parse_count(flags.bytes, "-n", 1, protocol::kMaxTransactions, "connections");
    if (c.test.rr.transactions < c.test.streams) {
      throw UsageError(
          fmt::format("-n {}: fewer connections than connectors (-P {}); each makes one at least",
                      c.test.rr.transactions, c.test.streams));
    }
  } else {
    c.test.duration_ms = flags.time_s > 0 ? milliseconds_count(flags.time_s) : kDefaultRrMs;
  }
  c.rounds = repeat_count(flags) > 0 ? repeat_count(flags) : 3;
}

// TLS settings where no TLS runs: refused, as -b is without datagrams, so that
// a flag never silently does nothing.
void refuse_tls_flags_without_tls(const ClientFlags& flags) {
  const std::vector<Mode> modes = modes_of(flags.mode);
  if (any_encrypted(modes)) return;
  // With udp, DTLS would take the first six; to_datagram_config refuses the rest.
  const bool datagrams = is_datagram(modes.front());
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
      {flags.test.handshake.handshakes > 0 && !datagrams, "--handshakes"},
      {flags.test.compare_groups && !datagrams, "--compare-groups"}};
  for (const auto& [set, flag] : given) {
    if (set) {
      throw UsageError(fmt::format("{} is for TLS, and --mode {} runs none: use --mode {}", flag, flags.mode,
                                   datagrams ? "dtls or both-udp" : "tls or both"));
    }
  }
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
  if (c.test.kind == TestKind::handshake) {
    throw UsageError(
        "-A pins the data threads of bulk, --rr, --crr and datagram runs; handshake tests have none");
  }
  if (c.test.kind == TestKind::crr && c.server_cpu >= 0) {
    throw UsageError(
        fmt::format("-A {}: --crr connections are served by the server's accepting threads, which serve "
                    "every test: give -A "
                    "the client's CPU alone (-A {})",
                    flags.affinity, c.client_cpu >= 0 ? std::to_string(c.client_cpu) : "0"));
  }
}

// --start-at TIME: "2026-12-01T09:30:00Z" or with a fraction of a second, or "@1796117400".
void parse_start_at(const ClientFlags& flags, session::ClientConfig& c) {
  if (flags.start_at.empty()) {
    if (flags.max_skew_s > 0) throw UsageError("--max-skew is for --start-at");
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
  if (flags.max_skew_s > 0) c.max_skew_s = flags.max_skew_s;
}

// HOST as written in URLs: "[::1]", or "[fd00::1]:5678" with a port; a bare
// IPv6 address (::1) or a name is taken as it is.
void split_host(const ClientFlags& flags, session::ClientConfig& c) {
  c.host = flags.host;
  c.port = static_cast<std::uint16_t>(flags.port);
  if (flags.host.empty() || flags.host.front() != '[') return;
  const auto close = flags.host.find(']');
  if (close == std::string::npos || close == 1)
    throw UsageError(
        fmt::format("host '{}': write an IPv6 address as [ADDRESS] or [ADDRESS]:PORT", flags.host));
  c.host = flags.host.substr(1, close - 1);
  const std::string rest = flags.host.substr(close + 1);
  if (rest.empty()) return;
  int port = 0;
  const auto [end, ec] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), port);
  if (rest.front() != ':' || ec != std::errc{} || end != rest.data() + rest.size() || port < 1 ||
      port > 65535)
    throw UsageError(fmt::format("host '{}': the port after ']:' must be 1 to 65535", flags.host));
  if (flags.port != session::kDefaultPort && flags.port != port)
    throw UsageError(fmt::format("host '{}' and -p {} name two ports; give one", flags.host, flags.port));
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
  cmd->add_option("host", flags.host, "Server host name or address (none: an embedded server on loopback)");
  cmd->add_option("-p,--port", flags.port, "Server port")->check(CLI::Range(1, 65535))->capture_default_str();
  cmd->add_option("-B,--bind", flags.bind,
                  "Connect from this local IP address (the TCP connections; as iperf3's -B)")
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
         "--max-skew", flags.max_skew_s,
         "With --start-at: refuse to start if this host's clock is further than this from the server's, "
         "in seconds (default 0.1)")
      ->check(NumberRange(0.0001, 3600.0))
      ->type_name("S");
}

// What a run moves and for how long. Returns -t, which --handshakes excludes.
CLI::Option* add_run_flags(CLI::App* cmd, ClientFlags& flags) {
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
  cmd->add_option(
         "-b,--bitrate", flags.rate,
         "Datagram modes: bits per second per sender, K, M, G suffixes powers of 1000 (default 0: as "
         "fast as it can)")
      ->type_name("RATE");
  cmd->add_flag("--gso", flags.test.datagram.gso,
                "Datagram modes: hand the kernel up to 64 datagrams per send as one buffer, cut into "
                "datagrams by UDP segmentation offload (UDP_SEGMENT)");
  cmd->add_flag_callback(
      "-R,--reverse", [&flags] { flags.test.stream.direction = Direction::server_to_client; },
      "The server sends, the client receives");
  return time;
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
  cmd->add_option("--warmup", flags.warmup, "Rounds to run first and leave out of the statistics")
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
void add_tls_flags(CLI::App* cmd, ClientFlags& flags, CLI::Option* time) {
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
  cmd->add_option("--handshakes", flags.test.handshake.handshakes,
                  "Instead of bulk runs: N full and N resumed TLS handshakes, alternating, timed one by one")
      ->check(CLI::Range(1, static_cast<int>(protocol::kMaxHandshakes / 2)))
      ->excludes(time);
  cmd->add_flag("--compare-groups", flags.test.compare_groups,
                "Instead of bulk runs: full and resumed handshakes with each key exchange group the TLS "
                "library has (20 of each per group and round, or --handshakes N), in one table with ratios "
                "to X25519; with --crr, full handshakes under load with each group, against tcp")
      ->excludes(cmd->get_option("--groups"))
      ->excludes(cmd->get_option("--compare-ciphers"));
}

// The workload's shape: framing, messages, buffers, streams, records.
void add_shape_flags(CLI::App* cmd, ClientFlags& flags) {
  cmd->add_option(
         "--framing", flags.framing,
         "raw: a byte stream; len4: each message behind a 4-byte big-endian length (Erlang {packet,4})")
      ->check(CLI::IsMember({"raw", "len4"}))
      ->capture_default_str();
  spec::Test& sizes = flags.test;
  add_size(cmd, "--msg-size", sizes.stream.msg_size, "--msg-size", 1, framing::kMaxMessageBytes,
           "Send messages of this size (1 byte to 1G); -n is then the payload, in whole messages, and the "
           "receiver delivers each message whole (with raw framing it cuts the stream itself)");
  add_size(cmd, "--max-msg", sizes.stream.max_msg, "--max-msg", 1, framing::kMaxMessageBytes,
           "The receiver refuses longer length prefixes (len4)")
      ->default_str("1G");
  add_size(cmd, "--read-size", sizes.stream.read_size, "--read-size", 1, protocol::kMaxChunkBytes,
           "Bytes the receiver asks of each read call (default: -l)");
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
  cmd->add_flag("--bidir", flags.test.stream.bidir,
                "Both directions at once: odd-numbered streams go the other way (-P 2 at least)");
  add_size(cmd, "--record-size", sizes.record_size, "--record-size", protocol::kMinRecordBytes,
           protocol::kMaxRecordBytes,
           "Largest TLS record the sender writes, 512..16K bytes (max send fragment)");
  cmd->add_flag("-N,--no-delay", flags.test.stream.no_delay,
                "Set TCP_NODELAY during the transfer (disable Nagle)");
}

// Request/response and connection-per-transaction tests.
void add_rr_flags(CLI::App* cmd, ClientFlags& flags) {
  cmd->add_option(
         "--rr", flags.rr,
         "Instead of bulk runs: transactions of a REQ-byte request and a RESP-byte response (1/1, 64/16K, "
         "1K/1M), closed loop on each of -P connections, for -t seconds (default 10) or -n transactions "
         "in all")
      ->type_name("REQ/RESP");
  cmd->add_option(
         "--rate", flags.rr_rate,
         "With --rr and -t: open loop, this many transactions per second over all connections (K, M: "
         "powers of 1000); latency counts from when each request was due")
      ->type_name("TPS");
  // Each kind's own flag, as its entry in the table of kinds names it (--crr).
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->flag == nullptr) continue;
    cmd->add_flag(kind->flag, flags.kind_flags[static_cast<std::size_t>(kind->kind)], kind->flag_help)
        ->excludes(cmd->get_option("--handshakes"));
  }
  cmd->add_option("--close", flags.crr_close,
                  "With --crr: how the client closes each connection: reset (SO_LINGER 0, the default: no "
                  "TIME_WAIT, ports never run out) or fin (an orderly close, as most clients do: each port "
                  "then waits 60 s in TIME_WAIT)")
      ->check(CLI::IsMember({"reset", "fin"}))
      ->type_name("reset|fin");
  cmd->add_flag("--compare-key-types", flags.test.crr.compare_key_types,
                "With --crr: full TLS handshakes against a server certificate of each key type (RSA 2048 and "
                "3072, ECDSA P-256 and P-384, Ed25519) that the server makes for the test, against tcp")
      ->excludes(cmd->get_option("--compare-groups"));
}

// Flags of one kind given to another, named before the TLS flags: with
// datagrams, --rr is the mistake to name.
void refuse_misplaced_kind_flags(const ClientFlags& flags) {
  // Before the TLS flags: with datagrams, --rr is the mistake to name.
  const bool crr = asked_for(flags, TestKind::crr);
  if ((!flags.rr.empty() || crr) && is_datagram(modes_of(flags.mode).front())) {
    throw UsageError(fmt::format("{} runs over tcp and tls; --mode {} sends datagrams",
                                 crr ? "--crr" : "--rr", flags.mode));
  }
  if (!flags.crr_close.empty() && !crr) throw UsageError("--close is for --crr runs");
  if (flags.test.crr.compare_key_types && !crr)
    throw UsageError("--compare-key-types is for connection rates: add --crr");
  if (flags.test.compare_groups && !crr && flags.time_s > 0)
    throw UsageError(
        "--compare-groups times a number of handshakes (--handshakes N), not -t; with --crr it runs for -t");
}

}  // namespace

void add_client_command(CLI::App& app, ClientFlags& flags) {
  CLI::App* cmd = app.add_subcommand("client", "Run the TCP vs TLS comparison against a server");
  add_target_flags(cmd, flags);
  CLI::Option* time = add_run_flags(cmd, flags);
  add_rounds_and_output_flags(cmd, flags);
  add_tls_flags(cmd, flags, time);
  add_shape_flags(cmd, flags);
  add_rr_flags(cmd, flags);
  add_timeout_flags(cmd, flags.timeouts);
}

ClientCommand to_client_command(const ClientFlags& flags) {
  refuse_misplaced_kind_flags(flags);
  refuse_tls_flags_without_tls(flags);
  ClientCommand command;
  session::ClientConfig& c = command.config;
  c.test = flags.test;
  if (flags.framing == "len4") c.test.stream.framing = framing::Framing::len4;
  split_host(flags, c);
  c.test.kind = kind_of_flags(flags);
  c.bind_address = flags.bind;
  c.modes = modes_of(flags.mode);
  const bool datagrams = c.test.kind == TestKind::datagram;
  if (!datagrams && !flags.rate.empty())
    throw UsageError("-b is for datagram modes (--mode udp, dtls, both-udp)");
  if (!datagrams && flags.test.datagram.gso)
    throw UsageError("--gso is for datagram modes (--mode udp, dtls, both-udp)");
  if (flags.time_s > 0) {
    c.test.duration_ms = milliseconds_count(flags.time_s);
  } else if (c.test.kind == TestKind::stream) {  // the others count other things
    c.test.stream.bytes =
        parse_size(flags.bytes.empty() ? "1G" : flags.bytes, "-n/--bytes", 1, protocol::kMaxTestBytes);
  }
  c.test.interval_ms = milliseconds_count(flags.interval_s);
  c.warmup_rounds = flags.warmup;
  c.test.chunk_bytes = static_cast<std::uint32_t>(
      parse_size(flags.length.empty() ? "64K" : flags.length, "-l/--length", 1, protocol::kMaxChunkBytes));
  c.ca_file = flags.ca_file;
  c.insecure = flags.insecure;
  c.rounds = repeat_count(flags) > 0 ? repeat_count(flags) : 5;
  c.tls_policy = flags.tls_policy;
  c.compare_ciphers = flags.compare_ciphers;
  if (c.test.stream.bidir && c.test.streams < 2) c.test.streams = 2;  // one each way at least
  c.cert_file = flags.cert_file;
  c.key_file = flags.key_file;
  c.timeouts = to_timeouts(flags.timeouts);
  parse_affinity(flags, c);
  parse_start_at(flags, c);
  if (c.test.kind == TestKind::crr) {
    to_crr_config(flags, c);
  } else if (c.test.kind == TestKind::rr) {
    to_rr_config(flags, c);
  } else if (!flags.rr_rate.empty()) {
    throw UsageError("--rate is for request/response tests (--rr REQ/RESP); datagram modes take -b");
  }
  if (datagrams) to_datagram_config(flags, c);
  // Datagram buffers only drop what does not fit, and the loss is counted.
  if (const std::string slow = slow_buffers_warning(flags); !slow.empty() && !datagrams)
    command.warnings.push_back(slow);
  parse_auto_repeat(flags, c);
  // The modes it runs: a handshake test runs TLS alone.
  for (Mode mode : c.test.kind == TestKind::handshake ? std::vector<Mode>{Mode::tls} : c.modes) {
    try {
      kinds::check_test(c.test, mode);
    } catch (const spec::Invalid& e) {
      throw UsageError(e.what());
    }
  }
  command.html_path = flags.html;
  command.format = flags.json          ? session::OutputFormat::json
                   : flags.json_stream ? session::OutputFormat::json_stream
                   : flags.csv         ? session::OutputFormat::csv
                                       : session::OutputFormat::text;
  return command;
}

}  // namespace tlscmp::cli
