#pragma once

// The one description of a test: what the client's flags set, what a test
// request carries to the server as it is, and what the result records as
// it is. A test has its kind, the settings several kinds read (shared), and
// one part per kind; a kind reads the shared part and its own (crr also
// rr's: its transaction is an rr one). for_each_field() names every field
// once, with its key, its flag and its range: the wire's encoder and
// decoder, the result's "test" object, compare's settings and the client's
// refusals all walk it. Nothing here touches a socket or a flag parser.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "framing/framing.hpp"
#include "mode.hpp"

namespace tlscmp {

// What a test measures; each kind's folder under kinds/ runs it, and its
// part of spec::Test below holds its settings. A test request names its
// kind, and nothing infers it from other fields.
//   stream: bulk bytes (-n, -t, -P, --bidir); handshake: --handshakes and
//   --compare-groups alone; datagram: --mode udp or dtls; rr: --rr; crr: --crr;
//   flows: --flows N, many connections on a few event loops at each end;
//   http: --http 1.1|2, HTTP requests and responses of the rr sizes.
enum class TestKind : std::uint8_t { stream, handshake, datagram, rr, crr, flows, http };
inline constexpr std::array kAllKinds{TestKind::stream, TestKind::handshake, TestKind::datagram, TestKind::rr,
                                      TestKind::crr,    TestKind::flows,     TestKind::http};

inline const char* to_string(TestKind kind) {
  switch (kind) {
    case TestKind::handshake:
      return "handshake";
    case TestKind::datagram:
      return "datagram";
    case TestKind::rr:
      return "rr";
    case TestKind::crr:
      return "crr";
    case TestKind::flows:
      return "flows";
    case TestKind::http:
      return "http";
    case TestKind::stream:
      break;
  }
  return "stream";
}
// rr and crr: transactions of a request and a response, of the rr sizes.
inline bool is_request_response(TestKind kind) {
  return kind == TestKind::rr || kind == TestKind::crr;
}

}  // namespace tlscmp

namespace tlscmp::spec {

// What a request may ask for; the wire's decoder and the client's flags hold to them.
inline constexpr std::uint64_t kMaxTestBytes = std::uint64_t{1} << 50;  // 1 PiB
inline constexpr std::uint32_t kMaxChunkBytes = 16 * 1024 * 1024;
inline constexpr std::uint64_t kMaxDurationMs = 24ull * 3600 * 1000;  // a day
inline constexpr std::uint64_t kMinIntervalMs = 100;
inline constexpr std::uint32_t kMinRecordBytes = 512;
inline constexpr std::uint32_t kMaxRecordBytes = 16384;
inline constexpr std::uint32_t kMaxHandshakes = 100'000;  // connections: full and resumed, N each
inline constexpr std::uint32_t kMaxSocketBufferBytes = 1u << 30;
inline constexpr std::uint32_t kMaxStreams = 128;
inline constexpr std::uint64_t kMaxPackets = std::uint64_t{1} << 40;  // per sender, in a datagram test
inline constexpr std::uint64_t kMaxRateBps = std::uint64_t{1} << 50;  // bits per second, per sender
inline constexpr std::uint32_t kMaxHttpStreams = 1024;  // HTTP/2 streams in flight on a connection
inline constexpr std::uint64_t kMaxRrBytes = std::uint64_t{1} << 30;  // an rr request or response: 1 GiB
inline constexpr std::uint64_t kMaxTransactions = std::uint64_t{1} << 40;
inline constexpr double kMaxRateTps = 1e9;
// Connections of one many-connection test: a data header's index holds them.
inline constexpr std::uint32_t kMaxFlows = 65'535;
inline constexpr std::uint32_t kMaxFlowThreads =
    1024;  // the wire's limit; the schedule's is kinds' kMinRequestSpacingUs

// How a crr client closes each connection: reset (SO_LINGER 0, no
// TIME_WAIT) or fin (an orderly close; TIME_WAIT on the client).
enum class Close : std::uint8_t { reset, fin };
inline const char* to_string(Close close) {
  return close == Close::fin ? "fin" : "reset";
}

// Bulk streams (kind stream).
struct Stream {
  Direction direction = Direction::client_to_server;  // -R: the server sends
  std::uint64_t bytes = 0;                            // -n (the client's default: 1 GiB); 0 with -t
  bool no_delay = false;                              // -N: TCP_NODELAY during the transfer
  // Messages (seeds/000): with msg_size > 0 the payload is messages of that
  // size, behind 4-byte lengths (len4) or back to back (raw); bytes is then
  // the payload, rounded up to whole messages.
  framing::Framing framing = framing::Framing::raw;
  std::uint64_t msg_size = 0;
  std::uint64_t max_msg = framing::kMaxMessageBytes;  // the receiver refuses longer length prefixes
  std::uint32_t read_size = 0;                        // the receiver's read call; 0: chunk_bytes
  bool bidir = false;                                 // odd-numbered streams go the other way

  bool operator==(const Stream&) const = default;
};

// N full and N resumed TLS handshakes, alternating (kind handshake).
struct Handshake {
  std::uint32_t handshakes = 0;  // N

  bool operator==(const Handshake&) const = default;
};

// Datagrams from `streams` senders to the server's receiver (kind datagram),
// chunk_bytes each, `packets` per sender or for duration_ms.
struct Datagram {
  std::uint64_t packets = 0;
  std::uint64_t rate_bps = 0;  // per sender; 0: as fast as it can
  bool gso = false;            // the senders hand the kernel segmented buffers (UDP_SEGMENT)

  bool operator==(const Datagram&) const = default;
};

// Transactions of a request and a response (kinds rr and crr): on each of
// `streams` connections (rr), or a connection each (crr, `streams`
// connectors); `transactions` in all, or for duration_ms.
struct Rr {
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  std::uint64_t transactions = 0;
  double rate_tps = 0;         // rr: open loop, over all connections; 0: closed loop
  bool stream_per_tx = false;  // rr over QUIC: a stream per transaction, as HTTP/3 (else one for all)

  bool operator==(const Rr&) const = default;
};

// A connection per transaction (kind crr), with rr's sizes and counts.
struct Crr {
  Close close = Close::reset;
  bool compare_key_types = false;  // a tls variant per server key type, made by the server for the test

  bool operator==(const Crr&) const = default;
};

// What each flow of a many-connection test does: a bulk stream (the stream
// part's direction and -n bytes in all), rr transactions of the rr part's
// sizes, or crr: a connection per transaction, closed as the crr part says.
enum class FlowWork : std::uint8_t { stream, rr, crr, http };
inline const char* to_string(FlowWork work) {
  switch (work) {
    case FlowWork::stream:
      return "stream";
    case FlowWork::http:
      return "http";
    case FlowWork::crr:
      return "crr";
    case FlowWork::rr:
      break;
  }
  return "rr";
}

// Many connections (kind flows): `flows` of them, held on `threads` event
// loops at each end (0: each end one per CPU it may use), each doing `work`.
struct Flows {
  FlowWork work = FlowWork::rr;
  std::uint32_t flows = 0;    // --flows N
  std::uint32_t threads = 0;  // --threads T

  bool operator==(const Flows&) const = default;
};

// HTTP requests (kind http) of the rr part's sizes and counts, on each of
// `streams` connections: HTTP/1.1 keep-alive, one request at a time, or
// HTTP/2 with `http_streams` requests in flight on each connection.
struct Http {
  std::uint32_t version = 0;  // 1: HTTP/1.1, 2: HTTP/2
  std::uint32_t streams = 1;  // HTTP/2: concurrent streams per connection (--streams)
  // A new connection after this many requests (1: one a request, as crr); 0: kept alive.
  std::uint32_t requests_per_connection = 0;
  std::uint32_t resume_percent = 0;  // of those new connections, the share that offer the last session

  bool operator==(const Http&) const = default;
};

struct Test {
  TestKind kind = TestKind::stream;
  // Shared: each kind's checks say which of these it takes.
  std::uint64_t duration_ms = 0;  // -t: how long the sender sends (stream, datagram, rr, crr); 0: a count
  std::uint32_t chunk_bytes = 64 * 1024;  // -l: bytes per write and read; in datagram tests per datagram
  std::uint64_t interval_ms = 0;          // -i: the receiver's interval reports; 0: none
  std::uint32_t streams = 1;              // -P: data connections, senders or connectors
  std::uint32_t sndbuf_bytes = 0;         // SO_SNDBUF on both ends; 0: the kernel's default
  std::uint32_t rcvbuf_bytes = 0;         // SO_RCVBUF on both ends; 0: the kernel's default
  bool verify = false;                    // seeded payload, checked byte by byte by the receiver
  std::uint32_t record_size = 0;          // TLS: the sender's largest record plaintext; 0: 16384
  bool compare_groups = false;            // handshake, crr: the client runs a variant per key exchange group
  Stream stream;
  Handshake handshake;
  Datagram datagram;
  Rr rr;
  Crr crr;
  Flows flows;
  Http http;

  std::chrono::milliseconds duration() const { return std::chrono::milliseconds(duration_ms); }
  std::chrono::milliseconds interval() const { return std::chrono::milliseconds(interval_ms); }
  double duration_s() const { return static_cast<double>(duration_ms) / 1e3; }
  double interval_s() const { return static_cast<double>(interval_ms) / 1e3; }
  // How many of the streams go the test's way, as stream 0 does: all of
  // them, or with --bidir the even-numbered ones.
  std::uint32_t forward_streams() const { return stream.bidir ? (streams + 1) / 2 : streams; }
  bool operator==(const Test&) const = default;
};

// Which part of a test a field is in.
// A kind's own part is the one of its name, in the order of TestKind.
enum class Part : std::uint8_t { shared, stream, handshake, datagram, rr, crr, flows, http };
inline const char* to_string(Part part) {
  switch (part) {
    case Part::stream:
      return "stream";
    case Part::handshake:
      return "handshake";
    case Part::datagram:
      return "datagram";
    case Part::rr:
      return "rr";
    case Part::crr:
      return "crr";
    case Part::flows:
      return "flows";
    case Part::http:
      return "http";
    case Part::shared:
      break;
  }
  return "shared";
}

// Whether a test of `kind` reads `part`: the shared part and its own; crr
// and http rr's too, and flows the parts of the work its flows do (stream,
// rr, crr, http).
inline bool reads(TestKind kind, Part part) {
  switch (part) {
    case Part::shared:
      return true;
    case Part::stream:
      return kind == TestKind::stream || kind == TestKind::flows;
    case Part::handshake:
      return kind == TestKind::handshake;
    case Part::datagram:
      return kind == TestKind::datagram;
    case Part::rr:
      return is_request_response(kind) || kind == TestKind::flows || kind == TestKind::http;
    case Part::crr:
      return kind == TestKind::crr || kind == TestKind::flows;
    case Part::flows:
      return kind == TestKind::flows;
    case Part::http:
      return kind == TestKind::http || kind == TestKind::flows;
  }
  return false;
}

// One field of a test, as for_each_field() names it.
struct Field {
  const char* key;   // on the wire and in the result's "test" object (with milliseconds: "_s" there)
  const char* flag;  // the client's flag that sets it, for messages
  Part part;
  double least = 0;  // the range a request may ask for (numbers)
  double most = 0;
  bool or_zero = false;       // 0 (none) is allowed below `least`
  bool agree = true;          // compare: results whose values differ measured different things
  bool milliseconds = false;  // the result says it in seconds
};

// The field's key in a result's "test" object: the wire's, "_s" for "_ms"
// where it is in milliseconds (duration_s).
std::string result_key(const Field& field);

// Calls visit(field, value...) for every field, with that field of each of
// the tests `t` (Tests, or const Tests): shared first, then each kind's
// part, in the order of TestKind.
template <typename Visit, typename... T>
void for_each_field_of(Visit&& visit, T&... t) {
  const auto n = [](auto v) { return static_cast<double>(v); };
  visit(Field{"duration_ms", "-t", Part::shared, 0, n(kMaxDurationMs), false, true, true}, t.duration_ms...);
  visit(Field{"chunk_bytes", "-l", Part::shared, 1, n(kMaxChunkBytes)}, t.chunk_bytes...);
  visit(Field{"interval_ms", "-i", Part::shared, n(kMinIntervalMs), n(kMaxDurationMs), true, false, true},
        t.interval_ms...);
  visit(Field{"streams", "-P", Part::shared, 1, n(kMaxStreams)}, t.streams...);
  visit(Field{"sndbuf_bytes", "--sndbuf", Part::shared, 0, n(kMaxSocketBufferBytes)}, t.sndbuf_bytes...);
  visit(Field{"rcvbuf_bytes", "--rcvbuf", Part::shared, 0, n(kMaxSocketBufferBytes)}, t.rcvbuf_bytes...);
  visit(Field{"verify", "--verify", Part::shared}, t.verify...);
  visit(Field{"record_size", "--record-size", Part::shared, n(kMinRecordBytes), n(kMaxRecordBytes), true},
        t.record_size...);
  visit(Field{"compare_groups", "--compare-groups", Part::shared}, t.compare_groups...);
  visit(Field{"direction", "-R", Part::stream}, t.stream.direction...);
  visit(Field{"bytes", "-n", Part::stream, 0, n(kMaxTestBytes)}, t.stream.bytes...);
  visit(Field{"no_delay", "-N", Part::stream}, t.stream.no_delay...);
  visit(Field{"framing", "--framing", Part::stream}, t.stream.framing...);
  visit(Field{"msg_size", "--msg-size", Part::stream, 0, n(framing::kMaxMessageBytes)}, t.stream.msg_size...);
  visit(Field{"max_msg", "--max-msg", Part::stream, 1, n(framing::kMaxMessageBytes), false, false},
        t.stream.max_msg...);
  visit(Field{"read_size", "--read-size", Part::stream, 0, n(kMaxChunkBytes)}, t.stream.read_size...);
  visit(Field{"bidir", "--bidir", Part::stream}, t.stream.bidir...);
  visit(Field{"handshakes", "--handshakes", Part::handshake, 0, n(kMaxHandshakes / 2)},
        t.handshake.handshakes...);
  visit(Field{"packets", "-n", Part::datagram, 0, n(kMaxPackets)}, t.datagram.packets...);
  visit(Field{"rate_bps", "-b", Part::datagram, 0, n(kMaxRateBps)}, t.datagram.rate_bps...);
  visit(Field{"gso", "--gso", Part::datagram}, t.datagram.gso...);
  // 0: no transactions, in a flows test of bulk streams; rr and crr refuse it.
  visit(Field{"rr_request_bytes", "--rr", Part::rr, 1, n(kMaxRrBytes), true}, t.rr.request_bytes...);
  visit(Field{"rr_response_bytes", "--rr", Part::rr, 1, n(kMaxRrBytes), true}, t.rr.response_bytes...);
  visit(Field{"transactions", "-n", Part::rr, 0, n(kMaxTransactions)}, t.rr.transactions...);
  visit(Field{"rate_tps", "--rate", Part::rr, 0, kMaxRateTps}, t.rr.rate_tps...);
  visit(Field{"stream_per_tx", "--stream-per-tx", Part::rr}, t.rr.stream_per_tx...);
  visit(Field{"crr_close", "--close", Part::crr}, t.crr.close...);
  visit(Field{"compare_key_types", "--compare-key-types", Part::crr}, t.crr.compare_key_types...);
  visit(Field{"flow_work", "--flows", Part::flows}, t.flows.work...);
  visit(Field{"flows", "--flows", Part::flows, 1, n(kMaxFlows)}, t.flows.flows...);
  visit(Field{"flow_threads", "--threads", Part::flows, 0, n(kMaxFlowThreads)}, t.flows.threads...);
  // 0: no HTTP (a flows test of another work); the http kind checks it has one.
  visit(Field{"http_version", "--http", Part::http, 1, 3, true}, t.http.version...);
  visit(Field{"http_streams", "--streams", Part::http, 1, n(kMaxHttpStreams)}, t.http.streams...);
  visit(Field{"requests_per_connection", "--requests-per-connection", Part::http, 0, 1e9},
        t.http.requests_per_connection...);
  visit(Field{"resume_percent", "--resume-ratio", Part::http, 0, 100}, t.http.resume_percent...);
}

// visit(field, value) for every field of `test`.
template <typename T, typename Visit>
void for_each_field(T& test, Visit&& visit) {
  for_each_field_of(visit, test);
}

// The first field, in for_each_field's order, that is off its default in a
// part `test`'s kind does not read (--bidir in an rr test), or none; and its flag.
std::optional<Field> unread_field(const Test& test);
const char* unread_flag(const Test& test);
// The field a flag sets ("--close"), or none.
std::optional<Field> field_of_flag(const std::string& flag);
// The kind whose own part `part` is; none for the shared part.
std::optional<TestKind> kind_of(Part part);

// A test that cannot run as described; what() says why in one line, naming
// the client's flags.
class Invalid : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The enums' names, as the wire and the result write them; false for an unknown name.
bool parse(const std::string& text, Direction& value);
bool parse(const std::string& text, framing::Framing& value);
bool parse(const std::string& text, Close& value);
bool parse(const std::string& text, FlowWork& value);

}  // namespace tlscmp::spec
