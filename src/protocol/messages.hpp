#pragma once

// The control protocol: what client and server say to each other, and how it
// is encoded. Pure functions on byte spans; nothing here touches a socket.
//
// Every connection starts with an 8-byte preamble: "TLSCMP", a kind byte
// ('C' control, 'D' data) and the protocol version. A control connection then
// carries frames: a 4-byte big-endian length (1..kMaxFrameBytes) and a JSON
// object with a "type". A data connection (inside TLS for TLS tests) follows
// its preamble with the 16-byte cookie the server handed out for the test
// and its 2-byte big-endian stream index.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "error.hpp"
#include "framing/framing.hpp"
#include "measure/speed.hpp"
#include "mode.hpp"
#include "protocol/datagram.hpp"
#include "protocol/fields.hpp"
#include "run_facts.hpp"
#include "spec/spec.hpp"

namespace tlscmp::protocol {

// The control protocol's version, in every preamble: peers of another one are
// refused in one line. 2: a test request names its kind ("kind") in one
// field of its own. 3: a request carries its test as spec/ describes it,
// the shared part and its kind's part alone ("handshakes" is N, not 2N).
inline constexpr std::uint8_t kVersion = 3;
inline constexpr std::size_t kPreambleBytes = 8;
inline constexpr std::size_t kCookieBytes = 16;
inline constexpr std::size_t kFrameHeaderBytes = 4;
inline constexpr std::size_t kMaxFrameBytes = 1024 * 1024;  // room for kMaxIntervals intervals
inline constexpr std::size_t kMaxStringBytes = 4096;
// A request's ranges are its test's (spec/spec.hpp).
using spec::kMaxChunkBytes;
using spec::kMaxDurationMs;
using spec::kMaxHandshakes;
using spec::kMaxPackets;
using spec::kMaxRateBps;
using spec::kMaxRateTps;
using spec::kMaxRecordBytes;
using spec::kMaxRrBytes;
using spec::kMaxSocketBufferBytes;
using spec::kMaxStreams;
using spec::kMaxTestBytes;
using spec::kMaxTransactions;
using spec::kMinIntervalMs;
using spec::kMinRecordBytes;
inline constexpr double kMaxElapsedUs = 1e13;  // about 4 months
inline constexpr std::size_t kMaxIntervals = 20'000;
inline constexpr std::uint32_t kMaxCpu = 8191;       // the highest CPU number -A may name
inline constexpr std::size_t kStreamIndexBytes = 2;  // after the cookie on a data connection

// Anything a peer sent that does not follow the protocol.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

// control: parameters and results; data: one test's payload; handshake: one
// connection of a handshake test, closed right after the handshake; crr: one
// connection of a crr test, one request and one response, then closed.
// flow: a many-connection test's connection; its data header comes in the
// clear, right after the preamble, and TLS (if any) after it, so that the
// server hands the socket to an event loop before any handshake.
// http: one connection of an http test with --requests-per-connection:
// after its cookie, HTTP requests, then closed.
enum class ConnectionKind : std::uint8_t {
  control = 'C',
  data = 'D',
  handshake = 'H',
  crr = 'N',
  flow = 'F',
  http = 'W'
};

using Cookie = std::array<std::byte, kCookieBytes>;
using Preamble = std::array<std::byte, kPreambleBytes>;

// client -> server: run one test, as the client's flags describe it, over one mode.
struct TestRequest {
  spec::Test test;  // the test as it is: its kind, the shared part and its kind's part on the wire
  Mode mode = Mode::tcp;
  std::uint64_t verify_seed = 0;  // with test.verify: the payload pattern's seed, fresh per comparison
  // TLS, a kind that compares key types: the server certificate's key type
  // ("ecdsa-p384", as tlscmp certs --key-type names them), made for the
  // test; the client asks for it by name (key_type_server_name). "": the
  // server's own certificate.
  std::string key_type;
  // TLS: the client's --cipher ("": the server's defaults), so that the
  // server can serve a suite outside them to this test (optional).
  std::string cipher;
  std::string client_version;  // tlscmp version of the client, for the log
  std::uint32_t round = 0;     // the client's round (1-based), for the log; 0: not said (optional)
  // -A CLIENT,SERVER: the CPU the server pins its data threads to; -1: none (optional).
  int server_cpu = -1;
  // TLS, a kind's variant that releases buffers: both ends set
  // SSL_MODE_RELEASE_BUFFERS (optional).
  bool release_buffers = false;
  // A kind whose connections come from several sources: the client's
  // addresses (-B's list); the server budgets their connections per address.
  // Empty: the control connection's (optional).
  std::vector<std::string> flow_sources;
  // TLS over TCP: the library the server shakes hands with, as --tls-lib
  // names it ("boringssl"); the test's connections that the server tells by
  // their first byte name it too (stacks/tls/). "": the server's default
  // (optional).
  std::string tls_library;
};

// server -> client: the test is accepted; open the data connection with this cookie.
struct TestAccept {
  Cookie cookie{};
  std::string server_version;  // tlscmp version of the server
  std::string tls_library;     // e.g. "OpenSSL 3.0.19 27 Jan 2026": the test's, where the request named one
  std::string
      tls_library_name;   // that library as --tls-lib names it, "openssl" (optional: "" from an older server)
  std::string cpu_model;  // of the server's host
  std::string cpu_features;  // crypto-relevant CPU flags of the server's host, "aes avx2 sha_ni vaes"
  std::string kernel;        // of the server's host, "Linux 6.1.0 x86_64"
  // What the server's TLS accepts, for messages naming both sides' offers.
  std::string tls_versions;          // "TLSv1.2 TLSv1.3"
  std::string tls_ciphers;           // colon-separated
  std::string tls_groups;            // colon-separated, or "library default"
  std::string certificate_key_type;  // the server certificate's key, "ECDSA P-256"; optional on the wire
  bool ktls = false;                 // the server asks for kernel TLS (server --ktls)
  std::string tls_ulps;              // the server kernel's tcp_available_ulp
  // Datagram tests: the server's UDP ports, on the address the control
  // connection reached: one shared by every sender (udp), or one per sender
  // (dtls, each its own DTLS session). Empty for stream tests.
  std::vector<std::uint16_t> udp_ports;
};

// server -> client, datagram tests: the receiver is ready (DTLS sessions
// established); the senders may start.
struct Ready {};

// client -> server instead of a test request: what is your clock? server ->
// client: its wall clock (CLOCK_REALTIME) as it answered. For --start-at and
// --max-skew: a fleet's clients start together only if their clocks agree.
struct ClockRequest {};
struct ClockReply {
  std::int64_t realtime_ns = 0;  // nanoseconds since the Unix epoch
  // The stacks this server cannot serve, each with why, as its refusal of
  // a test would say; a stack that is not there it serves (or the server
  // is older than the stack). On the wire "no_NAME": why, for each.
  std::vector<std::pair<Mode, std::string>> refused;
};

// server -> client: the test cannot run; `reason` says why, in one line.
struct Refusal {
  std::string reason;
};

// The name (SNI) under which a server offers its certificate of `key_type`.
inline std::string key_type_server_name(const std::string& key_type) {
  return key_type + ".key-type.tlscmp.invalid";
}

using Message = std::variant<TestRequest, TestAccept, Refusal, Ready, KindResult, ClockRequest, ClockReply>;

// What a preamble says; the version may be another than ours.
struct PreambleInfo {
  ConnectionKind kind = ConnectionKind::control;
  std::uint8_t version = kVersion;
};

Preamble encode_preamble(ConnectionKind kind);
// Throws ProtocolError: not tlscmp, or an unknown kind. Any version passes.
PreambleInfo parse_preamble(std::span<const std::byte, kPreambleBytes> bytes);
// Throws ProtocolError for another protocol version, naming both.
void check_version(const PreambleInfo& preamble);
// Whether `first`, the first bytes a peer sent (as many as came, up to a
// preamble's), can still be the start of a tlscmp preamble: a reader can
// tell a peer of another protocol from its first byte, not after a timeout.
bool could_begin_preamble(std::span<const std::byte> first);
// Those bytes of a peer that is not tlscmp, for a message: the first line,
// printable and at most 40 bytes, and the protocol they look like where it is
// a known one: "\"HTTP/1.1 400 Bad Request\", which looks like HTTP".
std::string describe_foreign_bytes(std::span<const std::byte> first);
// parse_preamble and check_version in one.
ConnectionKind decode_preamble(std::span<const std::byte, kPreambleBytes> bytes);

// A whole frame: length header and JSON body.
std::vector<std::byte> encode(const Message& message);
// The frame's body alone: the message as one line of JSON (server --results).
std::string body_text(const Message& message);
// The body length announced by a frame header; throws ProtocolError outside 1..kMaxFrameBytes.
std::size_t decode_frame_length(std::span<const std::byte, kFrameHeaderBytes> header);
// A frame body. Throws ProtocolError for anything malformed, out of range or unknown.
Message decode(std::span<const std::byte> body);

// A data connection's header, after its preamble: the test's cookie, then the
// stream's index (2 bytes, big-endian).
inline constexpr std::size_t kDataHeaderBytes = kCookieBytes + kStreamIndexBytes;
using DataHeader = std::array<std::byte, kDataHeaderBytes>;
struct DataHeaderInfo {
  Cookie cookie{};
  std::uint32_t stream = 0;
};
DataHeader encode_data_header(const Cookie& cookie, std::uint32_t stream);
DataHeaderInfo decode_data_header(std::span<const std::byte, kDataHeaderBytes> bytes);

std::string cookie_hex(const Cookie& cookie);

}  // namespace tlscmp::protocol
