#include "app/client.hpp"

#include <fmt/format.h>
#include <memory>
#include <optional>
#include <thread>

#include "app/control.hpp"
#include "app/log.hpp"
#include "app/server.hpp"
#include "app/transfer.hpp"
#include "measure/clock.hpp"
#include "measure/environment.hpp"
#include "tls/context.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"
#include "version.hpp"

namespace tlscmp::app {
namespace {

constexpr int kEmbeddedCertificateDays = 1;

// A server on loopback inside this process, with a certificate made for it.
class EmbeddedServer {
 public:
  explicit EmbeddedServer(const Timeouts& timeouts)
      : certificates_(tls::generate_certificates({}, kEmbeddedCertificateDays)),
        server_(embedded_config(timeouts), certificates_.server, quiet_),
        thread_([this] { server_.run(/*handle_signals=*/false); }) {}
  ~EmbeddedServer() {
    server_.stop();
    thread_.join();
  }
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  std::uint16_t port() const { return server_.port(); }
  const std::string& ca_pem() const { return certificates_.ca_certificate_pem; }

 private:
  static ServerConfig embedded_config(const Timeouts& timeouts) {
    ServerConfig config;
    config.bind_address = "127.0.0.1";
    config.port = 0;
    config.timeouts = timeouts;
    return config;
  }

  tls::CertificateSet certificates_;
  Logger quiet_{nullptr};
  Server server_;
  std::thread thread_;
};

// One test on its own control connection: parameters, data connection,
// transfer, results. config.host and config.port name the server to use.
class TestRun {
 public:
  TestRun(const ClientConfig& config, const tls::Context* tls, Mode mode)
      : config_(config), tls_(tls), mode_(mode) {}

  measure::RunResult run(measure::Environment& environment);

 private:
  std::unique_ptr<Stream> open_data_connection(const protocol::Cookie& cookie, double& handshake_us);

  const ClientConfig& config_;
  const tls::Context* tls_;
  Mode mode_;
};

std::unique_ptr<Stream> TestRun::open_data_connection(const protocol::Cookie& cookie, double& handshake_us) {
  const Timeouts& timeouts = config_.timeouts;
  const std::int64_t start_ns = measure::now_ns();
  UniqueFd fd = connect_tcp(config_.host, config_.port, Deadline::after(timeouts.connect));
  set_nodelay(fd.get(), true);  // until the transfer starts: no Nagle delay on the small setup messages
  std::unique_ptr<Stream> stream;
  if (mode_ == Mode::tls) {
    auto tls = tls_->client_stream(std::move(fd), config_.host);
    tls->set_deadline(Deadline::after(timeouts.handshake));
    if (const std::error_code ec = tls->handshake()) {
      std::string reason = describe(ec, tls->error_detail());
      if (tls->verify_failure() == tls::VerifyFailure::untrusted) {
        reason += " (trust the server's CA with --ca FILE, or skip verification with --insecure)";
      } else if (tls->verify_failure() == tls::VerifyFailure::name_mismatch) {
        reason += fmt::format(" (the server's certificate does not name '{}'; see tlscmp certs --host)",
                              config_.host);
      }
      throw Error(fmt::format("TLS handshake with {}:{} failed: {}", config_.host, config_.port, reason));
    }
    stream = std::move(tls);
  } else {
    stream = std::make_unique<TcpStream>(std::move(fd));
  }
  handshake_us = measure::ns_to_us(measure::now_ns() - start_ns);

  stream->set_deadline(Deadline::after(timeouts.handshake));
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::data);
  std::error_code ec;
  stream->write_all(preamble, ec);
  if (!ec) stream->write_all(cookie, ec);
  std::byte ready{};
  if (!ec) stream->read_exact({&ready, 1}, ec);
  if (ec) {
    throw Error(
        fmt::format("the server did not start the transfer: {}", describe(ec, stream->error_detail())));
  }
  if (ready != kReadyByte) throw protocol::ProtocolError("the server sent something other than ready");
  return stream;
}

measure::RunResult TestRun::run(measure::Environment& environment) {
  const Timeouts& timeouts = config_.timeouts;
  TcpStream control(connect_tcp(config_.host, config_.port, Deadline::after(timeouts.connect)));
  set_nodelay(control.native_handle(), true);
  control.set_deadline(Deadline::after(timeouts.control));
  std::error_code ec;
  control.write_all(protocol::encode_preamble(protocol::ConnectionKind::control), ec);
  if (ec) throw Error(fmt::format("cannot talk to the server: {}", describe(ec)));

  protocol::TestRequest request;
  request.mode = mode_;
  request.direction = config_.direction;
  request.bytes = config_.bytes;
  request.chunk_bytes = config_.chunk_bytes;
  request.no_delay = config_.no_delay;
  request.client_version = kVersion;
  send_message(control, request, "the test request");
  const auto accept = receive<protocol::TestAccept>(control, "the server's answer");
  environment.server_version = accept.server_version;
  environment.server_tls_library = accept.tls_library;
  environment.server_cpu_model = accept.cpu_model;

  measure::RunResult result;
  result.mode = mode_;
  std::unique_ptr<Stream> data;
  try {
    data = open_data_connection(accept.cookie, result.handshake_us);
  } catch (const Error& e) {
    // If the server refused the data connection, its reason beats ours.
    std::string reason = e.what();
    control.set_deadline(Deadline::after(std::chrono::milliseconds(500)));
    try {
      const protocol::Message message = receive_message(control, "the server's answer");
      if (const auto* refusal = std::get_if<protocol::Refusal>(&message)) reason = refusal->reason;
    } catch (const Error&) {
      // No word from the server: our own reason stands.
    }
    throw Error(reason);
  }
  if (const auto* tls = dynamic_cast<const tls::TlsStream*>(data.get())) {
    const tls::SessionInfo info = tls->session_info();
    result.tls = {info.version, info.cipher, info.group, info.certificate_key_type};
  }

  const Role role = config_.direction == Direction::client_to_server ? Role::sender : Role::receiver;
  const protocol::SideResult mine =
      run_transfer(*data, {role, config_.bytes, config_.chunk_bytes, config_.no_delay, timeouts.idle});
  data.reset();

  control.set_deadline(Deadline::after(timeouts.control));
  send_message(control, mine, "the client's result");
  const auto theirs = receive<protocol::SideResult>(control, "the server's result");
  if (theirs.role == mine.role) throw protocol::ProtocolError("the server claims the client's role");

  const protocol::SideResult& receiver = role == Role::receiver ? mine : theirs;
  const protocol::SideResult& sender = role == Role::sender ? mine : theirs;
  // The receiver's account of what failed comes first: it saw what arrived.
  for (const auto* side : {&receiver, &sender}) {
    if (!side->error.empty()) {
      throw Error(fmt::format("{} run failed on the {} ({}): {}", to_string(mode_),
                              side == &mine ? "client" : "server", to_string(side->role), side->error));
    }
  }
  if (receiver.bytes != config_.bytes || sender.bytes != config_.bytes) {
    throw Error(
        fmt::format("{} run failed: the receiver counted {} bytes, the sender sent {}, {} were asked for",
                    to_string(mode_), receiver.bytes, sender.bytes, config_.bytes));
  }
  result.bytes = receiver.bytes;
  result.transfer_us = receiver.elapsed_us;
  result.sender_us = sender.elapsed_us;
  result.client = {mine.cpu_user_s, mine.cpu_system_s, mine.sndbuf_bytes, mine.rcvbuf_bytes};
  result.server = {theirs.cpu_user_s, theirs.cpu_system_s, theirs.sndbuf_bytes, theirs.rcvbuf_bytes};
  return result;
}

}  // namespace

measure::Comparison run_client(const ClientConfig& config) {
  measure::Comparison comparison;
  measure::TestParameters& parameters = comparison.parameters;
  parameters.modes = config.modes;
  parameters.direction = config.direction;
  parameters.bytes = config.bytes;
  parameters.chunk_bytes = config.chunk_bytes;
  parameters.rounds = config.rounds;
  parameters.no_delay = config.no_delay;
  comparison.environment.client_version = kVersion;
  comparison.environment.client_tls_library = tls::library_version();
  comparison.environment.client_cpu_model = measure::cpu_model();
  comparison.environment.client_kernel = measure::kernel_description();

  std::optional<EmbeddedServer> embedded;
  tls::ClientConfig tls_config;
  tls_config.ca_file = config.ca_file;
  tls_config.insecure = config.insecure;
  tls_config.cipher = config.cipher;
  if (config.host.empty()) {
    embedded.emplace(config.timeouts);
    parameters.host = "127.0.0.1";
    parameters.port = embedded->port();
    parameters.embedded_server = true;
    if (config.ca_file.empty()) tls_config.ca_pem = embedded->ca_pem();
  } else {
    parameters.host = config.host;
    parameters.port = config.port;
  }

  std::optional<tls::Context> tls;
  for (Mode mode : config.modes) {
    if (mode == Mode::tls && !tls) tls = tls::Context::for_client(tls_config);
  }

  ClientConfig target = config;  // with the server actually used
  target.host = parameters.host;
  target.port = parameters.port;
  for (int round = 1; round <= config.rounds && comparison.error.empty(); ++round) {
    for (Mode mode : config.modes) {
      try {
        TestRun test(target, tls ? &*tls : nullptr, mode);
        measure::RunResult result = test.run(comparison.environment);
        result.round = round;
        comparison.runs.push_back(std::move(result));
      } catch (const Error& e) {
        comparison.error = e.what();
        break;
      }
    }
  }
  measure::compute_statistics(comparison);
  return comparison;
}

}  // namespace tlscmp::app
