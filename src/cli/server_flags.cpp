#include "cli/server_flags.hpp"

#include <algorithm>

namespace tlscmp::cli {

namespace {

// Where it listens, its certificate and issuer, and its TLS policy.
void add_listen_and_tls_flags(CLI::App* cmd, ServerFlags& flags) {
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
}

// What a test, a source address and all of them may take of it.
void add_cap_flags(CLI::App* cmd, ServerFlags& flags) {
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
}

}  // namespace

void add_server_command(CLI::App& app, ServerFlags& flags) {
  CLI::App* cmd = app.add_subcommand("server", "Serve plain TCP and TLS tests until interrupted");
  // The server's flags come in layers (the systemd unit's defaults, then
  // TLSCMP_SERVER_OPTIONS from /etc/default): a flag given again overrides.
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_listen_and_tls_flags(cmd, flags);
  add_cap_flags(cmd, flags);
  add_timeout_flags(cmd, flags.timeouts);
}

session::ServerConfig to_server_config(const ServerFlags& flags) {
  session::ServerConfig config;
  config.bind_address = flags.bind;
  config.port = static_cast<std::uint16_t>(flags.port);
  config.cert_file = flags.cert_file;
  config.key_file = flags.key_file;
  config.issuer_dir = flags.issuer_dir;
  config.timeouts = to_timeouts(flags.timeouts);
  config.tls_policy = flags.tls_policy;
  config.client_ca_file = flags.client_ca_file;
  config.require_client_cert = flags.require_client_cert;
  config.resumption = flags.resumption == "none"  ? tls::Resumption::none
                      : flags.resumption == "ids" ? tls::Resumption::ids
                                                  : tls::Resumption::tickets;
  config.max_bytes = flags.sizes.max_bytes;
  config.max_duration = milliseconds_of(flags.max_duration_s);
  config.max_clients = flags.max_clients;
  config.max_msg = flags.sizes.max_msg;
  config.shutdown_grace = milliseconds_of(flags.shutdown_grace_s);
  config.max_clients_per_source =
      flags.max_clients_per_source > 0 ? flags.max_clients_per_source : std::max(1, flags.max_clients / 4);
  config.max_test_memory = flags.sizes.max_test_memory;
  config.max_memory = flags.sizes.max_memory;
  config.min_rate = flags.sizes.min_rate;
  // More connections than tests at once: a test has a control connection
  // and its data connections, and strangers may knock meanwhile.
  config.max_connections =
      flags.max_connections > 0 ? flags.max_connections : std::max(512, 4 * flags.max_clients);
  config.max_pending = flags.max_pending;
  config.max_pending_per_source = flags.max_pending_per_source;
  config.preamble_timeout = milliseconds_of(flags.preamble_timeout_s);
  config.results_file = flags.results_file;
  return config;
}

}  // namespace tlscmp::cli
