#include "app/client.hpp"

#include <sys/random.h>

#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

#include "app/control.hpp"
#include "app/datagram.hpp"
#include "app/interrupt.hpp"
#include "app/log.hpp"
#include "app/server.hpp"
#include "app/streams.hpp"
#include "app/tls_facts.hpp"
#include "app/transfer.hpp"
#include "endpoint.hpp"
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
  EmbeddedServer(const Timeouts& timeouts, bool ktls)
      : certificates_(tls::generate_certificates({}, kEmbeddedCertificateDays)),
        server_(embedded_config(timeouts, ktls), certificates_.server, quiet_),
        thread_([this] { server_.run(/*handle_signals=*/false); }) {}
  ~EmbeddedServer() {
    server_.stop();
    thread_.join();
  }
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  std::uint16_t port() const { return server_.port(); }
  const std::string& ca_pem() const { return certificates_.ca.certificate_chain_pem; }

 private:
  // Like a server started by hand with no options, but for --ktls, which
  // the client asks of both ends, and the caps: this server is the client's
  // own, so whatever the client may ask (-n up to 1P, -t up to its limit) runs.
  static ServerConfig embedded_config(const Timeouts& timeouts, bool ktls) {
    ServerConfig config;
    config.bind_address = "127.0.0.1";
    config.port = 0;
    config.timeouts = timeouts;
    config.tls_policy.ktls = ktls;
    config.max_bytes = protocol::kMaxTestBytes;
    config.max_duration = std::chrono::milliseconds(protocol::kMaxDurationMs);
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
  TestRun(const ClientConfig& config, const tls::Context* tls, Mode mode, InterruptWatch& interrupt,
          measure::TransferObserver* observer, std::uint64_t verify_seed, int round)
      : config_(config),
        tls_(tls),
        mode_(mode),
        interrupt_(interrupt),
        observer_(observer),
        verify_seed_(verify_seed),
        round_(round) {}

  measure::RunResult run(measure::Environment& environment);

 private:
  std::unique_ptr<Stream> open_data_connection(const protocol::Cookie& cookie, std::uint32_t index,
                                               double& handshake_us);
  void await_ready(Stream& stream) const;
  protocol::TestRequest request() const;

  const ClientConfig& config_;
  const tls::Context* tls_;
  Mode mode_;
  InterruptWatch& interrupt_;
  measure::TransferObserver* observer_;
  std::uint64_t verify_seed_;
  int round_;                    // for the server's log
  protocol::TestAccept accept_;  // the server's answer, with its TLS offer
};

// The TLS library's words for "no version, suite or group in common".
bool is_negotiation_failure(const std::string& detail) {
  for (const char* sign :
       {"handshake failure", "protocol version", "no shared", "no suitable", "unsupported protocol",
        "wrong version number", "insufficient security", "no cipher"}) {
    if (detail.find(sign) != std::string::npos) return true;
  }
  return false;
}

std::string client_certificate_hint(const std::string& detail) {
  if (detail.find("certificate required") != std::string::npos) {
    return " (the server requires a client certificate: --cert FILE --key FILE)";
  }
  if (detail.find("unknown ca") != std::string::npos || detail.find("bad certificate") != std::string::npos ||
      detail.find("certificate unknown") != std::string::npos) {
    return " (the server does not trust the client certificate)";
  }
  return {};
}

// In TLS 1.3 the server judges the client certificate after the client's
// handshake is done: its verdict arrives as an alert on the first read, or, when
// the server's close reset the connection first, not at all. Then the request
// for a certificate this client did not have is the likely reason.
std::string rejection_hint(const Stream& stream, const ClientConfig& config) {
  std::string hint = client_certificate_hint(stream.error_detail());
  const tls::TlsStream* tls = stream.tls();
  if (hint.empty() && tls != nullptr && tls->certificate_requested() && config.cert_file.empty()) {
    hint = " (the server asked for a client certificate: --cert FILE --key FILE)";
  }
  return hint;
}

std::string offers_text(const tls::Offer& mine, const protocol::TestAccept& accept) {
  return fmt::format(
      "; the client offered versions {}, ciphers {}, groups {}; the server accepts versions {}, ciphers {}, "
      "groups {}",
      mine.versions, mine.ciphers, mine.groups, accept.tls_versions, accept.tls_ciphers, accept.tls_groups);
}

// The certificate a TLS 1.2 cipher name needs: "ECDHE-ECDSA-..." an ECDSA (or
// Ed25519) one, "ECDHE-RSA-...", "DHE-RSA-..." and plain "AES..." an RSA one.
std::string certificate_for_cipher(const std::string& cipher) {
  if (cipher.find("ECDSA") != std::string::npos) return "ECDSA";
  if (cipher.find("RSA") != std::string::npos || cipher.rfind("AES", 0) == 0) return "RSA";
  return {};
}

// "the server's certificate is ECDSA P-256; TLS 1.2 cipher ECDHE-RSA-... needs an
// RSA certificate", where no cipher of a TLS 1.2 list fits the server's
// certificate; else "".
std::string cipher_certificate_mismatch(const std::string& ciphers, const std::string& certificate) {
  if (ciphers.empty() || ciphers.rfind("TLS_", 0) == 0 || certificate.empty()) return {};
  std::string needs;
  std::size_t start = 0;
  while (start <= ciphers.size()) {
    const std::size_t end = std::min(ciphers.find(':', start), ciphers.size());
    needs = certificate_for_cipher(ciphers.substr(start, end - start));
    const bool fits = needs.empty() || (needs == "RSA" && certificate.rfind("RSA", 0) == 0) ||
                      (needs == "ECDSA" && (certificate.rfind("ECDSA", 0) == 0 || certificate == "Ed25519"));
    if (fits) return {};
    start = end + 1;
  }
  return fmt::format("the server's certificate is {}; TLS 1.2 cipher {} needs {} certificate", certificate,
                     ciphers, needs == "RSA" ? "an RSA" : "an ECDSA or Ed25519");
}

// Why a TLS handshake with the server failed, in one line that says what to
// change: the certificate (expired, not yet valid, not for this name, not
// from the trusted CA), a cipher the certificate cannot serve, or what each
// side offers when they share nothing.
std::string explain_handshake_failure(const tls::TlsStream& stream, std::error_code ec,
                                      const ClientConfig& config, const tls::Offer& mine,
                                      const protocol::TestAccept& accept) {
  std::string reason = describe(ec, stream.error_detail());
  switch (stream.verify_failure()) {
    case tls::VerifyFailure::untrusted:
      if (config.ca_file.empty())
        reason += " (trust the server's CA with --ca FILE, or skip verification with --insecure)";
      return reason;
    case tls::VerifyFailure::name_mismatch:
      return reason + fmt::format(" (the server's certificate does not name '{}'; see tlscmp certs --host)",
                                  config.host);
    case tls::VerifyFailure::none:
      break;
    default:
      return reason;
  }
  if (!is_negotiation_failure(stream.error_detail())) return reason;
  const std::string mismatch =
      cipher_certificate_mismatch(config.tls_policy.cipher, accept.certificate_key_type);
  return mismatch.empty() ? reason + offers_text(mine, accept) : mismatch;
}

std::unique_ptr<Stream> TestRun::open_data_connection(const protocol::Cookie& cookie, std::uint32_t index,
                                                      double& handshake_us) {
  const Timeouts& timeouts = config_.timeouts;
  const std::int64_t start_ns = measure::now_ns();
  UniqueFd fd =
      connect_tcp(config_.host, config_.port, Deadline::after(timeouts.connect), config_.bind_address);
  set_nodelay(fd.get(), true);  // until the transfer starts: no Nagle delay on the small setup messages
  set_socket_buffers(fd.get(), config_.sndbuf_bytes, config_.rcvbuf_bytes);
  std::unique_ptr<Stream> stream;
  if (mode_ == Mode::tls) {
    auto tls = tls_->client_stream(std::move(fd), config_.host);
    tls->set_deadline(Deadline::after(timeouts.handshake));
    if (const std::error_code ec = tls->handshake()) {
      throw Error(fmt::format("TLS handshake with {} failed: {}", host_port(config_.host, config_.port),
                              explain_handshake_failure(*tls, ec, config_, tls_->offer(), accept_)));
    }
    if (config_.record_size != 0) tls->set_max_record_size(config_.record_size);
    stream = std::move(tls);
  } else {
    stream = std::make_unique<TcpStream>(std::move(fd));
  }
  handshake_us = measure::ns_to_us(measure::now_ns() - start_ns);

  stream->set_deadline(Deadline::after(timeouts.handshake));
  const protocol::Preamble preamble = protocol::encode_preamble(protocol::ConnectionKind::data);
  std::error_code ec;
  stream->write_all(preamble, ec);
  if (!ec) stream->write_all(protocol::encode_data_header(cookie, index), ec);
  if (ec) {
    throw Error(fmt::format("the server did not take the data connection: {}{}",
                            describe(ec, stream->error_detail()), rejection_hint(*stream, config_)));
  }
  return stream;
}

// Waits for the server's ready byte on a data connection: it comes once every
// stream of the test has arrived.
void TestRun::await_ready(Stream& stream) const {
  stream.set_deadline(Deadline::after(config_.timeouts.connect + config_.timeouts.handshake));
  std::error_code ec;
  std::byte ready{};
  stream.read_exact({&ready, 1}, ec);
  if (ec) {
    throw Error(fmt::format("the server did not start the transfer: {}{}",
                            describe(ec, stream.error_detail()), rejection_hint(stream, config_)));
  }
  if (ready != kReadyByte) throw protocol::ProtocolError("the server sent something other than ready");
}

protocol::TestRequest TestRun::request() const {
  protocol::TestRequest request;
  request.mode = mode_;
  request.direction = config_.direction;
  request.bytes = config_.bytes;
  request.duration_ms = static_cast<std::uint64_t>(config_.duration.count());
  request.chunk_bytes = config_.chunk_bytes;
  request.interval_ms = static_cast<std::uint64_t>(config_.interval.count());
  request.no_delay = config_.no_delay;
  request.verify = config_.verify;
  request.verify_seed = verify_seed_;
  request.record_size = mode_ == Mode::tls ? config_.record_size : 0;
  request.framing = config_.framing;
  request.msg_size = config_.msg_size;
  request.max_msg = config_.max_msg;
  request.read_size = config_.read_size;
  request.sndbuf_bytes = config_.sndbuf_bytes;
  request.rcvbuf_bytes = config_.rcvbuf_bytes;
  request.streams = config_.streams;
  request.bidir = config_.bidir;
  request.client_version = kVersion;
  request.round = static_cast<std::uint32_t>(round_);
  return request;
}

// A failed stream, as one line: what happened, and on which side.
std::string stream_failure(const protocol::SideResult& side, bool client_side, std::uint32_t streams) {
  return fmt::format("{} (the {}, {}{})", side.error, client_side ? "client" : "server",
                     side.role == Role::sender ? "sending" : "receiving",
                     streams > 1 ? fmt::format(", stream {}", side.stream) : "");
}

measure::SideCost side_cost(const protocol::SideResult& side) {
  return {side.elapsed_us, side.cpu_user_s, side.cpu_system_s, side.sndbuf_bytes, side.rcvbuf_bytes,
          side.mss_bytes,  side.congestion, side.ktls_send,    side.ktls_receive, side.tls_bytes};
}

std::vector<measure::Interval> intervals_of(const protocol::SideResult& receiver) {
  std::vector<measure::Interval> intervals;
  double start_s = 0;
  for (std::size_t i = 0; i < receiver.interval_end_us.size(); ++i) {
    const double end_s = receiver.interval_end_us[i] / 1e6;
    intervals.push_back({start_s, end_s, receiver.interval_bytes[i]});
    start_s = end_s;
  }
  return intervals;
}

// The window of the streams whose `role` side is `side`: from the earliest
// start to the latest end among them, on that side's clock.
double window_us(const std::vector<protocol::SideResult>& side, Role role) {
  double first = -1;
  double last = 0;
  for (const protocol::SideResult& r : side) {
    if (r.role != role) continue;
    first = first < 0 ? r.offset_us : std::min(first, r.offset_us);
    last = std::max(last, r.offset_us + r.elapsed_us);
  }
  return first < 0 ? 0 : last - first;
}

// Totals over a test's streams, each checked already: bytes and messages
// added up; per direction, the receiving side's window from the first go to
// the last byte; per side, CPU added up over its streams.
// The receivers' intervals of the streams that go the way of stream 0, added
// up period by period.
std::vector<measure::Interval> summed_intervals(const std::vector<const protocol::SideResult*>& receivers,
                                                std::uint64_t interval_ms) {
  std::vector<std::vector<measure::Interval>> each;
  for (const protocol::SideResult* r : receivers)
    each.push_back(intervals_of(*r));
  return measure::sum_intervals(each, static_cast<double>(interval_ms) / 1e3);
}

void aggregate_streams(measure::RunResult& result, const std::vector<protocol::SideResult>& client,
                       const std::vector<protocol::SideResult>& server, std::uint64_t interval_ms) {
  std::vector<const protocol::SideResult*> forward_receivers;
  for (std::size_t i = 0; i < client.size(); ++i) {
    const protocol::SideResult& receiver = client[i].role == Role::receiver ? client[i] : server[i];
    const protocol::SideResult& sender = client[i].role == Role::sender ? client[i] : server[i];
    result.bytes += receiver.bytes;
    result.messages += receiver.messages;
    result.payload_bytes += receiver.payload_bytes;
    if (client[i].role == client.front().role) forward_receivers.push_back(&receiver);
    if (client.size() > 1) {
      result.streams.push_back(
          {static_cast<std::uint32_t>(i),
           client[i].role == Role::sender ? Direction::client_to_server : Direction::server_to_client,
           receiver.bytes, receiver.elapsed_us, sender.elapsed_us, receiver.messages,
           intervals_of(receiver)});
    }
  }
  // Each direction's window on its receiver's clock; the run's is the longer.
  result.transfer_us = std::max(window_us(client, Role::receiver), window_us(server, Role::receiver));
  result.sender_us = std::max(window_us(client, Role::sender), window_us(server, Role::sender));
  result.client = side_cost(combine(client));
  result.server = side_cost(combine(server));
  result.intervals = summed_intervals(forward_receivers, interval_ms);
}

measure::RunResult TestRun::run(measure::Environment& environment) {
  const Timeouts& timeouts = config_.timeouts;
  TcpStream control(
      connect_tcp(config_.host, config_.port, Deadline::after(timeouts.connect), config_.bind_address));
  const InterruptWatch::Guard control_guard(interrupt_, control.native_handle());
  const protocol::TestRequest test = request();
  accept_ = start_test(control, test, timeouts, environment);
  const protocol::TestAccept& accept = accept_;

  measure::RunResult result;
  result.mode = mode_;
  const std::uint32_t streams = test.streams;
  std::vector<std::unique_ptr<Stream>> data;
  std::vector<double> handshake_us;
  try {
    for (std::uint32_t i = 0; i < streams; ++i) {
      double us = 0;
      data.push_back(open_data_connection(accept.cookie, i, us));
      handshake_us.push_back(us);
    }
    for (const auto& stream : data)
      await_ready(*stream);
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
  result.handshake_us = measure::summarize(handshake_us).mean;
  if (const tls::TlsStream* tls_stream = data.front()->tls()) {
    const tls::SessionInfo info = tls_stream->session_info();
    result.tls = {info.version,
                  info.cipher,
                  info.group,
                  info.certificate_key_type,
                  info.client_certificate_key_type,
                  config_.record_size};
  }

  std::vector<protocol::SideResult> mine;
  {
    std::vector<std::unique_ptr<InterruptWatch::Guard>> guards;
    std::vector<StreamWork> work;
    // The live view follows the streams that go the test's way, added up.
    const Role live_role = stream_role(test.direction, test.bidir, 0, /*server_side=*/false);
    const std::uint32_t live_streams = forward_streams(test.bidir, streams);
    std::optional<measure::JoinedObserver> joined;
    if (observer_ != nullptr && live_streams > 1) joined.emplace(*observer_, live_streams);
    for (std::uint32_t i = 0, live = 0; i < streams; ++i) {
      guards.push_back(std::make_unique<InterruptWatch::Guard>(interrupt_, data[i]->native_handle()));
      const Role role = stream_role(test.direction, test.bidir, i, /*server_side=*/false);
      TransferSpec spec = transfer_spec(test, role, timeouts.idle);
      if (role == live_role) spec.observer = joined ? joined->stream(live++) : observer_;
      work.push_back({data[i].get(), spec});
    }
    mine = run_streams(work);
  }
  data.clear();

  if (interrupt_.interrupted()) {
    // Ctrl-C: what this side measured until then, marked partial.
    const protocol::SideResult total = combine(mine);
    result.partial = true;
    result.bytes = total.bytes;
    (total.role == Role::receiver ? result.transfer_us : result.sender_us) = total.elapsed_us;
    result.client = side_cost(total);
    std::vector<const protocol::SideResult*> receivers;
    for (const protocol::SideResult& m : mine) {
      if (m.role == Role::receiver && m.role == mine.front().role) receivers.push_back(&m);
    }
    result.intervals = summed_intervals(receivers, test.interval_ms);
    return result;
  }

  // After a failure on this side (a stall, a reset) the server's result may
  // never come: the link may be dead, the server stopped. It gets a short
  // grace, then this side's own account stands.
  const auto failed_here =
      std::find_if(mine.begin(), mine.end(), [](const protocol::SideResult& m) { return !m.error.empty(); });
  control.set_deadline(Deadline::after(failed_here == mine.end() ? timeouts.control
                                                                 : std::min(timeouts.control, kResultGrace)));
  std::vector<protocol::SideResult> theirs;
  try {
    for (const protocol::SideResult& m : mine)
      send_message(control, m, "the client's result");
    for (std::uint32_t i = 0; i < streams; ++i) {
      theirs.push_back(receive<protocol::SideResult>(control, "the server's result"));
      if (theirs.back().stream != i || theirs.back().role == mine[i].role) {
        throw protocol::ProtocolError("the server's results do not match the streams");
      }
    }
  } catch (const Error&) {
    if (failed_here == mine.end()) throw;
    throw Error(stream_failure(*failed_here, /*client_side=*/true, streams));
  }

  // Stream by stream: the receiver's account of what failed comes first (it
  // saw what arrived), and nothing is silently lost.
  const std::uint64_t expected = stream_bytes(transfer_spec(test, Role::sender, timeouts.idle));
  for (std::uint32_t i = 0; i < streams; ++i) {
    const protocol::SideResult& receiver = mine[i].role == Role::receiver ? mine[i] : theirs[i];
    const protocol::SideResult& sender = mine[i].role == Role::sender ? mine[i] : theirs[i];
    const std::string which = streams > 1 ? fmt::format(" stream {}", i) : "";
    for (const auto* side : {&receiver, &sender}) {
      if (!side->error.empty()) throw Error(stream_failure(*side, side == &mine[i], streams));
    }
    if (receiver.bytes != sender.bytes || (expected > 0 && receiver.bytes != expected) ||
        receiver.messages != sender.messages) {
      throw Error(fmt::format("the receiver{} counted {} bytes ({} messages), the sender sent {} ({}){}",
                              which, receiver.bytes, receiver.messages, sender.bytes, sender.messages,
                              expected > 0 ? fmt::format(", {} were due", expected) : ""));
    }
  }
  aggregate_streams(result, mine, theirs, test.interval_ms);
  return result;
}

// What one handshake test measured: each handshake's figures, [0] full and
// [1] resumed, and what the last full one negotiated.
struct HandshakeTest {
  measure::HandshakeSamples kinds[2];
  measure::TlsParameters tls;
};

// --handshakes N: N full handshakes and N resumed ones, alternating, each on a
// connection of its own that closes right after. With a `budget`, no new pair
// starts once that much time has gone (one pair at least).
HandshakeTest run_handshake_test(const ClientConfig& config, int count, const tls::Context& tls,
                                 InterruptWatch& interrupt, measure::Environment& environment,
                                 std::chrono::milliseconds budget = {}) {
  const Timeouts& timeouts = config.timeouts;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address));
  const InterruptWatch::Guard control_guard(interrupt, control.native_handle());
  protocol::TestRequest request;
  request.mode = Mode::tls;
  request.chunk_bytes = 1;
  request.handshakes = static_cast<std::uint32_t>(2 * count);
  request.client_version = kVersion;
  const protocol::TestAccept accept = start_test(control, request, timeouts, environment);

  HandshakeTest results;
  std::uint64_t made = 0;
  const Deadline stop = budget.count() > 0 ? Deadline::after(budget) : Deadline::never();
  for (int i = 0; i < count && !interrupt.interrupted() && (i == 0 || !stop.expired()); ++i) {
    tls::Session session;  // from the full handshake, for the resumed one after it
    for (int kind = 0; kind < 2 && !interrupt.interrupted(); ++kind) {
      const std::int64_t start_ns = measure::now_ns();
      UniqueFd fd =
          connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address);
      const InterruptWatch::Guard guard(interrupt, fd.get());
      set_nodelay(fd.get(), true);
      const std::int64_t connected_ns = measure::now_ns();
      auto stream = tls.client_stream(std::move(fd), config.host, kind == 1 ? session : tls::Session{});
      stream->count_hellos();
      stream->set_deadline(Deadline::after(timeouts.handshake));
      if (const std::error_code ec = stream->handshake()) {
        throw Error(fmt::format("TLS handshake {} with {} failed: {}", made + 1,
                                host_port(config.host, config.port),
                                explain_handshake_failure(*stream, ec, config, tls.offer(), accept)));
      }
      const std::int64_t end_ns = measure::now_ns();
      measure::HandshakeSamples& samples = results.kinds[kind];
      samples.handshake_us.push_back(measure::ns_to_us(end_ns - start_ns));
      samples.tls_us.push_back(measure::ns_to_us(end_ns - connected_ns));
      const tls::SessionInfo after_handshake = stream->session_info();
      samples.bytes_received.push_back(static_cast<double>(after_handshake.bytes_read));
      samples.bytes_sent.push_back(static_cast<double>(after_handshake.bytes_written));
      samples.client_hello_bytes.push_back(after_handshake.client_hello_bytes);
      samples.server_hello_bytes.push_back(after_handshake.server_hello_bytes);
      // Say which test this is, and take the server's byte: with it come the
      // TLS 1.3 session tickets that the resumed handshake needs.
      std::error_code ec;
      stream->write_all(protocol::encode_preamble(protocol::ConnectionKind::handshake), ec);
      if (!ec) stream->write_all(accept.cookie, ec);
      std::byte ready{};
      if (!ec) stream->read_exact({&ready, 1}, ec);
      if (ec)
        throw Error(fmt::format("handshake connection {}: {}{}", made + 1,
                                describe(ec, stream->error_detail()), rejection_hint(*stream, config)));
      // A clean close: OpenSSL will not resume a session whose connection
      // ended without close_notify.
      stream->shutdown_send(ec);
      const tls::SessionInfo info = stream->session_info();
      if (info.resumed) ++samples.resumed;
      if (kind == 0) {
        session = stream->session();
        results.tls = {info.version,
                       info.cipher,
                       info.group,
                       info.certificate_key_type,
                       info.client_certificate_key_type,
                       0};
      }
      ++made;
    }
  }
  if (interrupt.interrupted()) throw Error("interrupted");

  protocol::SideResult mine;
  mine.role = Role::sender;
  mine.bytes = made;
  control.set_deadline(Deadline::after(timeouts.control));
  send_message(control, mine, "the handshake count");
  const auto theirs = receive<protocol::SideResult>(control, "the server's handshake count");
  if (theirs.bytes != made) {
    throw Error(
        fmt::format("the server counted {} handshake connections, the client made {}", theirs.bytes, made));
  }
  return results;
}

// --compare-groups without --handshakes: full and resumed handshakes per
// group and round (100 each over the default 5 rounds), and the time a group
// may take per round, so that the slow finite-field groups (ffdhe8192: most
// of a second per handshake) are measured with fewer handshakes, not for minutes.
constexpr int kGroupHandshakesPerRound = 20;
constexpr std::chrono::milliseconds kGroupBudgetPerRound{1000};

// --compare-groups: the handshake test with each key exchange group this
// library has, alone, group after group within each round. A group the
// server refuses is a row with its error; the others go on.
void run_group_comparison(const ClientConfig& config, const tls::ClientConfig& tls_config,
                          InterruptWatch& interrupt, measure::Comparison& comparison) {
  struct Entry {
    std::string group;
    tls::Context context;
    HandshakeTest samples;
    std::string error;
  };
  const std::vector<std::string> available = tls::available_groups();
  std::vector<Entry> entries;
  std::string lacking;
  for (const std::string& group : tls::known_groups()) {
    if (std::find(available.begin(), available.end(), group) == available.end()) {
      lacking += (lacking.empty() ? "" : ", ") + group;
      continue;
    }
    tls::ClientConfig one = tls_config;
    one.policy.groups = group;
    entries.push_back({group, tls::Context::for_client(one), {}, {}});
  }
  if (!lacking.empty())
    comparison.notes.push_back(fmt::format("{} has no {}: left out", tls::library_version(), lacking));
  const int per_round = config.handshakes > 0 ? config.handshakes : kGroupHandshakesPerRound;
  const int total_rounds = config.warmup_rounds + config.rounds;
  for (int r = 0; r < total_rounds && !comparison.interrupted; ++r) {
    for (Entry& entry : entries) {
      if (!entry.error.empty()) continue;  // it failed once: the server or the version cannot do it
      try {
        const HandshakeTest test = run_handshake_test(config, per_round, entry.context, interrupt,
                                                      comparison.environment, kGroupBudgetPerRound);
        if (r < config.warmup_rounds) continue;
        for (int kind = 0; kind < 2; ++kind)
          entry.samples.kinds[kind].add(test.kinds[kind]);
        entry.samples.tls = test.tls;
      } catch (const Error& e) {
        if (interrupt.interrupted()) {
          comparison.interrupted = true;
          break;
        }
        entry.error = e.what();
      }
    }
  }
  std::string cut_short;
  for (const Entry& entry : entries) {
    const std::size_t made = entry.samples.kinds[0].handshake_us.size();
    if (entry.error.empty() && made < static_cast<std::size_t>(per_round * config.rounds))
      cut_short += fmt::format("{}{} ({})", cut_short.empty() ? "" : ", ", entry.group, made);
    measure::GroupHandshakes row{entry.group, std::nullopt, entry.error};
    if (entry.error.empty() && !entry.samples.kinds[0].handshake_us.empty()) {
      row.results = measure::HandshakeResults{per_round * config.rounds, entry.samples.kinds[0].summarize(),
                                              entry.samples.kinds[1].summarize(), entry.samples.tls};
    }
    comparison.groups.push_back(std::move(row));
  }
  if (!cut_short.empty()) {
    comparison.notes.push_back(
        fmt::format("a group stops a round after {} s, so these made fewer full handshakes than asked: {}",
                    std::chrono::duration<double>(kGroupBudgetPerRound).count(), cut_short));
  }
}

// -w/--sndbuf/--rcvbuf: what the kernel applied, where it is not what was asked.
void note_buffer_sizes(measure::Comparison& comparison) {
  if (comparison.runs.empty()) return;
  const measure::RunResult& last = comparison.runs.back();
  const measure::TestParameters& p = comparison.parameters;
  for (const auto& [option, asked, client, server] :
       {std::tuple{"SO_SNDBUF", p.sndbuf_bytes, last.client.sndbuf_bytes, last.server.sndbuf_bytes},
        std::tuple{"SO_RCVBUF", p.rcvbuf_bytes, last.client.rcvbuf_bytes, last.server.rcvbuf_bytes}}) {
    if (asked == 0) continue;
    const auto wanted = static_cast<int>(asked);
    if (client == wanted && server == wanted) continue;
    std::string why;
    if (client == 2 * wanted || server == 2 * wanted)
      why = "; Linux doubles what is asked, for its bookkeeping";
    if (client < 2 * wanted || server < 2 * wanted)
      why += "; less than asked is net.core.*mem_max capping it";
    comparison.notes.push_back(
        fmt::format("{} {} asked for, the kernel applied {} on the client and {} on the server{}", option,
                    asked, client, server, why));
  }
}

std::string run_label(const std::string& variant, int round, int rounds, bool warmup) {
  return warmup ? fmt::format("{} warm-up {}", variant, round)
                : fmt::format("{} {}/{}", variant, round, rounds);
}

// One kind of run in a round: plain TCP, or TLS with its own context.
struct Variant {
  Mode mode;
  std::string label;
  std::optional<tls::Context> tls;
  std::optional<tls::DtlsContext> dtls;
};

// --compare-ciphers: the TLS 1.3 suites, and the TLS 1.2 AEAD suites for
// either certificate type (ECDSA or RSA).
struct ComparedSuite {
  const char* label;
  const char* version;
  const char* cipher;
};
constexpr ComparedSuite kComparedSuites[] = {
    {"TLS_AES_128_GCM_SHA256", "1.3", "TLS_AES_128_GCM_SHA256"},
    {"TLS_AES_256_GCM_SHA384", "1.3", "TLS_AES_256_GCM_SHA384"},
    {"TLS_CHACHA20_POLY1305_SHA256", "1.3", "TLS_CHACHA20_POLY1305_SHA256"},
    {"TLSv1.2 AES128-GCM", "1.2", "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLSv1.2 AES256-GCM", "1.2", "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLSv1.2 CHACHA20", "1.2", "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"},
};

// A fresh seed per comparison, so that a stale or misrouted stream cannot pass.
std::uint64_t random_seed() {
  std::uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed)) {
    seed = static_cast<std::uint64_t>(measure::now_ns());
  }
  return seed;
}

}  // namespace

measure::Comparison run_client(const ClientConfig& config, measure::TransferObserver* observer) {
  // First, before any thread starts: Ctrl-C must reach the watcher, not kill us.
  InterruptWatch interrupt;

  measure::Comparison comparison;
  measure::TestParameters& parameters = comparison.parameters;
  parameters.modes = config.modes;
  parameters.direction = config.direction;
  parameters.bytes = config.bytes;
  parameters.duration_s = static_cast<double>(config.duration.count()) / 1e3;
  parameters.chunk_bytes = config.chunk_bytes;
  parameters.interval_s = static_cast<double>(config.interval.count()) / 1e3;
  parameters.rounds = config.rounds;
  parameters.warmup_rounds = config.warmup_rounds;
  parameters.no_delay = config.no_delay;
  parameters.verify = config.verify;
  measure::Environment& environment = comparison.environment;
  environment.client_version = kVersion;
  environment.client_tls_library = tls::library_version();
  environment.client_cpu_model = measure::cpu_model();
  environment.client_cpu_features = measure::cpu_crypto_features();
  environment.client_kernel = measure::kernel_description();

  std::optional<EmbeddedServer> embedded;
  tls::ClientConfig tls_config;
  tls_config.ca_file = config.ca_file;
  tls_config.insecure = config.insecure;
  tls_config.policy = config.tls_policy;
  if (!config.cert_file.empty()) tls_config.identity = tls::load_identity(config.cert_file, config.key_file);
  parameters.ktls = config.tls_policy.ktls;
  parameters.tls_version = config.tls_policy.version;
  parameters.cipher = config.tls_policy.cipher;
  parameters.groups = config.tls_policy.groups;
  parameters.record_size = config.record_size;
  parameters.client_certificate = tls_config.identity.has_value();
  parameters.framing = framing::to_string(config.framing);
  parameters.msg_size = config.msg_size;
  parameters.read_size = config.read_size;
  parameters.sndbuf_bytes = config.sndbuf_bytes;
  parameters.rcvbuf_bytes = config.rcvbuf_bytes;
  parameters.streams = config.streams;
  parameters.bidir = config.bidir;
  parameters.packets = config.packets;
  parameters.rate_bps = config.rate_bps;
  parameters.gso = config.gso;
  tls::kernel_has_tls_ulp(environment.client_tls_ulps);
  if (config.host.empty()) {
    embedded.emplace(config.timeouts, config.tls_policy.ktls);
    parameters.host = "127.0.0.1";
    parameters.port = embedded->port();
    parameters.embedded_server = true;
    if (config.ca_file.empty()) tls_config.ca_pem = embedded->ca_pem();
  } else {
    parameters.host = config.host;
    parameters.port = config.port;
  }

  // What one round runs: tcp, and tls once or, with --compare-ciphers, once per suite.
  std::vector<Variant> variants;
  for (Mode mode : config.modes) {
    if (mode == Mode::tcp || mode == Mode::udp) {
      variants.push_back({mode, to_string(mode), std::nullopt, std::nullopt});
    } else if (mode == Mode::dtls) {
      variants.push_back({mode, "dtls", std::nullopt, tls::DtlsContext::for_client(tls_config)});
    } else if (!config.compare_ciphers) {
      variants.push_back({Mode::tls, "tls", tls::Context::for_client(tls_config), std::nullopt});
    } else {
      bool any_tls13 = false;
      for (const auto& [label, version, cipher] : kComparedSuites) {
        tls::ClientConfig suite_config = tls_config;
        suite_config.policy.version = version;
        suite_config.policy.cipher = cipher;
        try {
          variants.push_back({Mode::tls, label, tls::Context::for_client(suite_config), std::nullopt});
          any_tls13 = any_tls13 || std::string_view(version) == "1.3";
        } catch (const Error& e) {
          comparison.notes.push_back(fmt::format("{} left out: {}", label, e.what()));
        }
      }
      if (!any_tls13) {
        // A library that picks TLS 1.3 suites itself still gets a TLS 1.3 row.
        tls::ClientConfig tls13 = tls_config;
        tls13.policy.version = "1.3";
        variants.push_back(
            {Mode::tls, "TLSv1.3 (library's choice)", tls::Context::for_client(tls13), std::nullopt});
      }
    }
  }
  for (const Variant& v : variants)
    parameters.variants.push_back(v.label);
  ClientConfig target = config;  // with the server actually used
  target.host = parameters.host;
  target.port = parameters.port;
  if (config.compare_groups) {
    parameters.compare_groups = true;
    parameters.handshakes = config.handshakes > 0 ? config.handshakes : kGroupHandshakesPerRound;
    run_group_comparison(target, tls_config, interrupt, comparison);
    return comparison;
  }
  if (config.handshakes > 0) {
    parameters.handshakes = config.handshakes;
    try {
      const tls::Context tls = tls::Context::for_client(tls_config);
      const HandshakeTest test = run_handshake_test(target, config.handshakes, tls, interrupt, environment);
      comparison.handshakes = measure::HandshakeResults{config.handshakes, test.kinds[0].summarize(),
                                                        test.kinds[1].summarize(), test.tls};
    } catch (const Error& e) {
      if (interrupt.interrupted()) {
        comparison.interrupted = true;
      } else {
        comparison.error = e.what();
      }
    }
    return comparison;
  }
  // One TLS handshake per TLS variant before the first measured run (not
  // timed, not counted), so that a TLS setting that cannot work fails in
  // seconds rather than after a whole TCP run.
  for (const Variant& variant : variants) {
    if (!variant.tls) continue;
    try {
      (void)run_handshake_test(target, 1, *variant.tls, interrupt, environment);
    } catch (const Error& e) {
      if (interrupt.interrupted()) {
        comparison.interrupted = true;
      } else {
        comparison.error = variant.label == "tls" ? e.what() : fmt::format("{}: {}", variant.label, e.what());
      }
      return comparison;
    }
  }
  const std::uint64_t seed = random_seed();
  if (observer != nullptr) observer->begin_comparison(parameters);
  // Warm-up rounds first, then the measured ones; each round runs every mode in turn.
  const int total_rounds = config.warmup_rounds + config.rounds;
  for (int r = 0; r < total_rounds && comparison.error.empty() && !comparison.interrupted; ++r) {
    const bool warmup = r < config.warmup_rounds;
    const int round = warmup ? r + 1 : r - config.warmup_rounds + 1;
    for (const Variant& variant : variants) {
      if (observer != nullptr) observer->begin_run(run_label(variant.label, round, config.rounds, warmup));
      try {
        if (is_datagram(variant.mode)) {
          measure::DatagramRun result =
              run_datagram_test(target, variant.mode, variant.dtls ? &*variant.dtls : nullptr, interrupt,
                                comparison.environment);
          result.variant = variant.label;
          result.round = round;
          result.warmup = warmup;
          result.partial = interrupt.interrupted();  // the senders stopped early
          comparison.interrupted = result.partial;
          comparison.datagram_runs.push_back(std::move(result));
        } else {
          TestRun test(target, variant.tls ? &*variant.tls : nullptr, variant.mode, interrupt, observer, seed,
                       round);
          measure::RunResult result = test.run(comparison.environment);
          result.variant = variant.label;
          result.round = round;
          result.warmup = warmup;
          comparison.interrupted = result.partial;
          comparison.runs.push_back(std::move(result));
        }
      } catch (const Error& e) {
        if (interrupt.interrupted()) {
          comparison.interrupted = true;
        } else {
          // Which run: "tls round 2: no data for 30 s after ...".
          comparison.error =
              fmt::format("{} {} {}: {}", variant.label, warmup ? "warm-up round" : "round", round, e.what());
        }
      }
      if (!comparison.error.empty() || comparison.interrupted) break;
    }
  }
  note_buffer_sizes(comparison);
  measure::compute_statistics(comparison);
  return comparison;
}

}  // namespace tlscmp::app
