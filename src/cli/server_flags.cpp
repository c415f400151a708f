#include "cli/server_flags.hpp"

#include <algorithm>
#include <limits>

#include "error.hpp"
#include "transport/descriptors.hpp"

namespace tlscmp::cli {

namespace {

// Where it listens, its certificate and issuer, and its TLS policy.
void add_listen_and_tls_flags(CLI::App* cmd, session::ServerConfig& config) {
  cmd->add_option("-p,--port", config.port, "TCP port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--bind", config.bind_address,
                  "Address to listen on (default: every IPv6 and IPv4 address)");
  CLI::Option* cert =
      cmd->add_option("--cert", config.cert_file, "Server certificate chain (PEM)")->type_name("FILE");
  CLI::Option* key =
      cmd->add_option("--key", config.key_file, "Server private key (PEM, unencrypted)")->type_name("FILE");
  cert->needs(key);
  key->needs(cert);
  cmd->add_option(
         "--issuer", config.issuer_dir,
         "The CA tlscmp certs made (DIR/ca.pem, DIR/ca.key): signs the certificates of other key types "
         "that crr tests ask for (client --compare-key-types); without --cert the throwaway CA does")
      ->type_name("DIR")
      ->needs(cert);
  add_tls_library_flag(cmd);
  add_tls_policy_flags(cmd, config.tls_policy, "TLS tests");
  CLI::Option* ca =
      cmd->add_option("--ca", config.client_ca_file, "Trust client certificates from these CAs (PEM)")
          ->type_name("FILE");
  cmd->add_flag("--require-client-cert", config.require_client_cert,
                "Mutual TLS: refuse TLS clients without a certificate from --ca")
      ->needs(ca);
  cmd->add_option_function<std::string>(
         "--resumption",
         [&config](const std::string& text) {
           config.resumption = text == "none"  ? tls::Resumption::none
                               : text == "ids" ? tls::Resumption::ids
                                               : tls::Resumption::tickets;
         },
         "How clients may resume TLS sessions: tickets (session tickets, and session IDs for TLS 1.2 "
         "clients without one), ids (the session cache only: TLS 1.2 session IDs), or none (every "
         "handshake a full one, as a restarted server, or servers behind a load balancer without "
         "shared ticket keys, look to a returning client)")
      ->check(CLI::IsMember({"tickets", "ids", "none"}))
      ->default_str("tickets");
}

// What a test, a source address and all of them may take of it.
void add_cap_flags(CLI::App* cmd, ServerFlags& flags) {
  session::ServerConfig& config = flags.config;
  add_size(cmd, "--max-bytes", config.max_bytes, "--max-bytes", 1, protocol::kMaxTestBytes,
           "Largest payload a test may ask for (K, M, G, T, P suffixes)")
      ->default_str("1T");
  add_seconds(cmd, "--max-duration", config.max_duration, 0.001, kMaxSeconds,
              "Seconds a test's transfer may last, asked for or not");
  add_size(cmd, "--max-msg", config.max_msg, "--max-msg", 1, framing::kMaxMessageBytes,
           "Largest message the server assembles as a receiver")
      ->default_str("1G");
  cmd->add_option("--max-clients", config.max_clients, "Tests running at once; more are refused as busy")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  cmd->add_option("--max-clients-per-source", flags.max_clients_per_source,
                  "Tests running at once from one source address (default: a quarter of --max-clients); "
                  "while k addresses run tests (its own counted), below --max-clients / (k + 1) too")
      ->check(CLI::Range(1, 10'000));
  cmd->add_option(
         "--max-connections", flags.max_connections,
         "Connections served at once, a thread each; one source address may hold half, while k hold some "
         "--max-connections / (k + 1), at least what the largest test needs (default: "
         "4 x --max-clients, at least 512)")
      ->check(CLI::Range(16, 100'000));
  cmd->add_option("--max-flows", config.max_flows,
                  "Connections one many-connection test (client --flows) may hold, on event loops; all such "
                  "tests together hold what the open-file limit leaves beside --max-connections")
      ->check(CLI::Range(1, static_cast<int>(spec::kMaxFlows)))
      ->capture_default_str();
  add_size(cmd, "--max-test-memory", config.max_test_memory, "--max-test-memory", 1, std::uint64_t{1} << 40,
           "Buffers one test may hold on the server (its streams' chunks and the messages they assemble); "
           "a test that needs more is refused")
      ->default_str("256M");
  add_size(cmd, "--max-memory", config.max_memory, "--max-memory", 1, std::uint64_t{1} << 40,
           "Buffers all running tests may hold together; a test past it is told the server is busy")
      ->default_str("1G");
  add_size(cmd, "--min-rate", config.min_rate, "--min-rate", 0, std::uint64_t{1} << 40,
           "Bytes a second a running test must move, counted over each --idle-timeout, or it fails: "
           "a peer cannot hold a slot with a trickle (0: no floor)")
      ->default_str("1K");
  cmd->add_option(
         "--max-pending", config.max_pending,
         "Connections still being set up (accepted, not yet a running test's or a delivered data "
         "connection), shared evenly between source addresses: when all are taken, one from an "
         "address holding fewer takes the busiest address's oldest; more are told the server is busy")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  cmd->add_option(
         "--max-pending-per-source", config.max_pending_per_source,
         "Connections still being set up from one source address; more from it are told the server is "
         "busy")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  add_seconds(cmd, "--preamble-timeout", config.preamble_timeout, 0.001, kMaxTimeoutS,
              "Seconds a new connection may take to send its first byte before it is closed");
  cmd->add_option("--results", config.results_file,
                  "Append a JSON line per test served to FILE: when, the client's address, the settings, and "
                  "both sides' results")
      ->type_name("FILE");
  add_seconds(cmd, "--shutdown-grace", config.shutdown_grace, 0.0, kMaxTimeoutS,
              "After SIGINT/SIGTERM: seconds running tests may take to finish");
}

}  // namespace

void add_server_command(CLI::App& app, ServerFlags& flags) {
  CLI::App* cmd = app.add_subcommand("server", "Serve plain TCP and TLS tests until interrupted");
  // The server's flags come in layers (the systemd unit's defaults, then
  // TLSCMP_SERVER_OPTIONS from /etc/default): a flag given again overrides.
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_listen_and_tls_flags(cmd, flags.config);
  add_cap_flags(cmd, flags);
  add_timeout_flags(cmd, flags.config.timeouts);
}

session::ServerConfig to_server_config(const ServerFlags& flags) {
  session::ServerConfig config = flags.config;
  config.max_clients_per_source =
      flags.max_clients_per_source > 0 ? flags.max_clients_per_source : std::max(1, config.max_clients / 4);
  // A descriptor per connection, within what this process may open.
  const std::uint64_t hard = descriptor_hard_limit();
  const auto most = static_cast<int>(std::min<std::uint64_t>(
      hard > kReservedDescriptors ? hard - kReservedDescriptors : 0, std::numeric_limits<int>::max()));
  if (flags.max_connections > most) {
    throw UsageError(fmt::format(
        "--max-connections {}: the server holds a descriptor per connection, and this process may "
        "open {} (its hard limit, ulimit -Hn), {} of them kept for the rest; give at most {}, or "
        "raise the hard limit (LimitNOFILE= in the server's unit)",
        flags.max_connections, hard, kReservedDescriptors, most));
  }
  // More connections than tests at once: a test has a control connection
  // and its data connections, and strangers may knock meanwhile.
  config.max_connections = flags.max_connections > 0 ? flags.max_connections
                                                     : std::min(std::max(512, 4 * config.max_clients), most);
  return config;
}

}  // namespace tlscmp::cli
