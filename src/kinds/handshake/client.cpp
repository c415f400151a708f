// The client half of handshake tests (see kinds/handshake/handshake.hpp).

#include <fmt/format.h>
#include <algorithm>

#include "endpoint.hpp"
#include "kinds/handshake/handshake.hpp"
#include "kinds/tls_failure.hpp"
#include "measure/clock.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "stacks/stack.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"
#include "version.hpp"

namespace tlscmp::kinds {

using session::ClientConfig;
using session::InterruptWatch;
using session::receive;
using session::send_message;
using session::start_test;
using session::Timeouts;

namespace {

// Handshake `number` of the test: kind 0 full, 1 resumed (offering
// `offer`), timed from connect and from the TCP connection, its bytes kept
// in `results`; then the test's preamble, and the server's byte with the
// TLS 1.3 tickets. Returns a full handshake's session, for the resumed one.
tls::Session time_one_handshake(const ClientConfig& config, const tls::Context& tls,
                                const protocol::TestAccept& accept, InterruptWatch& interrupt, int kind,
                                const tls::Session& offer, std::uint64_t number, HandshakeTest& results) {
  const Timeouts& timeouts = config.timeouts;
  const std::int64_t start_ns = measure::now_ns();
  UniqueFd fd = connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address);
  const InterruptWatch::Guard guard(interrupt, fd.get());
  set_nodelay(fd.get(), true);
  const std::int64_t connected_ns = measure::now_ns();
  // Through the TLS stack: the library the server is asked for is named first, as for data connections.
  const std::unique_ptr<Stream> owner =
      stacks::client_stream(Mode::tls, std::move(fd), &tls, {config.host, offer, {}, tls.server_library()});
  tls::TlsStream* stream = owner->tls();
  stream->count_hellos();
  stream->set_deadline(Deadline::after(timeouts.handshake));
  if (const std::error_code ec = stream->handshake()) {
    throw Error(fmt::format("TLS handshake {} with {} failed: {}", number,
                            host_port(config.host, config.port),
                            explain_handshake_failure(*stream, ec, config, tls.offer(), accept)));
  }
  const std::int64_t end_ns = measure::now_ns();
  HandshakeSamples& samples = results.kinds[kind];
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
    throw Error(fmt::format("handshake connection {}: {}{}", number, describe(ec, stream->error_detail()),
                            rejection_hint(*stream, config)));
  // A clean close: OpenSSL will not resume a session whose connection
  // ended without close_notify.
  stream->shutdown_send(ec);
  const tls::SessionInfo info = stream->session_info();
  if (info.resumed) ++samples.resumed;
  if (kind == 0) {
    results.tls = {
        info.version, info.cipher, info.group, info.certificate_key_type, info.client_certificate_key_type, 0,
        {},           {}};
  }
  return kind == 0 ? stream->session() : tls::Session{};
}

}  // namespace

// --handshakes N: N full handshakes and N resumed ones, alternating, each on a
// connection of its own that closes right after. With a `budget`, no new pair
// starts once that much time has gone (one pair at least).
HandshakeTest run_handshake_test(const ClientConfig& config, int count, const tls::Context& tls,
                                 InterruptWatch& interrupt, measure::Environment& environment,
                                 std::chrono::milliseconds budget) {
  const Timeouts& timeouts = config.timeouts;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address));
  const InterruptWatch::Guard control_guard(interrupt, control.native_handle());
  // A handshake test of its own, also where another kind's run tries TLS
  // first (kinds/variants); the cipher goes too: a suite outside the
  // server's defaults is granted to the test.
  protocol::TestRequest request;
  request.test.kind = TestKind::handshake;
  request.test.handshake.handshakes = static_cast<std::uint32_t>(count);
  request.mode = Mode::tls;
  request.cipher = config.tls_policy.cipher;
  request.tls_library = tls.server_library();
  request.client_version = kVersion;
  const protocol::TestAccept accept = start_test(control, request, timeouts, environment);

  HandshakeTest results;
  std::uint64_t made = 0;
  const Deadline stop = budget.count() > 0 ? Deadline::after(budget) : Deadline::never();
  for (int i = 0; i < count && !interrupt.interrupted() && (i == 0 || !stop.expired()); ++i) {
    tls::Session session;  // from the full handshake, for the resumed one after it
    for (int kind = 0; kind < 2 && !interrupt.interrupted(); ++kind) {
      tls::Session got = time_one_handshake(config, tls, accept, interrupt, kind,
                                            kind == 1 ? session : tls::Session{}, made + 1, results);
      if (kind == 0) session = std::move(got);
      ++made;
    }
  }
  if (interrupt.interrupted()) throw Error("interrupted");

  SideResult mine;
  mine.role = Role::sender;
  mine.bytes = made;
  control.set_deadline(Deadline::after(timeouts.control));
  send_message(control, mine, "the handshake count");
  const auto theirs = receive<SideResult>(control, "the server's handshake count");
  if (!theirs.error.empty()) throw Error("the server: " + theirs.error);
  if (const std::string line = check_peer_handshakes(PeerJudge(Peer::server, /*wall_us=*/0), mine, theirs);
      !line.empty())
    throw Error(line);
  session::await_close(control, timeouts.control);
  return results;
}

// --compare-groups: the handshake test with each key exchange group this
// library has, alone, group after group within each round. A group the
// server refuses is a row with its error; the others go on.
void run_group_comparison(const ClientConfig& config, const tls::ClientOptions& tls_config,
                          InterruptWatch& interrupt, measure::Comparison& comparison) {
  struct Entry {
    std::string group;
    tls::Context context;
    HandshakeTest samples;
    std::string error;
  };
  GroupResults& results = comparison.as<GroupResults>();
  const std::vector<std::string> available = tls::available_groups();
  std::vector<Entry> entries;
  std::string lacking;
  for (const std::string& group : tls::known_groups()) {
    if (std::find(available.begin(), available.end(), group) == available.end()) {
      lacking += (lacking.empty() ? "" : ", ") + group;
      continue;
    }
    tls::ClientOptions one = tls_config;
    one.policy.groups = group;
    entries.push_back({group, tls::Context::for_client(one), {}, {}});
  }
  if (!lacking.empty())
    comparison.notes.push_back(fmt::format("{} has no {}: left out", tls::library_version(), lacking));
  const int per_round = config.test.handshake.handshakes > 0
                            ? static_cast<int>(config.test.handshake.handshakes)
                            : kGroupHandshakesPerRound;
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
    GroupHandshakes row{entry.group, std::nullopt, entry.error};
    if (entry.error.empty() && !entry.samples.kinds[0].handshake_us.empty()) {
      row.results = HandshakeResults{per_round * config.rounds, entry.samples.kinds[0].summarize(),
                                     entry.samples.kinds[1].summarize(), entry.samples.tls};
    }
    results.groups.push_back(std::move(row));
  }
  if (!cut_short.empty()) {
    comparison.notes.push_back(
        fmt::format("a group stops a round after {} s, so these made fewer full handshakes than asked: {}",
                    std::chrono::duration<double>(kGroupBudgetPerRound).count(), cut_short));
  }
}

}  // namespace tlscmp::kinds
