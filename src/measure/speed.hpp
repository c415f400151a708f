#pragma once

// What `tlscmp speed` measures of this host's TLS library, in memory, and
// what a bulk run calibrates with: plain values (tls/speed.hpp fills them).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/spec.hpp"

namespace tlscmp::measure {

inline constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

// Seconds per GiB at `bytes_per_s`; 0 where nothing was measured.
inline double seconds_per_gib(double bytes_per_s) {
  return bytes_per_s > 0 ? kBytesPerGib / bytes_per_s : 0;
}

// A suite's AEAD sealing and opening records of `record_bytes` of payload.
struct AeadFigure {
  std::string suite;    // "TLS_AES_128_GCM_SHA256"
  std::string version;  // "1.3" or "1.2"
  std::string aead;     // "AES-128-GCM"
  std::uint32_t record_bytes = 0;
  std::uint64_t records = 0;  // sealed, and as many opened
  double seal_bytes_per_s = 0;
  double open_bytes_per_s = 0;
};

// Bulk TLS in memory: a client writing chunks, a server reading them, each
// side's time in its own calls.
struct MemoryBulkFigure {
  std::string suite;    // as negotiated
  std::string version;  // "TLSv1.3"
  std::uint32_t chunk_bytes = 0;
  std::uint32_t record_bytes = 0;  // the writer's largest record's plaintext
  std::uint32_t read_bytes = 0;    // the reader's read call
  std::uint64_t bytes = 0;         // payload moved
  std::uint64_t tls_bytes = 0;     // record bytes the writer wrote
  std::uint64_t writes = 0;        // SSL_write calls
  std::uint64_t reads = 0;         // SSL_read calls
  double writer_s = 0;             // seconds in SSL_write
  double reader_s = 0;             // seconds in SSL_read

  double writer_bytes_per_s() const { return writer_s > 0 ? static_cast<double>(bytes) / writer_s : 0; }
  double reader_bytes_per_s() const { return reader_s > 0 ? static_cast<double>(bytes) / reader_s : 0; }
};

// Handshakes in memory, one after another, with one key type and group.
struct HandshakeFigure {
  std::string key_type;  // the server certificate's, "ecdsa-p256"
  std::string group;     // as negotiated, "X25519"
  std::string suite;     // as negotiated
  std::string version;   // "TLSv1.3"
  bool resumed = false;  // every one of them resumed the session before
  std::uint64_t handshakes = 0;
  double wall_s = 0;               // the loop, connection set-up and teardown included
  double client_s = 0;             // seconds in the client's handshake calls
  double server_s = 0;             // seconds in the server's
  std::uint64_t client_bytes = 0;  // TLS bytes the clients wrote, all handshakes
  std::uint64_t server_bytes = 0;

  double per_s() const { return wall_s > 0 ? static_cast<double>(handshakes) / wall_s : 0; }
  double client_us() const { return handshakes > 0 ? client_s * 1e6 / static_cast<double>(handshakes) : 0; }
  double server_us() const { return handshakes > 0 ? server_s * 1e6 / static_cast<double>(handshakes) : 0; }
};

// The heap an established, idle in-memory connection holds on each side
// (none under a sanitizer, whose allocator glibc's counters do not see).
struct SessionMemoryFigure {
  std::string suite;      // as negotiated
  bool released = false;  // idle buffers handed back (tls-release)
  std::uint32_t sessions = 0;
  std::optional<double> client_bytes;  // per connection
  std::optional<double> server_bytes;
};

// What one side of a bulk TLS run calibrates with, on its own host, for the
// run's suite, chunk and record size: the AEAD at the record size, and TLS
// in memory (tls/speed.hpp), so that its extra CPU over TCP can be split.
struct TlsCalibration {
  std::string suite;  // as negotiated
  std::string aead;   // "AES-128-GCM"
  std::uint32_t chunk_bytes = 0;
  std::uint32_t record_bytes = 0;  // the sender's records' plaintext
  std::uint32_t read_bytes = 0;    // the receiver's read call
  double seal_bytes_per_s = 0;     // the AEAD sealing records of record_bytes
  double open_bytes_per_s = 0;
  double writer_s_per_gib = 0;  // TLS in memory: seconds in SSL_write per GiB
  double reader_s_per_gib = 0;  // and in SSL_read

  // Its fields, for the wire (protocol/fields.hpp): rates finite and at most
  // a terabyte a second.
  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& c) {
    constexpr auto n = [](auto v) { return static_cast<double>(v); };
    w.field("suite", c.suite);
    w.field("aead", c.aead);
    w.field("chunk_bytes", c.chunk_bytes, n(spec::kMaxChunkBytes), 1);
    w.field("record_bytes", c.record_bytes, n(spec::kMaxRecordBytes), n(spec::kMinRecordBytes));
    w.field("read_bytes", c.read_bytes, n(spec::kMaxChunkBytes), 1);
    w.field("seal_bytes_per_s", c.seal_bytes_per_s, 1e12);
    w.field("open_bytes_per_s", c.open_bytes_per_s, 1e12);
    w.field("writer_s_per_gib", c.writer_s_per_gib, 1e6);
    w.field("reader_s_per_gib", c.reader_s_per_gib, 1e6);
  }
};

// What one side of a request/response (rr) or connection-per-transaction
// (crr) TLS run calibrates with on its own host, for the run's suite and
// message sizes: one transaction's AEAD work and its TLS calls in memory,
// each side's (the client seals the request and opens the response; the
// server opens the one and seals the other), and for crr a handshake in
// memory with the run's key type, group and resumption.
struct TransactionCalibration {
  std::string suite;  // as negotiated
  std::string aead;   // "AES-128-GCM"
  std::uint32_t request_bytes = 0;
  std::uint32_t response_bytes = 0;
  std::uint32_t record_bytes = 0;  // the records' largest plaintext
  double client_crypto_us = 0;     // the AEAD alone, per transaction
  double server_crypto_us = 0;
  double client_tls_us = 0;  // TLS in memory: the client's SSL_write and SSL_read per transaction
  double server_tls_us = 0;
  // crr: a handshake in memory, each side's CPU, with these.
  std::string key_type;  // as tlscmp certs names it, "ecdsa-p256"
  std::string group;     // "X25519"
  bool resumed = false;
  std::optional<double> client_handshake_us;
  std::optional<double> server_handshake_us;

  double crypto_us(bool client) const { return client ? client_crypto_us : server_crypto_us; }
  double tls_us(bool client) const { return client ? client_tls_us : server_tls_us; }
  std::optional<double> handshake_us(bool client) const {
    return client ? client_handshake_us : server_handshake_us;
  }

  // Its fields, for the wire and for -J (protocol/fields.hpp): each figure
  // finite and at most a hundred seconds a transaction; the handshake's
  // key type, group and resumption null where there was no handshake.
  template <typename Walk, typename Self>
  static void walk(Walk& w, Self& c) {
    constexpr auto n = [](auto v) { return static_cast<double>(v); };
    constexpr double kMaxUs = 1e8;
    w.field("suite", c.suite);
    w.field("aead", c.aead);
    w.field("request_bytes", c.request_bytes, n(spec::kMaxRrBytes), 1);
    w.field("response_bytes", c.response_bytes, n(spec::kMaxRrBytes), 1);
    w.field("record_bytes", c.record_bytes, n(spec::kMaxRecordBytes), n(spec::kMinRecordBytes));
    w.field("client_crypto_us", c.client_crypto_us, kMaxUs);
    w.field("server_crypto_us", c.server_crypto_us, kMaxUs);
    w.field("client_tls_us", c.client_tls_us, kMaxUs);
    w.field("server_tls_us", c.server_tls_us, kMaxUs);
    const bool handshake = c.client_handshake_us.has_value();
    w.field_if(handshake, "key_type", c.key_type);
    w.field_if(handshake, "group", c.group);
    w.field_if(handshake, "resumed", c.resumed);
    w.field("client_handshake_us", c.client_handshake_us, kMaxUs);
    w.field("server_handshake_us", c.server_handshake_us, kMaxUs);
  }
};

// Where one side's extra CPU for TLS over TCP goes in an rr run (per
// transaction) or a crr run (per connection), in microseconds: the
// handshake in memory (crr), the transaction's crypto and record layer in
// memory, and the rest (the socket path: more system calls and bytes, and
// for crr the close). The rest may come out negative from noise.
struct UnitSplit {
  bool client = true;                  // the client's side (else the server's)
  TransactionCalibration calibration;  // the side's, of the variant's last run that had one
  double tcp_us = 0;                   // this side's CPU per unit, the baseline's median
  double tls_us = 0;                   // the variant's median
  double extra_us = 0;                 // the median over rounds of the variant's less the same round's TCP
  std::optional<double> handshake_us;
  double crypto_us = 0;
  double record_layer_us = 0;
  double socket_us = 0;  // extra less the parts above
};

// Where one side's extra CPU for TLS over TCP goes in a bulk run, in
// seconds per GiB moved: what the suite's AEAD costs at the run's record
// size (crypto), what TLS in memory costs beyond it (the record layer), and
// the rest (the socket path: more system calls and copies). The parts add
// up to the extra by construction; the rest may come out negative from
// noise, and is shown so.
struct CostSplit {
  bool sender = true;  // this side sent the payload (else received it)
  std::string suite;
  std::string aead;
  double aead_bytes_per_s = 0;  // this host's AEAD, sealing (sender) or opening, at the run's record
  double tcp_s_per_gib = 0;     // this side, the baseline's median
  double tls_s_per_gib = 0;     // this side, the variant's median
  double extra_s_per_gib = 0;   // the median over rounds of the variant's less the same round's TCP
  double crypto_s_per_gib = 0;
  double record_layer_s_per_gib = 0;
  double socket_s_per_gib = 0;    // extra less crypto less record layer
  double rate_share_of_aead = 0;  // the run's MB/s (median) over the AEAD's
  std::uint32_t chunk_bytes = 0;
  std::uint32_t record_bytes = 0;
  double records_per_chunk = 0;
  std::optional<double> tls_calls_per_chunk;  // this side's write (sender) or read system calls
  std::optional<double> tcp_calls_per_chunk;
};

// One run's split on one side: its extra over the same round's TCP run,
// less the side's crypto and record layer (the calibration's), the rest.
struct RunSplit {
  double crypto_s_per_gib = 0;
  double record_layer_s_per_gib = 0;
  double socket_s_per_gib = 0;
};

// Everything one `tlscmp speed` measured.
struct SpeedResults {
  std::string library;      // the backend measured, as --tls-lib names it: "openssl"
  std::string tls_library;  // "OpenSSL 3.0.19 27 Jan 2026"
  double seconds_per_figure = 0;
  std::vector<AeadFigure> aead;
  std::vector<MemoryBulkFigure> bulk;
  std::vector<HandshakeFigure> handshakes;
  std::vector<SessionMemoryFigure> memory;
  std::vector<std::string> notes;  // what could not be measured here, and why
};

}  // namespace tlscmp::measure
