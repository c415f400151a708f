// The in-memory measures over any backend's memory pair (tls/memory.hpp):
// bulk, transactions, handshakes, the memory of idle sessions, and the
// calibrations a run's split of TLS's extra CPU is made with. No library
// here: each backend gives its pairs and its AEAD figure.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "error.hpp"
#include "measure/memory.hpp"
#include "tls/backend.hpp"
#include "tls/memory.hpp"
#include "tls/speed.hpp"

namespace tlscmp::tls {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

// A pair of the contexts' backend (both of one: a pair joins two connections of one library).
std::unique_ptr<MemoryPairImpl> pair_of(const Context& client, const Context& server,
                                        std::size_t buffer_bytes, const Session& resume = {}) {
  if (&client.backend() != &server.backend())
    throw Error(fmt::format("an in-memory pair joins two connections of one library, not {} and {}",
                            client.backend().name(), server.backend().name()));
  return client.backend().memory_pair(client, server, buffer_bytes, resume);
}

}  // namespace

std::size_t memory_buffer_for(std::size_t chunk_bytes, std::size_t record_bytes) {
  const std::size_t record = record_bytes == 0 ? 16384 : record_bytes;
  const std::size_t records = chunk_bytes / record + 2;
  // A record's header, explicit nonce, tag and content type take under 64
  // bytes; the handshake's flights (a certificate chain, tickets) under 64 KiB.
  return std::max<std::size_t>(chunk_bytes + records * 64, 64 * 1024);
}

SuiteContexts contexts_for_suite(const Backend& backend, const SpeedSuite& suite,
                                 std::optional<KeyType> key_type, const std::string& group) {
  const bool rsa = suite.name.find("-RSA-") != std::string::npos;
  const CertificateSet& set =
      kept_certificates(key_type.value_or(rsa ? KeyType::rsa_2048 : KeyType::ecdsa_p256), backend);
  ServerOptions server;
  server.identity = set.server;
  server.library = &backend;
  ClientOptions client;
  client.ca_pem = set.ca.certificate_chain_pem;
  client.policy.version = suite.version;
  client.policy.cipher = suite.name;
  client.policy.groups = group;
  std::string refused;
  std::optional<Context> client_context;
  while (!client_context) {
    try {
      client_context = backend.client_context(client);
    } catch (const Error& e) {
      if (!client.policy.groups.empty()) {
        client.policy.groups.clear();  // a group this library does not know: its defaults
      } else if (suite.version == "1.3" && !client.policy.cipher.empty()) {
        refused = e.what();  // a library that chooses its TLS 1.3 suite itself
        client.policy.cipher.clear();
      } else {
        throw;
      }
    }
  }
  return {*client_context, Context::for_server(server), refused};
}

std::optional<measure::TlsCalibration> calibrate_bulk(const Backend& backend, const std::string& suite_name,
                                                      const MemoryBulkShape& shape, double seconds) {
  const std::optional<SpeedSuite> suite = find_speed_suite(suite_name);
  if (!suite) return std::nullopt;
  const std::size_t record = shape.record_bytes != 0 ? shape.record_bytes : 16384;
  const SuiteContexts contexts = contexts_for_suite(backend, *suite, std::nullopt, {});
  measure::TlsCalibration out;
  out.suite = suite->name;
  out.aead = suite->aead;
  out.chunk_bytes = static_cast<std::uint32_t>(shape.chunk_bytes);
  out.record_bytes = static_cast<std::uint32_t>(record);
  out.writer_s_per_gib = out.reader_s_per_gib = std::numeric_limits<double>::infinity();
  // The best of five short tries of each: on a shared host a try that a
  // neighbour slowed would otherwise stand for the host's limit.
  constexpr int kTries = 5;
  for (int i = 0; i < kTries; ++i) {
    const measure::MemoryBulkFigure bulk =
        measure_memory_bulk(contexts.client, contexts.server, shape, seconds / kTries);
    if (bulk.suite != suite->name) return std::nullopt;
    const measure::AeadFigure aead =
        backend.measure_aead(*suite, std::min(record, shape.chunk_bytes), seconds / kTries);
    out.read_bytes = bulk.read_bytes;
    out.writer_s_per_gib =
        std::min(out.writer_s_per_gib, measure::seconds_per_gib(bulk.writer_bytes_per_s()));
    out.reader_s_per_gib =
        std::min(out.reader_s_per_gib, measure::seconds_per_gib(bulk.reader_bytes_per_s()));
    out.seal_bytes_per_s = std::max(out.seal_bytes_per_s, aead.seal_bytes_per_s);
    out.open_bytes_per_s = std::max(out.open_bytes_per_s, aead.open_bytes_per_s);
  }
  return out;
}

namespace {

// Messages over this are timed in memory at this size and scaled.
constexpr std::uint64_t kMaxMemoryMessage = 1024 * 1024;

// Microseconds the AEAD takes to seal (or open) a message of `bytes`, at
// the best rate of `figures` (one per try, each measured at the message's
// records' size).
double aead_us(const std::vector<measure::AeadFigure>& figures, std::uint64_t bytes, bool seal) {
  double best = 0;
  for (const measure::AeadFigure& f : figures)
    best = std::max(best, seal ? f.seal_bytes_per_s : f.open_bytes_per_s);
  return best > 0 ? static_cast<double>(bytes) * 1e6 / best : 0;
}

// One try of each of a transaction calibration's figures, each the best so far kept.
struct TransactionTries {
  std::vector<measure::AeadFigure> request, response;
  double client_tls_us = std::numeric_limits<double>::infinity();
  double server_tls_us = std::numeric_limits<double>::infinity();
  double client_handshake_us = std::numeric_limits<double>::infinity();
  double server_handshake_us = std::numeric_limits<double>::infinity();
  std::string group;  // as the handshakes negotiated
};

}  // namespace

namespace {

// Transactions in memory on one pair of connections, whose handshake is
// made once: a group such as ffdhe8192 takes a third of a second a handshake.
class TransactionLoop {
 public:
  TransactionLoop(const Context& client, const Context& server, const TransactionShape& shape)
      : request_(std::min(shape.request_bytes, kMaxMemoryMessage)),
        response_(std::min(shape.response_bytes, kMaxMemoryMessage)),
        pair_(pair_of(client, server, memory_buffer_for(std::max(request_, response_), shape.record_bytes))),
        asked_(request_, std::byte{'q'}),
        answer_(response_, std::byte{'r'}),
        sink_(std::max(request_, response_)) {
    SideSeconds spent;
    pair_->handshake(spent);
    if (shape.record_bytes != 0) pair_->set_max_record_size(shape.record_bytes);
    for (int i = 0; i < 4; ++i)  // the buffers allocated, the caches warm
      pair_->exchange(asked_, answer_, sink_, spent);
    // Past 1 MiB a message's cost grows with its bytes: each side's time is
    // scaled by the transaction's bytes over those timed.
    scale_ = static_cast<double>(shape.request_bytes + shape.response_bytes) /
             static_cast<double>(request_ + response_);
  }
  // The suite the pair negotiated.
  std::string cipher() const { return pair_->client_info().cipher; }
  // Transactions for about `seconds`: each side's microseconds in its calls per transaction, client first.
  std::pair<double, double> measure(double seconds) {
    SideSeconds spent;
    std::uint64_t transactions = 0;
    const Clock::time_point end = deadline_after(seconds);
    do {
      pair_->exchange(asked_, answer_, sink_, spent);
      ++transactions;
    } while (Clock::now() < end);
    const double n = static_cast<double>(transactions);
    return {spent.client * 1e6 / n * scale_, spent.server * 1e6 / n * scale_};
  }

 private:
  std::uint64_t request_;
  std::uint64_t response_;
  std::unique_ptr<MemoryPairImpl> pair_;
  std::vector<std::byte> asked_;
  std::vector<std::byte> answer_;
  std::vector<std::byte> sink_;
  double scale_ = 1;
};

}  // namespace

std::optional<measure::TransactionCalibration> calibrate_transactions(const Backend& backend,
                                                                      const std::string& suite_name,
                                                                      const TransactionShape& shape,
                                                                      double seconds) {
  const std::optional<SpeedSuite> suite = find_speed_suite(suite_name);
  if (!suite) return std::nullopt;
  const std::size_t record = shape.record_bytes != 0 ? shape.record_bytes : 16384;
  const SuiteContexts contexts = contexts_for_suite(backend, *suite, shape.key_type, shape.group);
  TransactionLoop loop(contexts.client, contexts.server, shape);
  if (loop.cipher() != suite->name) return std::nullopt;
  // Five tries, as long as they take about five times `seconds` together:
  // a slow group's handshakes (ffdhe8192: a third of a second each) get one,
  // so that a server's answer waits on its calibration a second at most.
  constexpr int kTries = 5;
  const double slice = seconds / kTries;
  const Clock::time_point budget = deadline_after(5 * seconds);
  TransactionTries tries;
  for (int i = 0; i < kTries && (i == 0 || Clock::now() < budget); ++i) {
    const auto [client_us, server_us] = loop.measure(slice);
    tries.client_tls_us = std::min(tries.client_tls_us, client_us);
    tries.server_tls_us = std::min(tries.server_tls_us, server_us);
    tries.request.push_back(
        backend.measure_aead(*suite, std::min<std::uint64_t>(record, shape.request_bytes), slice / 2));
    tries.response.push_back(
        backend.measure_aead(*suite, std::min<std::uint64_t>(record, shape.response_bytes), slice / 2));
    if (!shape.key_type) continue;
    const measure::HandshakeFigure h =
        measure_handshakes(contexts.client, contexts.server, *shape.key_type, shape.resumed, slice);
    if (h.suite != suite->name) return std::nullopt;
    tries.client_handshake_us = std::min(tries.client_handshake_us, h.client_us());
    tries.server_handshake_us = std::min(tries.server_handshake_us, h.server_us());
    tries.group = h.group;
  }
  measure::TransactionCalibration out;
  out.suite = suite->name;
  out.aead = suite->aead;
  out.request_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(shape.request_bytes, UINT32_MAX));
  out.response_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(shape.response_bytes, UINT32_MAX));
  out.record_bytes = static_cast<std::uint32_t>(record);
  out.client_crypto_us = aead_us(tries.request, shape.request_bytes, true) +
                         aead_us(tries.response, shape.response_bytes, false);
  out.server_crypto_us = aead_us(tries.request, shape.request_bytes, false) +
                         aead_us(tries.response, shape.response_bytes, true);
  out.client_tls_us = tries.client_tls_us;
  out.server_tls_us = tries.server_tls_us;
  if (shape.key_type) {
    out.key_type = to_string(*shape.key_type);
    out.group = tries.group;
    out.resumed = shape.resumed;
    out.client_handshake_us = tries.client_handshake_us;
    out.server_handshake_us = tries.server_handshake_us;
  }
  return out;
}

measure::MemoryBulkFigure measure_memory_bulk(const Context& client, const Context& server,
                                              const MemoryBulkShape& shape, double seconds) {
  const std::unique_ptr<MemoryPairImpl> made =
      pair_of(client, server, memory_buffer_for(shape.chunk_bytes, shape.record_bytes));
  MemoryPairImpl& pair = *made;
  SideSeconds handshake;
  pair.handshake(handshake);
  if (shape.record_bytes != 0) pair.set_max_record_size(shape.record_bytes);
  const std::vector<std::byte> data(shape.chunk_bytes, std::byte{0x42});
  std::vector<std::byte> sink(shape.read_bytes != 0 ? shape.read_bytes : shape.chunk_bytes);
  // A few chunks first, outside the figure: the buffers allocated, the caches warm.
  SideSeconds spent;
  std::uint64_t reads = 0;
  for (int i = 0; i < 4; ++i)
    pair.transfer(data, sink, spent, reads);
  const SessionInfo info = pair.client_info();
  measure::MemoryBulkFigure figure{info.cipher, info.version, static_cast<std::uint32_t>(shape.chunk_bytes),
                                   static_cast<std::uint32_t>(shape.record_bytes),
                                   static_cast<std::uint32_t>(sink.size())};
  spent = {};
  reads = 0;
  const std::uint64_t tls_before = pair.client_bytes_written();
  const Clock::time_point end = deadline_after(seconds);
  do {
    pair.transfer(data, sink, spent, reads);
    ++figure.writes;
  } while (Clock::now() < end);
  figure.bytes = figure.writes * shape.chunk_bytes;
  figure.tls_bytes = pair.client_bytes_written() - tls_before;
  figure.reads = reads;
  figure.writer_s = spent.client;
  figure.reader_s = spent.server;
  return figure;
}

measure::HandshakeFigure measure_handshakes(const Context& client, const Context& server, KeyType key_type,
                                            bool resumed, double seconds) {
  constexpr std::size_t kBuffer = 64 * 1024;
  measure::HandshakeFigure figure;
  figure.key_type = to_string(key_type);
  figure.resumed = resumed;
  Session session;
  if (resumed) {  // a full handshake first, outside the figure, for the session to resume
    const std::unique_ptr<MemoryPairImpl> first = pair_of(client, server, kBuffer);
    SideSeconds spent;
    first->handshake(spent);
    session = first->session();
    if (!session) throw Error("the in-memory server gave no session to resume");
  }
  SideSeconds spent;
  const Clock::time_point start = Clock::now();
  const Clock::time_point end = deadline_after(seconds);
  Clock::time_point now = start;
  do {
    const std::unique_ptr<MemoryPairImpl> pair = pair_of(client, server, kBuffer, session);
    pair->handshake(spent);
    const SessionInfo info = pair->client_info();
    if (resumed && !info.resumed)
      throw Error("an in-memory handshake that offered a session did not resume it");
    if (resumed) session = pair->session();
    figure.client_bytes += pair->client_bytes_written();
    figure.server_bytes += pair->server_bytes_written();
    if (figure.handshakes++ == 0) {
      figure.group = info.group;
      figure.suite = info.cipher;
      figure.version = info.version;
    }
    now = Clock::now();
  } while (now < end);
  figure.wall_s = seconds_between(start, now);
  figure.client_s = spent.client;
  figure.server_s = spent.server;
  return figure;
}

measure::SessionMemoryFigure measure_session_memory(const Context& client, const Context& server,
                                                    bool release, std::uint32_t sessions) {
  measure::SessionMemoryFigure figure;
  figure.released = release;
  figure.sessions = sessions;
  std::vector<std::unique_ptr<MemoryPairImpl>> pairs;
  pairs.reserve(sessions);
  SideSeconds spent;
  for (std::uint32_t i = 0; i < sessions; ++i) {
    pairs.push_back(pair_of(client, server, 64 * 1024));
    pairs.back()->use_library_buffers(release);
    pairs.back()->handshake(spent);
  }
  figure.suite = pairs.empty() ? std::string() : pairs.front()->client_info().cipher;
  // What freeing each side's connections hands back (their memory halves stay).
  const measure::MemoryReading established = measure::read_memory();
  for (auto& pair : pairs)
    pair->free_client();
  const measure::MemoryReading no_clients = measure::read_memory();
  for (auto& pair : pairs)
    pair->free_server();
  const measure::MemoryReading none = measure::read_memory();
  const auto per_session = [&](const measure::MemoryReading& with, const measure::MemoryReading& without) {
    return measure::per_connection(without, with, sessions).heap_bytes;
  };
  figure.client_bytes = per_session(established, no_clients);
  figure.server_bytes = per_session(no_clients, none);
  return figure;
}

namespace {

// Records sealed one after another by `aead`, numbered from 0 (or record
// 0 opened again and again) until `seconds` pass: the records done, and the seconds.
std::pair<std::uint64_t, double> time_records(RecordSealer& aead, bool seal,
                                              const std::vector<std::uint8_t>& aad,
                                              std::vector<std::uint8_t>& plain,
                                              std::vector<std::uint8_t>& sealed, double seconds) {
  std::uint64_t records = 0;
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point now = start;
  // The clock is read every few records: at 1 KiB a record takes well under a microsecond.
  const std::uint64_t batch = plain.size() >= 16384 ? 4 : 32;
  do {
    for (std::uint64_t i = 0; i < batch; ++i, ++records)
      aead.apply(seal, seal ? records : 0, aad, plain, sealed);
    now = Clock::now();
  } while (now < end);
  return {records, std::chrono::duration<double>(now - start).count()};
}

}  // namespace

measure::AeadFigure aead_figure(const SpeedSuite& suite, std::size_t payload_bytes, double seconds,
                                const std::function<std::unique_ptr<RecordSealer>(bool seal)>& make) {
  const bool tls13 = suite.version == "1.3";
  std::vector<std::uint8_t> plain(payload_bytes, 0x42);
  std::vector<std::uint8_t> sealed(payload_bytes + RecordSealer::kTagBytes);
  const std::vector<std::uint8_t> aad = record_aad(tls13, sealed.size(), payload_bytes);
  measure::AeadFigure figure{suite.name, suite.version, suite.aead,
                             static_cast<std::uint32_t>(payload_bytes)};
  const auto [sealed_records, seal_s] = time_records(*make(true), true, aad, plain, sealed, seconds);
  // The record to open: record 0, sealed by a fresh sealer (some insist on rising numbers).
  make(true)->apply(true, 0, aad, plain, sealed);
  const auto [opened_records, open_s] = time_records(*make(false), false, aad, plain, sealed, seconds);
  figure.records = sealed_records;
  figure.seal_bytes_per_s = static_cast<double>(sealed_records * payload_bytes) / seal_s;
  figure.open_bytes_per_s = static_cast<double>(opened_records * payload_bytes) / open_s;
  return figure;
}

}  // namespace tlscmp::tls
