#pragma once

// HTTP tests (--http 1.1|2; the workload most TLS carries, as h2load and
// wrk load a web server): -P connections beside the control connection,
// each on a thread of its own at both ends, carrying HTTP requests of the rr
// part's sizes: a GET of /RESP where the request has no body, a POST of REQ
// bytes to /RESP otherwise; the server answers each with RESP bytes of body.
// HTTP/1.1 keeps each connection alive, a request at a time; HTTP/2 keeps
// --streams requests in flight on each connection.
//
//   client                                   server
//   test_request (http_version, rr sizes) -->
//                <------------------------- test_accept (cookie)
//   data connection per connection: preamble, cookie, index (TLS: after the
//   handshake, which is timed on its own)
//                <------------------------- 'R' on each, once all came
//   HTTP on each connection (drive.cpp) until the client has made its
//   requests (-n) or its time is up (-t); then the client ends its sending
//   direction (HTTP/2: GOAWAY first), the server answers with its own end
//   side_result per connection ------------->  (messages: requests)
//                <------------------------- side_result per connection

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "framing/http.hpp"
#include "kinds/exchange.hpp"
#include "kinds/http/results.hpp"
#include "kinds/kind.hpp"
#include "kinds/peer_checks.hpp"
#include "measure/latency.hpp"
#include "protocol/messages.hpp"
#include "session/config.hpp"
#include "session/server_side.hpp"
#include "tls/context.hpp"
#include "transport/stream.hpp"

namespace tlscmp::session {
class InterruptWatch;
}

namespace tlscmp::kinds {

// The largest response a path may ask for; each request's headers are
// held to framing::kMaxHttpHeaderBytes.
inline constexpr std::uint64_t kMaxHttpResponseBytes = spec::kMaxRrBytes;
using framing::http_version_name;

// The version a connection of `mode` carries when `asked` is asked: --http
// 3's tcp and tls variants carry HTTP/2.
inline std::uint32_t http_version_on(std::uint32_t asked, Mode mode) {
  return asked == 3 && !facts(mode).streams ? 2 : asked;
}

// What one connection's client side does.
struct HttpClientSpec {
  std::uint32_t version = 1;  // 1: HTTP/1.1, 2: HTTP/2, 3: HTTP/3 (over QUIC; HTTP/2 elsewhere)
  std::string authority;      // the Host header: "host:port"
  std::string path;           // what each request asks for: "/RESP", or --url's path
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  std::uint64_t requests = 0;  // on this connection; 0: until stop_ns
  std::uint32_t streams = 1;   // HTTP/2: requests in flight
  std::int64_t stop_ns = 0;    // timed: no request starts at or after this
  double rate_rps = 0;         // --rate: this connection's requests a second; 0: closed loop
  std::int64_t start_ns = 0;   // open loop: the first request's scheduled time
  std::chrono::milliseconds idle_timeout{30'000};
};

// What one connection's side measured: rr's figures (transactions are
// requests, bytes_received the bodies' bytes, latency each request's send
// to its response's last byte), each response's first byte, and the bytes
// TCP carried each way over the exchange (headers, framing and TLS records
// with the bodies).
struct HttpSideResult : RrSideResult {
  measure::LatencyHistogram first_byte;  // client: each request's send to its response's first byte
  std::uint64_t wire_sent = 0;
  std::uint64_t wire_received = 0;
  // --requests-per-connection: the connections opened, each one's connect
  // and handshake, full and resumed apart, and how many offered a session
  // the server took.
  std::uint64_t connections = 0;
  std::uint64_t resumed = 0;
  measure::LatencyHistogram handshake_full;
  measure::LatencyHistogram handshake_resumed;
};

// One connection's HTTP, client and server, over a blocking stream
// (drive.cpp: the version's framing, closed or open loop). Never throw
// for network or peer outcomes: a failure is in `error`, with what was
// counted until then. `result` has its window and CPU set around them
// (exchange.cpp's way) by run_http_client/run_http_server. The server's
// take `first`, the bytes already read off the connection, before any more.
void http_client_exchange(Stream& stream, const HttpClientSpec& spec, HttpSideResult& result);
void http_server_exchange(Stream& stream, std::uint32_t version, std::span<const std::byte> first,
                          HttpSideResult& result);

// HTTP/3 (drive3.cpp) on a QUIC connection's streams, `stream` the test's
// first (the server ends it after the client's end).
void http3_client_exchange(StreamGroup& group, const HttpClientSpec& spec, HttpSideResult& result);
void http3_server_exchange(Stream& stream, StreamGroup& group, std::chrono::milliseconds idle,
                           HttpSideResult& result);

// One connection's side (connection.cpp): HTTP/3 where the test asks for
// it and the stream has streams (QUIC), else the version's over the byte
// stream (--http 3's tcp and tls variants: HTTP/2).
HttpSideResult run_http_client(Stream& stream, const HttpClientSpec& spec);
HttpSideResult run_http_server(Stream& stream, std::uint32_t version, std::chrono::milliseconds idle_timeout,
                               std::span<const std::byte> first = {});

// Any HTTP client on tlscmp's port (foreign.cpp): whether a connection's
// first bytes are an HTTP/1.1 request's or HTTP/2's preface, and the
// server's answers to it, for as long as the client keeps it.
bool claims_http(std::span<const std::byte> first);
std::string serve_foreign_http(Stream& stream, std::span<const std::byte> first,
                               const session::ServerConfig& config);

// A request's path: "/RESP", the body size the server answers with.
std::string http_path(std::uint64_t response_bytes);

// Each connection's part of a test whose requests start at `go_ns`: its
// share of -n, its stop time, the version's settings; the path /RESP.
std::vector<HttpClientSpec> http_client_specs(const session::ClientConfig& config, const spec::Test& test,
                                              std::int64_t go_ns);
// The connections' figures as the run's: requests added up, the window
// from the first request to the last response, latencies merged, CPU.
void aggregate_http(HttpRun& run, const std::vector<HttpSideResult>& mine);

// --url (url.cpp): one URL, read as a client reads it (throws UsageError
// naming what is wrong); the variants of the URLs (http:// tcp, https://
// tls); and one run of `mode` against its URL, this side's figures alone.
struct HttpUrl {
  bool tls = false;
  std::string host;
  std::uint16_t port = 0;
  std::string path;       // "/" where the URL has none
  std::string authority;  // "host:port" as given, for the Host header
};
HttpUrl parse_http_url(const std::string& text);
std::vector<session::Variant> url_variants(const session::ClientConfig& config,
                                           const tls::ClientOptions& tls_config);
HttpRun run_http_url(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                     session::InterruptWatch& interrupt);

// --requests-per-connection (reconnect.cpp): a connector's next
// connection, set up (connect and handshake; to a tlscmp server, its
// preamble and cookie after), offering `resume` where it holds a session;
// `us` its connect and handshake. Throws tlscmp::Error.
using HttpDial = std::function<std::unique_ptr<Stream>(const tls::Session& resume, double& us)>;
// -P connectors (`specs`), each opening a connection after another, R
// requests on each; their counts and set-up times in `run`; each
// connector's figures, CPU its thread's, set-up included.
std::vector<HttpSideResult> run_connectors(const session::ClientConfig& config, bool tls,
                                           const std::vector<HttpClientSpec>& specs, const HttpDial& dial,
                                           HttpRun& run);
// Both halves against a tlscmp server (reconnect_client.cpp,
// reconnect_server.cpp): the client's run, and the server's test and each
// of its connections (protocol::ConnectionKind::http), served on the thread
// that accepted it.
HttpRun run_http_reconnecting(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                              session::InterruptWatch& interrupt, int round,
                              measure::Environment& environment);
std::string serve_http_reconnecting(Stream& control, const protocol::TestRequest& request,
                                    session::ServerSide& side);
void serve_http_connection(std::unique_ptr<Stream>& stream, session::PendingTests& pending, double& cpu_mark);

// Client: one run of `mode` (tcp, or tls with `tls`); with --url, against
// its server (run_http_url). Throws tlscmp::Error naming what failed, on
// which side and connection.
HttpRun run_http_test(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                      session::InterruptWatch& interrupt, int round, measure::Environment& environment);

// Server: runs one http test whose request passed the server's caps.
// Returns the line to log; throws tlscmp::Error.
std::string serve_http_test(Stream& control, const protocol::TestRequest& request, session::ServerSide& side);

// Both halves: the peer's result for one connection against this side's,
// neither failed: as many requests answered as responses taken, each side's
// body bytes its count times the size it receives, its window and CPU
// within this side's clock. Returns the line naming the first figure that
// disagrees, or "".
std::string check_http_peer(const PeerJudge& judge, const protocol::TestRequest& request,
                            const SideResult& mine, const SideResult& theirs);

// --requests-per-connection: the counts a side sends at the end (each
// connection's requests on the connection's thread), the peer's against
// this side's: as many connections, resumed ones and requests, the bodies
// their sizes, its window and CPU within this side's clock. The line
// naming the first that disagrees, or "".
std::string check_http_count(const PeerJudge& judge, const protocol::TestRequest& request,
                             const SideResult& mine, const SideResult& theirs);

// Reports (report.cpp).
std::string render_http_header(const measure::TestParameters& parameters);
std::string render_http_runs(const measure::Comparison& comparison);
nlohmann::ordered_json http_runs_json(const measure::Comparison& comparison);
nlohmann::ordered_json http_summary_json(const measure::Comparison& comparison);
std::string render_http_csv(const measure::Comparison& comparison);

// The report page (html.cpp): its section of charts, and its headline's sentences of one result.
std::string http_html_section(render::Page& page);
void http_html_headline(const nlohmann::json& result, std::vector<std::string>& sentences);

// Client flags (flags.cpp): --http, which asks for the kind.
std::vector<CLI::Option*> add_http_flags(CLI::App& command, KindFlags& flags);
void configure_http(const SharedFlags& flags, session::ClientConfig& config);

// This kind's entry in the table of kinds (slice.cpp).
extern const KindSlice kHttpKind;

}  // namespace tlscmp::kinds
