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
#include "tls/backend.hpp"
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

namespace {

// --compare-groups: one library's group, its context and what it measured.
struct GroupEntry {
  std::string group;
  std::string library;  // --tls-lib's name; "" without it
  tls::Context context;
  HandshakeTest samples;
  std::string error;
};

// The groups of one library of --tls-lib (or the default's), each a context of its own.
void add_group_entries(const ClientConfig& config, const tls::ClientOptions& options,
                       std::vector<GroupEntry>& entries, measure::Comparison& comparison) {
  const tls::Backend& backend = tls::backend_of(options.library);
  const std::string library = config.tls_policy.libraries.empty() ? "" : backend.name();
  const std::vector<std::string> available = backend.available_groups();
  std::string lacking;
  for (const std::string& group : tls::known_groups()) {
    if (std::find(available.begin(), available.end(), group) == available.end()) {
      lacking += (lacking.empty() ? "" : ", ") + group;
      continue;
    }
    tls::ClientOptions one = options;
    one.policy.groups = group;
    entries.push_back({group, library, tls::Context::for_client(one), {}, {}});
  }
  if (!lacking.empty())
    comparison.notes.push_back(fmt::format("{} has no {}: left out", backend.library_version(), lacking));
}

// Each entry's rows into the comparison; a note names the groups cut short.
void keep_group_rows(const ClientConfig& config, int per_round, const std::vector<GroupEntry>& entries,
                     measure::Comparison& comparison) {
  GroupResults& results = comparison.as<GroupResults>();
  std::string cut_short;
  for (const GroupEntry& entry : entries) {
    const std::size_t made = entry.samples.kinds[0].handshake_us.size();
    const std::string name = entry.library.empty() ? entry.group : entry.group + " " + entry.library;
    if (entry.error.empty() && made < static_cast<std::size_t>(per_round * config.rounds))
      cut_short += fmt::format("{}{} ({})", cut_short.empty() ? "" : ", ", name, made);
    GroupHandshakes row{entry.group, entry.library, std::nullopt, entry.error};
    if (entry.error.empty() && !entry.samples.kinds[0].handshake_us.empty()) {
      row.results = HandshakeResults{per_round * config.rounds, entry.samples.kinds[0].summarize(),
                                     entry.samples.kinds[1].summarize(), entry.samples.tls};
      row.results->tls.library = entry.library;
    }
    results.groups.push_back(std::move(row));
  }
  if (!cut_short.empty()) {
    comparison.notes.push_back(
        fmt::format("a group stops a round after {} s, so these made fewer full handshakes than asked: {}",
                    std::chrono::duration<double>(kGroupBudgetPerRound).count(), cut_short));
  }
}

}  // namespace

// --compare-groups: the handshake test with each key exchange group each
// library has, alone, group after group and library after library within
// each round. A group the server refuses is a row with its error; the
// others go on.
void run_group_comparison(const ClientConfig& config, const std::vector<tls::ClientOptions>& libraries,
                          InterruptWatch& interrupt, measure::Comparison& comparison) {
  std::vector<GroupEntry> entries;
  for (const tls::ClientOptions& options : libraries)
    add_group_entries(config, options, entries, comparison);
  const int per_round = config.test.handshake.handshakes > 0
                            ? static_cast<int>(config.test.handshake.handshakes)
                            : kGroupHandshakesPerRound;
  const int total_rounds = config.warmup_rounds + config.rounds;
  for (int r = 0; r < total_rounds && !comparison.interrupted; ++r) {
    for (GroupEntry& entry : entries) {
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
  keep_group_rows(config, per_round, entries, comparison);
}

void run_library_handshakes(const ClientConfig& config, const std::vector<tls::ClientOptions>& libraries,
                            InterruptWatch& interrupt, measure::Comparison& comparison) {
  const auto count = static_cast<int>(config.test.handshake.handshakes);
  std::vector<tls::Context> contexts;
  for (const tls::ClientOptions& options : libraries)
    contexts.push_back(tls::Context::for_client(options));
  // One library: one test. Several: in parts, library after library, so
  // that none has the host's quieter or busier minute to itself.
  const int parts = libraries.size() > 1 ? std::min(count, kLibraryParts) : 1;
  std::vector<HandshakeTest> tests(libraries.size());
  for (int part = 0; part < parts; ++part) {
    const int n = count * (part + 1) / parts - count * part / parts;
    for (std::size_t i = 0; i < libraries.size() && n > 0; ++i) {
      const HandshakeTest test =
          run_handshake_test(config, n, contexts[i], interrupt, comparison.environment);
      for (int kind = 0; kind < 2; ++kind)
        tests[i].kinds[kind].add(test.kinds[kind]);
      tests[i].tls = test.tls;
    }
  }
  HandshakeLibraries& results = comparison.as<HandshakeLibraries>();
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    HandshakeResults& one = results.libraries.emplace_back(
        HandshakeResults{count, tests[i].kinds[0].summarize(), tests[i].kinds[1].summarize(), tests[i].tls});
    one.tls.library = config.tls_policy.libraries.empty() ? "" : contexts[i].backend().name();
  }
}

}  // namespace tlscmp::kinds
