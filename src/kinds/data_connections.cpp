#include "kinds/data_connections.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <thread>

#include "endpoint.hpp"
#include "kinds/tls_failure.hpp"
#include "measure/clock.hpp"
#include "session/control.hpp"
#include "stacks/stack.hpp"
#include "tls/tls_stream.hpp"
#include "transport/datagram.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"
#include "transport/tcp_info.hpp"

namespace tlscmp::kinds {
namespace {

// How often a server waiting for data connections checks that the client is still there.
constexpr std::chrono::milliseconds kClientCheckInterval{100};

// The connection's socket, as its stack opens it: TCP, or for QUIC a UDP
// socket connected to the server's address as the control connection
// reached it, at its port.
UniqueFd open_socket(const session::ClientConfig& config, Mode mode, int control_fd) {
  stacks::DataTarget target{config.host,
                            config.port,
                            config.bind_address,
                            Deadline::after(config.timeouts.connect),
                            config.test.sndbuf_bytes,
                            config.test.rcvbuf_bytes,
                            control_fd};
  return stacks::stack_of(mode).open_socket(target);
}

}  // namespace

std::unique_ptr<Stream> connect_data_stream(const session::ClientConfig& config, const tls::Context* tls,
                                            Mode mode, const protocol::TestAccept& accept, int control_fd,
                                            double& handshake_us, const tls::Session& resume) {
  const session::Timeouts& timeouts = config.timeouts;
  const std::int64_t start_ns = measure::now_ns();
  std::unique_ptr<Stream> stream = stacks::client_stream(
      mode, open_socket(config, mode, control_fd), tls,
      {config.host, resume, {}, tls != nullptr ? tls->server_library() : std::string()});
  stream->set_deadline(Deadline::after(timeouts.handshake));
  if (const std::error_code ec = stream->handshake()) {
    const tls::TlsStream* tls_stream = stream->tls();
    throw Error(fmt::format(
        "{} handshake with {} failed: {}", facts(mode).handshake, host_port(config.host, config.port),
        tls_stream != nullptr ? explain_handshake_failure(*tls_stream, ec, config, tls->offer(), accept)
                              : describe(ec, stream->error_detail())));
  }
  if (tls::TlsStream* tls_stream = stream->tls(); tls_stream != nullptr && config.test.record_size != 0)
    tls_stream->set_max_record_size(config.test.record_size);
  handshake_us = measure::ns_to_us(measure::now_ns() - start_ns);
  return stream;
}

namespace {

// The data connection (or QUIC stream) `index` of the test, said to the server.
void introduce(Stream& stream, const session::ClientConfig& config, const protocol::TestAccept& accept,
               std::uint32_t index) {
  stream.set_deadline(Deadline::after(config.timeouts.handshake));
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::data);
  std::error_code ec;
  stream.write_all(preamble, ec);
  if (!ec) stream.write_all(protocol::encode_data_header(accept.cookie, index), ec);
  if (ec) {
    throw Error(fmt::format("the server did not take the data connection: {}{}",
                            describe(ec, stream.error_detail()), rejection_hint(stream, config)));
  }
}

// Connection `unit` of the test, said to the server: a data connection,
// or for QUIC --streams S a connection and S streams on it (the first
// reports its datagrams), at data.streams[unit * per_connection ...].
void open_unit(DataConnections& data, const session::ClientConfig& config, const tls::Context* tls, Mode mode,
               const protocol::TestAccept& accept, std::uint32_t unit, std::uint32_t per_connection,
               int control_fd) {
  double us = 0;
  std::unique_ptr<Stream> made = connect_data_stream(config, tls, mode, accept, control_fd, us);
  const std::uint32_t first = unit * per_connection;
  if (!facts(mode).streams) {
    introduce(*made, config, accept, first);
    data.streams[first] = std::move(made);
    data.handshake_us[first] = us;
    return;
  }
  const std::shared_ptr<Stream> connection = std::move(made);  // its streams keep it open
  const auto end = std::min<std::size_t>(first + per_connection, data.streams.size());
  for (std::uint32_t i = first; i < end; ++i) {
    std::unique_ptr<Stream> stream = connection->open_stream(i == first);
    introduce(*stream, config, accept, i);
    data.streams[i] = std::move(stream);
    data.handshake_us[i] = us;
  }
}

// How many connections are set up at once: one at a time where the round
// trip is short (the control connection's, under kLongRoundTrip), so that
// each handshake is timed alone on the client's cores; else up to
// kSetUpAtOnce, so that a long round trip is paid once a wave, not once a
// connection. Half the server's default set-up share for one source
// (--max-pending-per-source 16): the test's connections never crowd it.
constexpr std::uint32_t kSetUpAtOnce = 8;
constexpr std::uint32_t kLongRoundTripUs = 1000;

std::uint32_t at_once(int control_fd, std::uint32_t units) {
  const std::optional<TcpInfo> info = read_tcp_info(control_fd);
  if (!info || info->rtt_us < kLongRoundTripUs) return 1;
  return std::min(units, kSetUpAtOnce);
}

// The test's connections, `data.at_once` of them set up at a time; the
// first failure (by connection) thrown once all are through.
void open_all(DataConnections& data, const session::ClientConfig& config, const tls::Context* tls, Mode mode,
              const protocol::TestAccept& accept, std::uint32_t count, int control_fd) {
  const std::uint32_t per_connection =
      facts(mode).streams ? std::max<std::uint32_t>(1, config.quic_streams) : 1;
  const std::uint32_t units = (count + per_connection - 1) / per_connection;
  data.streams.resize(count);
  data.handshake_us.resize(count);
  data.at_once = at_once(control_fd, units);
  std::vector<std::exception_ptr> failures(units);
  std::atomic<std::uint32_t> next{0};
  std::atomic<bool> failed{false};
  const auto work = [&] {
    for (std::uint32_t unit = next++; unit < units && !failed; unit = next++) {
      try {
        open_unit(data, config, tls, mode, accept, unit, per_connection, control_fd);
      } catch (...) {
        failures[unit] = std::current_exception();
        failed = true;
      }
    }
  };
  if (data.at_once == 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (std::uint32_t i = 0; i < data.at_once; ++i)
      threads.emplace_back(work);
    for (std::thread& t : threads)
      t.join();
  }
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

// The ready byte comes once every connection of the test has arrived.
void await_ready(Stream& stream, const session::ClientConfig& config) {
  stream.set_deadline(Deadline::after(config.timeouts.connect + config.timeouts.handshake));
  std::error_code ec;
  std::byte ready{};
  stream.read_exact({&ready, 1}, ec);
  if (ec) {
    throw Error(fmt::format("the server did not start the transfer: {}{}",
                            describe(ec, stream.error_detail()), rejection_hint(stream, config)));
  }
  if (ready != kReadyByte) throw protocol::ProtocolError("the server sent something other than ready");
}

}  // namespace

DataConnections open_data_connections(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                                      const protocol::TestAccept& accept, std::uint32_t count,
                                      Stream& control) {
  DataConnections data;
  const std::int64_t start_ns = measure::now_ns();
  try {
    open_all(data, config, tls, mode, accept, count, control.native_handle());
    for (const auto& stream : data.streams)
      await_ready(*stream, config);
    data.setup_us = measure::ns_to_us(measure::now_ns() - start_ns);
  } catch (const Error& e) {
    // If the server refused the data connection, its reason beats ours.
    std::string reason = e.what();
    control.set_deadline(Deadline::after(std::chrono::milliseconds(500)));
    try {
      const protocol::Message message = session::receive_message(control, "the server's answer");
      if (const auto* refusal = std::get_if<protocol::Refusal>(&message)) reason = refusal->reason;
    } catch (const Error&) {
      // No word from the server: our own reason stands.
    }
    throw Error(reason);
  }
  return data;
}

measure::TlsParameters tls_parameters(const Stream& stream, std::uint32_t record_size) {
  const tls::TlsStream* tls = stream.tls();
  if (tls == nullptr) return {};
  const tls::SessionInfo info = tls->session_info();
  return {info.version, info.cipher, info.group, info.certificate_key_type, info.client_certificate_key_type,
          record_size,  {},          {}};
}

std::shared_ptr<void> reserve_data_connections(Stream& control, const protocol::TestRequest& request,
                                               session::ServerSide& side) {
  std::string busy;
  std::shared_ptr<void> token = side.reserve_connections(request.test.streams, busy);
  if (!token) session::refuse_test(control, busy);
  return token;
}

std::vector<std::unique_ptr<Stream>> await_data_connections(Stream& control,
                                                            const protocol::TestRequest& request,
                                                            session::ServerSide& side,
                                                            session::PendingTests::Ticket& ticket) {
  const session::Timeouts& t = side.config().timeouts;
  const auto refuse = [&](const std::string& reason) { session::refuse_test(control, reason); };
  // The client opens its connections one after another, each a round trip or
  // two (TLS) away: what may pass before the next one comes is one
  // connection's connect and handshake, from the last one to come, however
  // many the test has. Meanwhile notice a client that gave up (a failed TLS
  // handshake, say) instead of holding its slot until the deadline.
  const auto gap = t.connect + t.handshake;
  std::uint32_t came = 0;
  Deadline deadline = Deadline::after(gap);
  std::optional<std::vector<std::unique_ptr<Stream>>> data;
  while (!data && !deadline.expired() && !side.stopping()) {
    data = ticket.wait(Deadline::earlier(deadline, Deadline::after(kClientCheckInterval)));
    if (data) break;
    if (peer_has_closed(control.native_handle())) {
      throw Error(
          fmt::format("{} test: the client closed the control connection before its data connections came",
                      to_string(request.mode)));
    }
    if (const std::uint32_t now_came = ticket.arrived(); now_came != came) {
      came = now_came;
      deadline = Deadline::after(gap);
    }
  }
  if (!data) {
    refuse(side.stopping()
               ? "the server is shutting down"
               : fmt::format("{} of {} data connections arrived; the next did not come within {:g} s", came,
                             request.test.streams, std::chrono::duration<double>(gap).count()));
  }
  for (const auto& stream : *data) {
    if (const Mode came_as = stream->mode(); came_as != request.mode) {
      refuse(fmt::format("the data connection is {} but the test is {}",
                         facts(came_as).encrypted ? to_string(came_as) : "plain TCP",
                         to_string(request.mode)));
    }
  }
  return std::move(*data);
}

void send_ready(Stream& stream, std::chrono::milliseconds timeout) {
  stream.set_deadline(Deadline::after(timeout));
  std::error_code ec;
  stream.write_all({&kReadyByte, 1}, ec);
  if (ec) throw Error(fmt::format("cannot start the transfer: {}", describe(ec, stream.error_detail())));
}

}  // namespace tlscmp::kinds
