#include "cli/options.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <regex>

#include "app/about.hpp"
#include "cli/size.hpp"
#include "error.hpp"
#include "measure/clock.hpp"
#include "measure/host.hpp"
#include "protocol/messages.hpp"

namespace tlscmp::cli {
namespace {

constexpr int kMaxRounds = 100'000;
constexpr int kMaxCertificateDays = 3650;

constexpr double seconds(std::chrono::milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000;
}

// CLI::Range for a flag that takes a decimal number (seconds, a percentage),
// but refusing what is no number: CLI11's Range only compares, and every
// comparison with nan is false, so that '-t nan' passed and then read as no
// -t at all (a 1 GiB run).
class NumberRange : public CLI::Validator {
 public:
  NumberRange(double min, double max) : CLI::Validator(CLI::Range(min, max)) {
    func_ = [min, max](std::string& text) -> std::string {
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
        return fmt::format("'{}' is not a number; give one from {:g} to {:g}", text, min, max);
      if (value < min || value > max) return fmt::format("{} is outside {:g} to {:g}", text, min, max);
      return {};
    };
  }
};

// Seconds, as typed; converted to Timeouts once parsing succeeded.
struct TimeoutFlags {
  double connect_s = seconds(session::Timeouts{}.connect);
  double handshake_s = seconds(session::Timeouts{}.handshake);
  double control_s = seconds(session::Timeouts{}.control);
  double idle_s = seconds(session::Timeouts{}.idle);
};

constexpr double kMaxTimeoutS = 86'400;
constexpr double kMaxStartAheadS = 86'400;  // --start-at: at most a day ahead
constexpr double kMaxSeconds = static_cast<double>(protocol::kMaxDurationMs) / 1000;
constexpr double kMinIntervalSeconds = static_cast<double>(protocol::kMinIntervalMs) / 1000;

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000 + 0.5));
}

void add_timeout_flags(CLI::App* cmd, TimeoutFlags& t) {
  const auto range = NumberRange(0.001, kMaxTimeoutS);
  cmd->add_option("--connect-timeout", t.connect_s, "Seconds a TCP connect (and name lookup) may take")
      ->check(range)
      ->capture_default_str();
  cmd->add_option("--handshake-timeout", t.handshake_s,
                  "Seconds a TLS handshake and connection preamble may take")
      ->check(range)
      ->capture_default_str();
  cmd->add_option("--control-timeout", t.control_s, "Seconds each control message may take")
      ->check(range)
      ->capture_default_str();
  cmd->add_option("--idle-timeout", t.idle_s, "Seconds a transfer may go without any progress")
      ->check(range)
      ->capture_default_str();
}

session::Timeouts to_timeouts(const TimeoutFlags& t) {
  return {milliseconds_of(t.connect_s), milliseconds_of(t.handshake_s), milliseconds_of(t.control_s),
          milliseconds_of(t.idle_s)};
}

// --tls-version, --cipher, --groups and --ktls, the same on both sides.
void add_tls_policy_flags(CLI::App* cmd, tls::Policy& policy, const char* whose) {
  cmd->add_option("--tls-version", policy.version,
                  fmt::format("Only this TLS version for {}: 1.2 or 1.3", whose))
      ->check(CLI::IsMember({"1.2", "1.3"}));
  cmd->add_option("--cipher", policy.cipher,
                  "TLS 1.3 suite(s) such as TLS_AES_128_GCM_SHA256, or a TLS 1.2 OpenSSL cipher list such as "
                  "ECDHE-ECDSA-AES128-GCM-SHA256 (which limits TLS to 1.2)");
  cmd->add_option(
         "--groups", policy.groups,
         "Key exchange groups, colon-separated, e.g. X25519:P-256 or X25519MLKEM768 (tlscmp --version "
         "lists those the TLS library has)")
      ->type_name("LIST");
  cmd->add_flag(
      "--ktls", policy.ktls,
      "Ask for kernel TLS; reported per direction, with a fallback to user space where the kernel has none");
}

// A size option (64K, 1.5M, 1G: powers of 1024) that CLI11 parses with
// parse_size straight into `target`; a bad value is refused naming `flag`.
template <typename T>
CLI::Option* add_size(CLI::App* cmd, const std::string& names, T& target, const char* flag, std::uint64_t min,
                      std::uint64_t max, const std::string& what) {
  return cmd
      ->add_option_function<std::string>(
          names,
          [&target, flag, min, max](const std::string& text) {
            target = static_cast<T>(parse_size(text, flag, min, max));
          },
          what)
      ->type_name("SIZE");
}

struct ClientFlags {
  std::string host;
  std::string bind;       // -B
  std::string affinity;   // -A CLIENT[,SERVER]
  std::string start_at;   // --start-at TIME
  double max_skew_s = 0;  // --max-skew S; 0: not given
  int port = session::kDefaultPort;
  std::string mode = "both";
  std::string bytes;   // default: 1G, or 1000000 datagrams in datagram modes
  std::string length;  // default: 64K, or 15 bytes in datagram modes (seeds/002)
  std::string rate;    // -b, datagram modes
  bool gso = false;    // --gso, datagram modes
  double time_s = 0;
  double interval_s = 0;
  bool reverse = false;
  std::string ca_file;
  bool insecure = false;
  std::string repeat;     // --repeat N or auto; "": 5 rounds (3 with --rr, --crr; 1 in datagram modes)
  double ci_target = 0;   // --ci-target PCT (with --repeat auto); 0: not given
  int max_rounds = 0;     // --max-rounds N (with --repeat auto); 0: not given
  double max_time_s = 0;  // --max-time S (with --repeat auto); 0: not given
  int warmup = 0;
  bool json = false;
  bool csv = false;
  bool json_stream = false;  // --json-stream
  std::string html;          // --html FILE
  bool verify = false;
  tls::Policy tls_policy;
  std::string cert_file;
  std::string key_file;
  int handshakes = 0;
  bool compare_ciphers = false;
  bool compare_groups = false;
  std::string framing = "raw";
  // The sizes, parsed by CLI11 (add_size) straight into these settings:
  // msg_size, max_msg, read_size, sndbuf_bytes, rcvbuf_bytes, record_size.
  session::ClientConfig sizes;
  bool window = false;  // -w gave both buffers
  int parallel = 1;
  bool bidir = false;
  bool no_delay = false;
  std::string rr;         // --rr REQ/RESP
  std::string rr_rate;    // --rate, with --rr
  bool crr = false;       // --crr
  std::string crr_close;  // --close reset|fin
  bool compare_key_types = false;
  TimeoutFlags timeouts;
};

struct ServerFlags {
  std::string results_file;
  std::string bind;
  int port = session::kDefaultPort;
  std::string cert_file;
  std::string key_file;
  std::string issuer_dir;
  tls::Policy tls_policy;
  std::string client_ca_file;
  bool require_client_cert = false;
  std::string resumption = "tickets";
  session::ServerConfig
      sizes;  // max_bytes, max_msg, the memory caps and min_rate, parsed by CLI11 (add_size)
  double max_duration_s = 3600;
  int max_clients = 32;
  int max_clients_per_source = 0;  // 0: a quarter of --max-clients
  int max_connections = 0;         // 0: 4 x --max-clients, at least 512
  int max_pending = 256;
  int max_pending_per_source = 16;
  double preamble_timeout_s = 2;
  double shutdown_grace_s = 10;
  TimeoutFlags timeouts;
};

void add_certs_command(CLI::App& app, session::CertsConfig& certs) {
  CLI::App* cmd = app.add_subcommand("certs", "Write a CA, a server and a client certificate for TLS tests");
  cmd->add_option("--dir", certs.dir, "Directory to write ca.pem, server.pem/.key, client.pem/.key into")
      ->type_name("DIR")
      ->capture_default_str();
  cmd->add_option("--host", certs.hosts,
                  "Extra DNS name or IP address for the server certificate (repeatable); "
                  "localhost, 127.0.0.1 and ::1 are always in it");
  std::vector<std::string> key_types;
  for (tls::KeyType type : tls::all_key_types())
    key_types.emplace_back(tls::to_string(type));
  cmd->add_option_function<std::string>(
         "--key-type", [&certs](const std::string& text) { certs.key_type = *tls::parse_key_type(text); },
         "Key type of all three certificates")
      ->check(CLI::IsMember(key_types))
      ->default_str(tls::to_string(certs.key_type));
  cmd->add_flag(
      "--new-ca", certs.new_ca,
      "Make a new CA even where --dir holds one (whose ca.pem copies on clients then stop working)");
  cmd->add_option("--days", certs.validity_days, "Validity in days")
      ->check(CLI::Range(1, kMaxCertificateDays))
      ->capture_default_str();
}

void add_server_command(CLI::App& app, ServerFlags& flags) {
  CLI::App* cmd = app.add_subcommand("server", "Serve plain TCP and TLS tests until interrupted");
  // The server's flags come in layers (the systemd unit's defaults, then
  // TLSCMP_SERVER_OPTIONS from /etc/default): a flag given again overrides.
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("-p,--port", flags.port, "TCP port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--bind", flags.bind, "Address to listen on (default: every IPv6 and IPv4 address)");
  CLI::Option* cert =
      cmd->add_option("--cert", flags.cert_file, "Server certificate chain (PEM)")->type_name("FILE");
  CLI::Option* key =
      cmd->add_option("--key", flags.key_file, "Server private key (PEM, unencrypted)")->type_name("FILE");
  cert->needs(key);
  key->needs(cert);
  cmd->add_option(
         "--issuer", flags.issuer_dir,
         "The CA tlscmp certs made (DIR/ca.pem, DIR/ca.key): signs the certificates of other key types "
         "that crr tests ask for (client --compare-key-types); without --cert the throwaway CA does")
      ->type_name("DIR")
      ->needs(cert);
  add_tls_policy_flags(cmd, flags.tls_policy, "TLS tests");
  CLI::Option* ca =
      cmd->add_option("--ca", flags.client_ca_file, "Trust client certificates from these CAs (PEM)")
          ->type_name("FILE");
  cmd->add_flag("--require-client-cert", flags.require_client_cert,
                "Mutual TLS: refuse TLS clients without a certificate from --ca")
      ->needs(ca);
  cmd->add_option(
         "--resumption", flags.resumption,
         "How clients may resume TLS sessions: tickets (session tickets, and session IDs for TLS 1.2 "
         "clients without one), ids (the session cache only: TLS 1.2 session IDs), or none (every "
         "handshake a full one, as a restarted server, or servers behind a load balancer without "
         "shared ticket keys, look to a returning client)")
      ->check(CLI::IsMember({"tickets", "ids", "none"}))
      ->capture_default_str();
  add_size(cmd, "--max-bytes", flags.sizes.max_bytes, "--max-bytes", 1, protocol::kMaxTestBytes,
           "Largest payload a test may ask for (K, M, G, T, P suffixes)")
      ->default_str("1T");
  cmd->add_option("--max-duration", flags.max_duration_s,
                  "Seconds a test's transfer may last, asked for or not")
      ->check(NumberRange(0.001, kMaxSeconds))
      ->capture_default_str();
  add_size(cmd, "--max-msg", flags.sizes.max_msg, "--max-msg", 1, framing::kMaxMessageBytes,
           "Largest message the server assembles as a receiver")
      ->default_str("1G");
  cmd->add_option("--max-clients", flags.max_clients, "Tests running at once; more are refused as busy")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  cmd->add_option("--max-clients-per-source", flags.max_clients_per_source,
                  "Tests running at once from one source address (default: a quarter of --max-clients)")
      ->check(CLI::Range(1, 10'000));
  cmd->add_option("--max-connections", flags.max_connections,
                  "Connections served at once, a thread each; one source address may hold half (default: "
                  "4 x --max-clients, at least 512)")
      ->check(CLI::Range(16, 100'000));
  add_size(cmd, "--max-test-memory", flags.sizes.max_test_memory, "--max-test-memory", 1,
           std::uint64_t{1} << 40,
           "Buffers one test may hold on the server (its streams' chunks and the messages they assemble); "
           "a test that needs more is refused")
      ->default_str("256M");
  add_size(cmd, "--max-memory", flags.sizes.max_memory, "--max-memory", 1, std::uint64_t{1} << 40,
           "Buffers all running tests may hold together; a test past it is told the server is busy")
      ->default_str("1G");
  add_size(cmd, "--min-rate", flags.sizes.min_rate, "--min-rate", 0, std::uint64_t{1} << 40,
           "Bytes a second a running test must move, counted over each --idle-timeout, or it fails: "
           "a peer cannot hold a slot with a trickle (0: no floor)")
      ->default_str("1K");
  cmd->add_option("--max-pending", flags.max_pending,
                  "Connections still being set up (accepted, not yet a running test's or a delivered data "
                  "connection); "
                  "more are told the server is busy")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  cmd->add_option(
         "--max-pending-per-source", flags.max_pending_per_source,
         "Connections still being set up from one source address; more from it are told the server is "
         "busy")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  cmd->add_option("--preamble-timeout", flags.preamble_timeout_s,
                  "Seconds a new connection may take to send its first byte before it is closed")
      ->check(NumberRange(0.001, kMaxTimeoutS))
      ->capture_default_str();
  cmd->add_option("--results", flags.results_file,
                  "Append a JSON line per test served to FILE: when, the client's address, the settings, and "
                  "both sides' results")
      ->type_name("FILE");
  cmd->add_option("--shutdown-grace", flags.shutdown_grace_s,
                  "After SIGINT/SIGTERM: seconds running tests may take to finish")
      ->check(NumberRange(0.0, kMaxTimeoutS))
      ->capture_default_str();
  add_timeout_flags(cmd, flags.timeouts);
}

void add_client_command(CLI::App& app, ClientFlags& flags) {
  CLI::App* cmd = app.add_subcommand("client", "Run the TCP vs TLS comparison against a server");
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
  cmd->add_option("--mode", flags.mode,
                  "tcp, tls, or both (alternating tcp, tls); udp, dtls, or both-udp (alternating udp, dtls): "
                  "datagrams from -P senders, counted for loss")
      ->check(CLI::IsMember({"tcp", "tls", "both", "udp", "dtls", "both-udp"}))
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
  cmd->add_flag("--gso", flags.gso,
                "Datagram modes: hand the kernel up to 64 datagrams per send as one buffer, cut into "
                "datagrams by UDP segmentation offload (UDP_SEGMENT)");
  cmd->add_flag("-R,--reverse", flags.reverse, "The server sends, the client receives");
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
  cmd->add_flag("--verify", flags.verify,
                "Send a seeded pattern and check every byte on the receiver (costs CPU; off by default)");
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
  cmd->add_option("--handshakes", flags.handshakes,
                  "Instead of bulk runs: N full and N resumed TLS handshakes, alternating, timed one by one")
      ->check(CLI::Range(1, static_cast<int>(protocol::kMaxHandshakes / 2)))
      ->excludes(time);
  cmd->add_flag("--compare-groups", flags.compare_groups,
                "Instead of bulk runs: full and resumed handshakes with each key exchange group the TLS "
                "library has (20 of each per group and round, or --handshakes N), in one table with ratios "
                "to X25519; with --crr, full handshakes under load with each group, against tcp")
      ->excludes(cmd->get_option("--groups"))
      ->excludes(cmd->get_option("--compare-ciphers"));
  cmd->add_option(
         "--framing", flags.framing,
         "raw: a byte stream; len4: each message behind a 4-byte big-endian length (Erlang {packet,4})")
      ->check(CLI::IsMember({"raw", "len4"}))
      ->capture_default_str();
  session::ClientConfig& sizes = flags.sizes;
  add_size(cmd, "--msg-size", sizes.msg_size, "--msg-size", 1, framing::kMaxMessageBytes,
           "Send messages of this size (1 byte to 1G); -n is then the payload, in whole messages, and the "
           "receiver delivers each message whole (with raw framing it cuts the stream itself)");
  add_size(cmd, "--max-msg", sizes.max_msg, "--max-msg", 1, framing::kMaxMessageBytes,
           "The receiver refuses longer length prefixes (len4)")
      ->default_str("1G");
  add_size(cmd, "--read-size", sizes.read_size, "--read-size", 1, protocol::kMaxChunkBytes,
           "Bytes the receiver asks of each read call (default: -l)");
  CLI::Option* window =
      cmd->add_option_function<std::string>(
             "-w,--window",
             [&flags](const std::string& text) {
               flags.sizes.sndbuf_bytes = flags.sizes.rcvbuf_bytes =
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
  cmd->add_option("-P,--parallel", flags.parallel, "Parallel data connections per run, each its own stream")
      ->check(CLI::Range(1, static_cast<int>(protocol::kMaxStreams)))
      ->capture_default_str();
  cmd->add_flag("--bidir", flags.bidir,
                "Both directions at once: odd-numbered streams go the other way (-P 2 at least)");
  add_size(cmd, "--record-size", sizes.record_size, "--record-size", protocol::kMinRecordBytes,
           protocol::kMaxRecordBytes,
           "Largest TLS record the sender writes, 512..16K bytes (max send fragment)");
  cmd->add_flag("-N,--no-delay", flags.no_delay, "Set TCP_NODELAY during the transfer (disable Nagle)");
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
  cmd->add_flag("--crr", flags.crr,
                "Instead of bulk runs: a new connection per transaction (connect, TLS handshake, one --rr "
                "request and response, default 1/1, close) on each of -P connectors, for -t seconds "
                "(default 10) or -n connections in all; tcp, tls and tls-resumed")
      ->excludes(cmd->get_option("--handshakes"));
  cmd->add_option("--close", flags.crr_close,
                  "With --crr: how the client closes each connection: reset (SO_LINGER 0, the default: no "
                  "TIME_WAIT, ports never run out) or fin (an orderly close, as most clients do: each port "
                  "then waits 60 s in TIME_WAIT)")
      ->check(CLI::IsMember({"reset", "fin"}))
      ->type_name("reset|fin");
  cmd->add_flag("--compare-key-types", flags.compare_key_types,
                "With --crr: full TLS handshakes against a server certificate of each key type (RSA 2048 and "
                "3072, ECDSA P-256 and P-384, Ed25519) that the server makes for the test, against tcp")
      ->excludes(cmd->get_option("--compare-groups"));
  add_timeout_flags(cmd, flags.timeouts);
}

// "64/16K": a request and a response size, each 1 byte to 1 GiB.
std::pair<std::uint64_t, std::uint64_t> parse_rr(const std::string& text, const std::string& flag) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || text.find('/', slash + 1) != std::string::npos) {
    throw UsageError(fmt::format("{} '{}': give a request and a response size, e.g. {} 1/1 or {} 64/16K",
                                 flag, text, flag, flag));
  }
  return {parse_size(text.substr(0, slash), flag + " request size", 1, protocol::kMaxRrBytes),
          parse_size(text.substr(slash + 1), flag + " response size", 1, protocol::kMaxRrBytes)};
}

// A swept setting's values, each parsed and checked as its flag would be,
// and kept typed: the sweep applies them without parsing again.
results::SweepAxis sweep_axis(const std::string& name, const std::vector<std::string>& texts) {
  results::SweepAxis axis{name, {}};
  const std::string flag = "--" + name;
  for (const std::string& text : texts) {
    std::function<void(session::ClientConfig&)> apply;
    if (name == "msg-size") {
      const std::uint64_t n = parse_size(text, flag, 1, framing::kMaxMessageBytes);
      apply = [n](session::ClientConfig& c) { c.msg_size = n; };
    } else if (name == "length" || name == "read-size") {
      const auto n = static_cast<std::uint32_t>(parse_size(text, flag, 1, protocol::kMaxChunkBytes));
      if (name == "length") {
        apply = [n](session::ClientConfig& c) { c.chunk_bytes = n; };
      } else {
        apply = [n](session::ClientConfig& c) { c.read_size = n; };
      }
    } else if (name == "window" || name == "sndbuf" || name == "rcvbuf") {
      const auto n =
          static_cast<std::uint32_t>(parse_size(text, flag, 1024, protocol::kMaxSocketBufferBytes));
      const bool send = name != "rcvbuf";
      const bool receive = name != "sndbuf";
      apply = [n, send, receive](session::ClientConfig& c) {
        if (send) c.sndbuf_bytes = n;
        if (receive) c.rcvbuf_bytes = n;
      };
    } else if (name == "framing") {
      if (text != "raw" && text != "len4") throw UsageError(fmt::format("--framing '{}': raw or len4", text));
      const framing::Framing f = text == "len4" ? framing::Framing::len4 : framing::Framing::raw;
      apply = [f](session::ClientConfig& c) { c.framing = f; };
    } else if (name == "cipher") {
      apply = [text](session::ClientConfig& c) { c.tls_policy.cipher = text; };
    } else if (name == "rr") {
      const auto [request, response] = parse_rr(text, flag);
      apply = [request, response](session::ClientConfig& c) {
        c.rr_request_bytes = request;
        c.rr_response_bytes = response;
      };
    } else {
      throw UsageError(fmt::format("cannot sweep '{}'", name));
    }
    axis.values.push_back({text, std::move(apply)});
  }
  return axis;
}

// tlscmp sweep: what a client takes, with the swept settings as lists.
struct SweepFlags {
  ClientFlags client;
  std::vector<std::string> msg_sizes, lengths, framings, windows, sndbufs, rcvbufs, read_sizes, ciphers,
      rr_sizes;
  std::string out = "sweep";
};

void add_sweep_command(CLI::App& app, SweepFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run the comparison over a grid of settings; print a Markdown table, write CSV and JSON");
  ClientFlags& c = flags.client;
  cmd->add_option("host", c.host, "Server host name or address (none: an embedded server on loopback)");
  cmd->add_option("-p,--port", c.port, "Server port")->check(CLI::Range(1, 65535))->capture_default_str();
  cmd->add_option("--mode", c.mode, "tcp, tls, or both")
      ->check(CLI::IsMember({"tcp", "tls", "both"}))
      ->capture_default_str();
  CLI::Option* bytes = cmd->add_option("-n,--bytes", c.bytes,
                                       "Payload bytes per run (default 1G); with --rr transactions per run")
                           ->type_name("SIZE");
  cmd->add_option("-t,--time", c.time_s, "Seconds per run instead of -n")
      ->check(NumberRange(0.001, kMaxSeconds))
      ->excludes(bytes);
  cmd->add_flag("-R,--reverse", c.reverse, "The server sends");
  cmd->add_option("-P,--parallel", c.parallel, "Parallel streams")
      ->check(CLI::Range(1, static_cast<int>(protocol::kMaxStreams)));
  cmd->add_option("--repeat", c.repeat, "Rounds per point (default 5)")->check(CLI::Range(1, kMaxRounds));
  cmd->add_option("--warmup", c.warmup, "Warm-up rounds per point")->check(CLI::Range(0, kMaxRounds));
  CLI::Option* ca =
      cmd->add_option("--ca", c.ca_file, "Trust the CA certificates in this PEM file")->type_name("FILE");
  cmd->add_flag("--insecure", c.insecure, "Do not verify the server's certificate")->excludes(ca);
  cmd->add_flag("--verify", c.verify, "Check every byte on the receiver");
  cmd->add_option("--html", c.html, "Also write a report page of the sweep to FILE (as tlscmp report makes)")
      ->type_name("FILE");
  add_size(cmd, "--max-msg", c.sizes.max_msg, "--max-msg", 1, framing::kMaxMessageBytes,
           "The receiver refuses longer length prefixes")
      ->default_str("1G");
  const auto list = [&](const char* name, std::vector<std::string>& values, const char* what) {
    cmd->add_option(name, values, what)->delimiter(',')->type_name("LIST");
  };
  list("--msg-size", flags.msg_sizes, "Message sizes, comma-separated (10,1K,1400,...)");
  list("-l,--length", flags.lengths, "Chunk sizes");
  list("--framing", flags.framings, "raw, len4, or both");
  list("-w,--window", flags.windows, "SO_SNDBUF and SO_RCVBUF on both ends");
  list("--sndbuf", flags.sndbufs, "SO_SNDBUF on both ends");
  list("--rcvbuf", flags.rcvbufs, "SO_RCVBUF on both ends");
  list("--read-size", flags.read_sizes, "The receiver's read sizes");
  list("--cipher", flags.ciphers, "TLS suites or TLS 1.2 cipher lists");
  list("--rr", flags.rr_sizes,
       "Request/response sizes (1/1,64/1K,1K/16K,16K/1M): transactions instead of bulk runs, 10 s per run "
       "unless -t or -n says otherwise");
  cmd->add_option("--out", flags.out, "Write PREFIX.csv and PREFIX.json")
      ->type_name("PREFIX")
      ->capture_default_str();
  add_timeout_flags(cmd, c.timeouts);
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

// The one place a test's kind comes from: the flags that ask for it.
TestKind kind_of_flags(const ClientFlags& flags) {
  if (flags.crr) return TestKind::crr;
  if (!flags.rr.empty()) return TestKind::rr;
  if (flags.mode == "udp" || flags.mode == "dtls" || flags.mode == "both-udp") return TestKind::datagram;
  if (flags.handshakes > 0 || flags.compare_groups) return TestKind::handshake;
  return TestKind::stream;
}

// --repeat auto and its limits; the limits alone are a mistake.
void parse_auto_repeat(const ClientFlags& flags, session::ClientConfig& c) {
  const bool limits = flags.ci_target > 0 || flags.max_rounds > 0 || flags.max_time_s > 0;
  if (flags.repeat != "auto") {
    if (limits) throw UsageError("--ci-target, --max-rounds and --max-time are for --repeat auto");
    return;
  }
  if (c.kind == TestKind::datagram || c.kind == TestKind::handshake)
    throw UsageError(
        "--repeat auto repeats rounds until the TLS/TCP ratios are known closely: bulk, --rr and --crr runs "
        "have them; datagram modes and handshake tests do not");
  if (flags.mode == "tcp" || flags.mode == "tls")
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
  if (flags.mode == "udp") c.modes = {Mode::udp};
  if (flags.mode == "dtls") c.modes = {Mode::dtls};
  if (flags.mode == "both-udp") c.modes = {Mode::udp, Mode::dtls};
  const auto refuse = [](const char* flag) {
    throw UsageError(fmt::format(
        "{} is for tcp and tls; datagram modes take -n, -t, -l, -b, -P, -i, --rcvbuf, --sndbuf", flag));
  };
  if (flags.reverse)
    throw UsageError("-R: datagram tests go from the client's senders to the server's receiver");
  if (flags.bidir) refuse("--bidir");
  if (flags.verify) refuse("--verify");
  if (flags.handshakes > 0) refuse("--handshakes");
  if (flags.compare_ciphers) refuse("--compare-ciphers");
  if (flags.compare_groups) refuse("--compare-groups");
  if (flags.sizes.msg_size != 0 || flags.framing != "raw") refuse("--msg-size/--framing");
  if (flags.sizes.read_size != 0) refuse("--read-size");
  if (flags.sizes.record_size != 0) refuse("--record-size");
  if (flags.tls_policy.ktls) refuse("--ktls");
  if (!flags.bind.empty()) refuse("-B");
  if (flags.no_delay) refuse("-N");
  if (flags.parallel > static_cast<int>(protocol::kMaxSenders)) {
    throw UsageError(fmt::format("-P {}: at most {} senders", flags.parallel, protocol::kMaxSenders));
  }
  c.bytes = 0;
  if (flags.time_s > 0) {
    c.duration = milliseconds_of(flags.time_s);
  } else {
    c.packets = parse_count(flags.bytes.empty() ? "1000000" : flags.bytes, "-n", 1, protocol::kMaxPackets);
  }
  const bool dtls = c.modes.back() == Mode::dtls;
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
  c.chunk_bytes = static_cast<std::uint32_t>(length);
  if (!flags.rate.empty()) c.rate_bps = parse_rate(flags.rate, "-b", 0, protocol::kMaxRateBps);
  c.gso = flags.gso;
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
  const std::pair<bool, const char*> bulk_only[] = {
      {flags.reverse, "-R"},
      {flags.bidir, "--bidir"},
      {flags.sizes.msg_size != 0, "--msg-size"},
      {flags.framing != "raw", "--framing"},
      {flags.sizes.max_msg != framing::kMaxMessageBytes, "--max-msg"},
      {flags.sizes.read_size != 0, "--read-size"},
      {!flags.length.empty(), "-l"},
      {flags.handshakes > 0, "--handshakes"},
      {flags.compare_groups, "--compare-groups"},
      {!flags.rate.empty(), "-b"},
      {flags.gso, "--gso"}};
  for (const auto& [given, flag] : bulk_only) {
    if (given) refuse(flag);
  }
  if (flags.no_delay) throw UsageError("-N: rr tests always set TCP_NODELAY; leave -N out");
  std::tie(c.rr_request_bytes, c.rr_response_bytes) = parse_rr(flags.rr, "--rr");
  c.bytes = 0;
  if (!flags.bytes.empty()) {
    c.transactions = parse_count(flags.bytes, "-n", 1, protocol::kMaxTransactions, "transactions");
    if (c.transactions < c.streams) {
      throw UsageError(
          fmt::format("-n {}: fewer transactions than connections (-P {}); each makes one at least",
                      c.transactions, c.streams));
    }
  } else {
    c.duration = flags.time_s > 0 ? milliseconds_of(flags.time_s) : std::chrono::seconds(10);
  }
  if (!flags.rr_rate.empty()) {
    if (flags.time_s == 0) {
      throw UsageError("--rate needs -t: an open-loop run goes for a time, not a count (-n)");
    }
    c.rate_tps =
        static_cast<double>(parse_rate(flags.rr_rate, "--rate", 1, 1'000'000'000, "transactions per second"));
    if (const std::string problem = protocol::rr_schedule_problem(c.rate_tps, c.streams); !problem.empty()) {
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
  const std::pair<bool, const char*> not_crr[] = {
      {flags.reverse, "-R"},
      {flags.bidir, "--bidir"},
      {flags.sizes.msg_size != 0, "--msg-size"},
      {flags.framing != "raw", "--framing"},
      {flags.sizes.max_msg != framing::kMaxMessageBytes, "--max-msg"},
      {flags.sizes.read_size != 0, "--read-size"},
      {flags.sizes.record_size != 0, "--record-size"},
      {!flags.length.empty(), "-l"},
      {flags.compare_ciphers, "--compare-ciphers"},
      {!flags.rate.empty(), "-b"},
      {!flags.rr_rate.empty(), "--rate"},
      {flags.gso, "--gso"},
      {flags.verify, "--verify"},
      {flags.tls_policy.ktls, "--ktls"},
      {flags.interval_s > 0, "-i"},
      {flags.sizes.sndbuf_bytes != 0 || flags.sizes.rcvbuf_bytes != 0, "-w/--sndbuf/--rcvbuf"}};
  for (const auto& [given, flag] : not_crr) {
    if (given) refuse(flag);
  }
  if (flags.no_delay) throw UsageError("-N: crr connections always set TCP_NODELAY; leave -N out");
  if ((flags.compare_key_types || flags.compare_groups) && flags.mode == "tcp") {
    throw UsageError(fmt::format("{} compares TLS handshakes, and --mode tcp runs none: use --mode both",
                                 flags.compare_key_types ? "--compare-key-types" : "--compare-groups"));
  }
  c.compare_key_types = flags.compare_key_types;
  c.crr_reset = flags.crr_close != "fin";
  std::tie(c.rr_request_bytes, c.rr_response_bytes) = parse_rr(flags.rr.empty() ? "1/1" : flags.rr, "--rr");
  c.bytes = 0;
  if (!flags.bytes.empty()) {
    c.transactions = parse_count(flags.bytes, "-n", 1, protocol::kMaxTransactions, "connections");
    if (c.transactions < c.streams) {
      throw UsageError(
          fmt::format("-n {}: fewer connections than connectors (-P {}); each makes one at least",
                      c.transactions, c.streams));
    }
  } else {
    c.duration = flags.time_s > 0 ? milliseconds_of(flags.time_s) : std::chrono::seconds(10);
  }
  c.rounds = repeat_count(flags) > 0 ? repeat_count(flags) : 3;
}

// TLS settings where no TLS runs: refused, as -b is without datagrams, so that
// a flag never silently does nothing.
void refuse_tls_flags_without_tls(const ClientFlags& flags) {
  if (flags.mode != "tcp" && flags.mode != "udp") return;
  // With udp, DTLS would take the first six; to_datagram_config refuses the rest.
  const bool datagrams = flags.mode == "udp";
  const std::pair<bool, const char*> given[] = {{!flags.tls_policy.version.empty(), "--tls-version"},
                                                {!flags.tls_policy.cipher.empty(), "--cipher"},
                                                {!flags.tls_policy.groups.empty(), "--groups"},
                                                {!flags.ca_file.empty(), "--ca"},
                                                {flags.insecure, "--insecure"},
                                                {!flags.cert_file.empty(), "--cert"},
                                                {flags.tls_policy.ktls && !datagrams, "--ktls"},
                                                {flags.sizes.record_size != 0 && !datagrams, "--record-size"},
                                                {flags.compare_ciphers && !datagrams, "--compare-ciphers"},
                                                {flags.handshakes > 0 && !datagrams, "--handshakes"},
                                                {flags.compare_groups && !datagrams, "--compare-groups"}};
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
  if (c.kind == TestKind::handshake) {
    throw UsageError(
        "-A pins the data threads of bulk, --rr, --crr and datagram runs; handshake tests have none");
  }
  if (c.kind == TestKind::crr && c.server_cpu >= 0) {
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

// Socket buffers asked for below this hold fewer than a few TCP segments
// (loopback's are 64 KiB): the sender waits on the window for every segment,
// and -w 1K moved 1 MiB in 75 s. 32K was the smallest that kept loopback at
// full speed; 16K ran at a fortieth of it.
constexpr std::uint32_t kSlowSocketBufferBytes = 32 * 1024;

std::string size_text(std::uint64_t bytes) {
  return bytes % 1024 == 0 ? fmt::format("{}K", bytes / 1024) : std::to_string(bytes);
}

bool slow_socket_buffer(std::uint32_t bytes) {
  return bytes != 0 && bytes < kSlowSocketBufferBytes;
}

// The warning for TCP socket buffers small enough to make a run crawl;
// `given` names them as the flags did ("-w 1K").
std::string slow_buffers_warning(const std::string& given) {
  return fmt::format(
      "warning: {}: socket buffers below {} hold fewer than a few TCP segments, so the run may crawl (1 MiB "
      "can take a minute); give 64K or more, or leave the flag out for the kernel's own sizing",
      given, size_text(kSlowSocketBufferBytes));
}

// -w, --sndbuf and --rcvbuf of a client: the warning, or "".
std::string slow_buffers_warning(const ClientFlags& flags) {
  const std::uint32_t send = flags.sizes.sndbuf_bytes;
  const std::uint32_t receive = flags.sizes.rcvbuf_bytes;
  std::string given;
  if (flags.window) {
    if (slow_socket_buffer(send)) given = "-w " + size_text(send);
  } else {
    if (slow_socket_buffer(send)) given = "--sndbuf " + size_text(send);
    if (slow_socket_buffer(receive))
      given += (given.empty() ? "--rcvbuf " : " and --rcvbuf ") + size_text(receive);
  }
  return given.empty() ? std::string() : slow_buffers_warning(given);
}

// A sweep's lists of them: one warning naming every value that will crawl, or "".
std::string slow_buffers_warning(const SweepFlags& flags) {
  std::string given;
  for (const auto& [flag, texts] : {std::pair{"-w", &flags.windows}, std::pair{"--sndbuf", &flags.sndbufs},
                                    std::pair{"--rcvbuf", &flags.rcvbufs}}) {
    for (const std::string& text : *texts) {
      if (slow_socket_buffer(
              static_cast<std::uint32_t>(parse_size(text, flag, 1024, protocol::kMaxSocketBufferBytes))))
        given += fmt::format("{}{} {}", given.empty() ? "" : ", ", flag, text);
    }
  }
  return given.empty() ? std::string() : slow_buffers_warning(given);
}

ClientCommand to_client_command(const ClientFlags& flags) {
  // Before the TLS flags: with datagrams, --rr is the mistake to name.
  if ((!flags.rr.empty() || flags.crr) &&
      (flags.mode == "udp" || flags.mode == "dtls" || flags.mode == "both-udp")) {
    throw UsageError(fmt::format("{} runs over tcp and tls; --mode {} sends datagrams",
                                 flags.crr ? "--crr" : "--rr", flags.mode));
  }
  if (!flags.crr_close.empty() && !flags.crr) throw UsageError("--close is for --crr runs");
  if (flags.compare_key_types && !flags.crr)
    throw UsageError("--compare-key-types is for connection rates: add --crr");
  if (flags.compare_groups && !flags.crr && flags.time_s > 0)
    throw UsageError(
        "--compare-groups times a number of handshakes (--handshakes N), not -t; with --crr it runs for -t");
  refuse_tls_flags_without_tls(flags);
  ClientCommand command;
  session::ClientConfig& c = command.config;
  split_host(flags, c);
  c.kind = kind_of_flags(flags);
  c.bind_address = flags.bind;
  if (flags.mode == "tcp") c.modes = {Mode::tcp};
  if (flags.mode == "tls") c.modes = {Mode::tls};
  const bool datagrams = c.kind == TestKind::datagram;
  if (!datagrams && !flags.rate.empty())
    throw UsageError("-b is for datagram modes (--mode udp, dtls, both-udp)");
  if (!datagrams && flags.gso) throw UsageError("--gso is for datagram modes (--mode udp, dtls, both-udp)");
  if (flags.time_s > 0) {
    c.bytes = 0;
    c.duration = milliseconds_of(flags.time_s);
  } else if (c.kind == TestKind::stream || c.kind == TestKind::handshake) {  // the others count other things
    c.bytes = parse_size(flags.bytes.empty() ? "1G" : flags.bytes, "-n/--bytes", 1, protocol::kMaxTestBytes);
  }
  c.interval = milliseconds_of(flags.interval_s);
  c.warmup_rounds = flags.warmup;
  c.verify = flags.verify;
  c.chunk_bytes = static_cast<std::uint32_t>(
      parse_size(flags.length.empty() ? "64K" : flags.length, "-l/--length", 1, protocol::kMaxChunkBytes));
  c.direction = flags.reverse ? Direction::server_to_client : Direction::client_to_server;
  c.ca_file = flags.ca_file;
  c.insecure = flags.insecure;
  c.rounds = repeat_count(flags) > 0 ? repeat_count(flags) : 5;
  c.tls_policy = flags.tls_policy;
  c.handshakes = flags.handshakes;
  c.compare_ciphers = flags.compare_ciphers;
  c.compare_groups = flags.compare_groups;
  c.streams = static_cast<std::uint32_t>(flags.parallel);
  c.bidir = flags.bidir;
  if (c.bidir && c.streams < 2) c.streams = 2;  // one each way at least
  c.framing = flags.framing == "len4" ? framing::Framing::len4 : framing::Framing::raw;
  c.msg_size = flags.sizes.msg_size;
  c.max_msg = flags.sizes.max_msg;
  c.read_size = flags.sizes.read_size;
  c.sndbuf_bytes = flags.sizes.sndbuf_bytes;
  c.rcvbuf_bytes = flags.sizes.rcvbuf_bytes;
  c.record_size = flags.sizes.record_size;
  if (c.msg_size == 0 && c.framing == framing::Framing::len4)
    throw UsageError("--framing len4 needs --msg-size");
  if (c.msg_size > c.max_msg) throw UsageError("--msg-size is above --max-msg");
  c.cert_file = flags.cert_file;
  c.key_file = flags.key_file;
  c.no_delay = flags.no_delay;
  c.timeouts = to_timeouts(flags.timeouts);
  parse_affinity(flags, c);
  parse_start_at(flags, c);
  if (c.kind == TestKind::crr) {
    to_crr_config(flags, c);
  } else if (c.kind == TestKind::rr) {
    to_rr_config(flags, c);
  } else if (!flags.rr_rate.empty()) {
    throw UsageError("--rate is for request/response tests (--rr REQ/RESP); datagram modes take -b");
  }
  if (datagrams) to_datagram_config(flags, c);
  // Datagram buffers only drop what does not fit, and the loss is counted.
  if (const std::string slow = slow_buffers_warning(flags); !slow.empty() && !datagrams)
    command.warnings.push_back(slow);
  parse_auto_repeat(flags, c);
  command.html_path = flags.html;
  command.format = flags.json          ? session::OutputFormat::json
                   : flags.json_stream ? session::OutputFormat::json_stream
                   : flags.csv         ? session::OutputFormat::csv
                                       : session::OutputFormat::text;
  return command;
}

// CLI11's messages, kept to one line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

// CLI11 says "--port: At Most 1 required but received 3" of a flag given
// three times; say it plainly. Other mismatches keep CLI11's words.
std::string plain_mismatch(const std::string& text) {
  static const std::regex repeated(R"(^(\S+): At Most 1 required but received (\d+)$)");
  std::smatch m;
  if (!std::regex_match(text, m, repeated)) return text;
  return fmt::format("{} was given {} times; give it once", m[1].str(), m[2].str());
}

// "-n/--bytes", "-t/--time", or a positional's name: the flag as the user may have typed it.
std::string flag_names(const CLI::Option& option) {
  std::string names;
  for (const std::string& name : option.get_snames())
    names += (names.empty() ? "-" : "/-") + name;
  for (const std::string& name : option.get_lnames())
    names += (names.empty() ? "--" : "/--") + name;
  return names.empty() ? option.get_name(true) : names;
}

// An empty value (-n '', or a shell variable that was never set) would read
// as the flag left out, and the run would go with the defaults (1 GiB, the
// system's CAs, no report page): refused, naming the flag.
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& value : option->results()) {
        if (!value.empty()) continue;
        throw UsageError(
            fmt::format("{} '': empty (a shell variable that is not set?); give a value, or "
                        "leave the flag out",
                        flag_names(*option)));
      }
    }
  }
}

// tlscmp compare BASE NEW.
struct CompareFlags {
  std::string base;
  std::string next;
  std::vector<std::string> ignore;
  double fail_if_slower = -1;  // -1: not given
  bool json = false;
};

void add_compare_command(CLI::App& app, CompareFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare two results (-J): the change in each figure, its 95% CI, faster or slower");
  cmd->add_option("base", flags.base, "The earlier result, from tlscmp client -J")
      ->required()
      ->type_name("BASE.json");
  cmd->add_option("new", flags.next, "The later result")->required()->type_name("NEW.json");
  cmd->add_option(
         "--ignore", flags.ignore,
         "A setting that may differ between the two (repeatable, or comma-separated): cipher, bytes ...")
      ->delimiter(',')
      ->type_name("SETTING");
  cmd->add_option("--fail-if-slower", flags.fail_if_slower,
                  "Exit 1 if a figure is significantly slower by at least PCT percent (for CI gating)")
      ->check(NumberRange(0.0, 100.0))
      ->type_name("PCT");
  cmd->add_flag("-J,--json", flags.json, "Print JSON instead of a table");
}

// tlscmp merge CLIENT.json...
struct MergeFlags {
  std::vector<std::string> paths;
  std::string results;
  bool json = false;
};

void add_merge_command(CLI::App& app, MergeFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge many clients' results (-J) into one: the totals, each host, and the server's account");
  cmd->add_option("client-results", flags.paths,
                  "The clients' results (-J), each named after its host (HOST.json)")
      ->required()
      ->type_name("CLIENT.json ...");
  cmd->add_option("--results", flags.results, "The server's --results file, for its account of each client")
      ->type_name("FILE");
  cmd->add_flag("-J,--json", flags.json, "Print JSON instead of tables");
}

// tlscmp report RESULT.json... -o FILE
struct ReportFlags {
  std::vector<std::string> paths;
  std::string out;
};

void add_report_command(CLI::App& app, ReportFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "report", "Draw results (-J, or a sweep's JSON) as one self-contained HTML page; several are overlaid");
  cmd->add_option("result-files", flags.paths,
                  "Results of tlscmp client -J or sweep --out, each named by its file")
      ->required()
      ->type_name("RESULT.json ...");
  cmd->add_option("-o,--output", flags.out, "Write the page here")->required()->type_name("FILE");
}

// Every flag of every subcommand, bound to these values.
struct Flags {
  session::CertsConfig certs;
  ServerFlags server;
  ClientFlags client;
  SweepFlags sweep;
  CompareFlags compare;
  MergeFlags merge;
  ReportFlags report;
};

void define_command_line(CLI::App& app, Flags& flags) {
  app.set_version_flag(
      "-V,--version", [] { return app::build_description(); },
      "Print the version, TLS library, transports and kernel TLS support, and exit");
  app.require_subcommand(0, 1);
  add_certs_command(app, flags.certs);
  add_server_command(app, flags.server);
  add_client_command(app, flags.client);
  add_sweep_command(app, flags.sweep);
  add_compare_command(app, flags.compare);
  add_merge_command(app, flags.merge);
  add_report_command(app, flags.report);
}

constexpr const char* kProgramDescription =
    "tlscmp: what TLS costs over plain TCP, on these hosts, for this workload";

}  // namespace

void visit_command_line(const std::function<void(const CLI::App&)>& visit) {
  CLI::App app{kProgramDescription, "tlscmp"};
  Flags flags;
  define_command_line(app, flags);
  visit(app);
}

namespace {

// The command as a shell would take it back: "tlscmp" and each argument,
// quoted where it holds anything but plain characters.
std::string shell_command_line(int argc, const char* const* argv) {
  std::string line = "tlscmp";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_@%+=:,./-") == std::string::npos;
    line += ' ';
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (const char c : arg)
      line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

// tlscmp sweep: the base settings as a client takes them, and the lists made
// axes, each point checked before anything runs.
SweepCommand to_sweep_command(const SweepFlags& sweep_flags, const std::string& command_line) {
  SweepCommand sweep;
  ClientFlags base_flags = sweep_flags.client;
  // Swept rr sizes make every point an rr test: the base is one, with the first size.
  if (!sweep_flags.rr_sizes.empty()) base_flags.rr = sweep_flags.rr_sizes.front();
  sweep.config.base = to_client_command(base_flags).config;
  sweep.config.base.command_line = command_line;
  sweep.out_prefix = sweep_flags.out;
  sweep.html_path = sweep_flags.client.html;
  if (const std::string slow = slow_buffers_warning(sweep_flags); !slow.empty())
    sweep.warnings.push_back(slow);
  // The first axis given in this order makes the rows of the table.
  const std::vector<std::pair<const char*, const std::vector<std::string>*>> lists{
      {"msg-size", &sweep_flags.msg_sizes}, {"length", &sweep_flags.lengths},
      {"window", &sweep_flags.windows},     {"sndbuf", &sweep_flags.sndbufs},
      {"rcvbuf", &sweep_flags.rcvbufs},     {"read-size", &sweep_flags.read_sizes},
      {"framing", &sweep_flags.framings},   {"cipher", &sweep_flags.ciphers},
      {"rr", &sweep_flags.rr_sizes}};
  // A list of one is a setting like any other, not a column of the table.
  results::SweepConfig fixed;
  for (const auto& [name, texts] : lists) {
    if (texts->empty()) continue;
    results::SweepAxis axis = sweep_axis(name, *texts);
    (texts->size() == 1 ? fixed.axes : sweep.config.axes).push_back(std::move(axis));
  }
  for (const results::SweepAxis& axis : fixed.axes)
    axis.values.front().apply(sweep.config.base);  // judged with the swept values, point by point
  if (sweep.config.axes.empty()) {
    (void)results::point_config(sweep.config.base, {});  // settings that cannot work say so first
    throw UsageError(
        "sweep: give at least one list of two values or more, e.g. --msg-size 10,1K (a single value is a "
        "setting, as tlscmp client takes it)");
  }
  for (const results::SweepGridPoint& point : results::sweep_grid(sweep.config))
    (void)results::point_config(sweep.config.base, point);
  return sweep;
}

}  // namespace

Command parse_command_line(int argc, const char* const* argv) {
  CLI::App app{kProgramDescription, "tlscmp"};
  Flags flags;
  define_command_line(app, flags);
  const session::CertsConfig& certs = flags.certs;
  const ServerFlags& server_flags = flags.server;
  const ClientFlags& client_flags = flags.client;
  const SweepFlags& sweep_flags = flags.sweep;

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* sub = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
    return HelpRequest{sub->help(), 0};
  } catch (const CLI::CallForVersion& e) {
    return HelpRequest{std::string(e.what()) + "\n", 0};
  } catch (const CLI::ArgumentMismatch& e) {
    throw UsageError(plain_mismatch(one_line(e.what())));
  } catch (const CLI::ParseError& e) {
    throw UsageError(one_line(e.what()));
  }
  refuse_empty_values(app);

  if (app.got_subcommand("certs")) return certs;
  if (app.got_subcommand("server")) {
    session::ServerConfig config;
    config.bind_address = server_flags.bind;
    config.port = static_cast<std::uint16_t>(server_flags.port);
    config.cert_file = server_flags.cert_file;
    config.key_file = server_flags.key_file;
    config.issuer_dir = server_flags.issuer_dir;
    config.timeouts = to_timeouts(server_flags.timeouts);
    config.tls_policy = server_flags.tls_policy;
    config.client_ca_file = server_flags.client_ca_file;
    config.require_client_cert = server_flags.require_client_cert;
    config.resumption = server_flags.resumption == "none"  ? tls::Resumption::none
                        : server_flags.resumption == "ids" ? tls::Resumption::ids
                                                           : tls::Resumption::tickets;
    config.max_bytes = server_flags.sizes.max_bytes;
    config.max_duration = milliseconds_of(server_flags.max_duration_s);
    config.max_clients = server_flags.max_clients;
    config.max_msg = server_flags.sizes.max_msg;
    config.shutdown_grace = milliseconds_of(server_flags.shutdown_grace_s);
    config.max_clients_per_source = server_flags.max_clients_per_source > 0
                                        ? server_flags.max_clients_per_source
                                        : std::max(1, server_flags.max_clients / 4);
    config.max_test_memory = server_flags.sizes.max_test_memory;
    config.max_memory = server_flags.sizes.max_memory;
    config.min_rate = server_flags.sizes.min_rate;
    // More connections than tests at once: a test has a control connection
    // and its data connections, and strangers may knock meanwhile.
    config.max_connections = server_flags.max_connections > 0 ? server_flags.max_connections
                                                              : std::max(512, 4 * server_flags.max_clients);
    config.max_pending = server_flags.max_pending;
    config.max_pending_per_source = server_flags.max_pending_per_source;
    config.preamble_timeout = milliseconds_of(server_flags.preamble_timeout_s);
    config.results_file = server_flags.results_file;
    return config;
  }
  if (app.got_subcommand("client")) {
    ClientCommand client = to_client_command(client_flags);
    client.config.command_line = shell_command_line(argc, argv);
    return client;
  }
  if (app.got_subcommand("merge")) {
    MergeCommand merge;
    merge.config.paths = flags.merge.paths;
    merge.config.results_path = flags.merge.results;
    merge.json = flags.merge.json;
    return merge;
  }
  if (app.got_subcommand("report")) return ReportCommand{flags.report.paths, flags.report.out};
  if (app.got_subcommand("compare")) {
    CompareCommand compare;
    compare.config.base_path = flags.compare.base;
    compare.config.next_path = flags.compare.next;
    compare.config.ignore = flags.compare.ignore;
    if (flags.compare.fail_if_slower >= 0) compare.config.fail_if_slower = flags.compare.fail_if_slower;
    compare.json = flags.compare.json;
    return compare;
  }
  if (app.got_subcommand("sweep")) return to_sweep_command(sweep_flags, shell_command_line(argc, argv));
  return HelpRequest{app.help(), 2};
}

}  // namespace tlscmp::cli
