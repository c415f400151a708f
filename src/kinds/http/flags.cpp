// The http kind's client flags (--http 1.1|2, which asks for it;
// --request and --response SIZE), and what an HTTP test makes of the flags
// every kind shares: -n counts requests over all connections, -t is 10 s
// unless given, --streams is HTTP/2's requests in flight on a connection.

#include <fmt/format.h>
#include <algorithm>

#include "kinds/flags.hpp"
#include "kinds/http/http.hpp"
#include "kinds/transactions.hpp"
#include "spec/size.hpp"

namespace tlscmp::kinds {

namespace {
constexpr std::uint64_t kDefaultResponseBytes = 4096;
}

namespace {

// --url's servers: at most one of each scheme, the first's host the run's;
// the modes theirs; the path each request asks for theirs, not /RESP.
void configure_urls(session::ClientConfig& c) {
  if (!c.host.empty())
    throw UsageError(
        fmt::format("--url with HOST {}: the URL names the server; give one or the other", c.host));
  if (c.urls.size() > 2) throw UsageError("--url: at most two, one http:// (tcp) and one https:// (tls)");
  c.modes.clear();
  for (const std::string& text : c.urls) {
    const HttpUrl url = parse_http_url(text);
    const Mode mode = url.tls ? Mode::tls : Mode::tcp;
    if (std::find(c.modes.begin(), c.modes.end(), mode) != c.modes.end())
      throw UsageError(
          fmt::format("--url: two {} URLs; give one http:// (tcp) and one https:// (tls) at most",
                      url.tls ? "https://" : "http://"));
    c.modes.push_back(mode);
  }
  std::sort(c.modes.begin(), c.modes.end());
  const HttpUrl first = parse_http_url(c.urls.front());
  c.host = first.host;
  c.port = first.port;
  c.test.rr.response_bytes = 0;  // whatever the URL's path answers
}

// HTTP over QUIC is HTTP/3, and --http 3 needs quic among the modes (the
// others carry HTTP/2 beside it); it runs on -P connections of its own.
void configure_http3(const session::ClientConfig& c) {
  const bool quic = std::any_of(c.modes.begin(), c.modes.end(), [](Mode m) { return facts(m).streams; });
  if (c.test.http.version != 3) {
    if (quic)
      throw UsageError(
          fmt::format("--http {} --mode quic: HTTP over QUIC is HTTP/3; give --http 3 (tcp and tls "
                      "then carry HTTP/2)",
                      http_version_name(c.test.http.version) + 5));
    return;
  }
  if (!quic)
    throw UsageError(
        "--http 3 runs over quic: add --mode quic, or --mode tcp,tls,quic to hold it to HTTP/2 over TCP and "
        "TLS");
  if (!c.urls.empty())
    throw UsageError(
        "--url with --http 3: --url loads HTTP/1.1 and 2 servers; HTTP/3 runs against a tlscmp server");
  if (c.test.http.requests_per_connection != 0)
    throw UsageError(
        "--requests-per-connection with --http 3: new connections per request run HTTP/1.1 and 2; leave it "
        "out "
        "for HTTP/3 kept alive");
}

}  // namespace

std::vector<CLI::Option*> add_http_flags(CLI::App& cmd, KindFlags& flags) {
  spec::Test& t = flags.test;
  CLI::Option* http =
      cmd.add_option_function<std::string>(
             "--http",
             [&flags, &t](const std::string& text) {
               if (text == "1.1" || text == "1") {
                 t.http.version = 1;
               } else if (text == "2") {
                 t.http.version = 2;
               } else if (text == "3") {
                 t.http.version = 3;
               } else {
                 throw UsageError(
                     fmt::format("--http {}: give 1.1 (HTTP/1.1, keep-alive), 2 (HTTP/2, --streams in "
                                 "flight) or 3 (HTTP/3 "
                                 "over quic, HTTP/2 over tcp and tls)",
                                 text));
               }
               if (t.rr.response_bytes == 0) t.rr.response_bytes = kDefaultResponseBytes;
               flags.ask(TestKind::http);
             },
             "Instead of bulk runs: HTTP requests on each of -P connections, HTTP/1.1 kept alive, HTTP/2 "
             "(--streams requests in flight) or HTTP/3 (over --mode quic; HTTP/2 over tcp and tls), a GET of "
             "/RESP (4K unless --response) or a POST of --request "
             "bytes; -t seconds (default 10) or -n requests in all")
          ->type_name("1.1|2|3");
  // The sizes are rr's fields, which --rr sets: given without --http, CLI11 says "--request requires --http".
  return {
      http,
      cmd.add_option_function<std::string>(
             "--requests-per-connection",
             [&t](const std::string& text) {
               t.http.requests_per_connection = static_cast<std::uint32_t>(
                   spec::parse_count(text, "--requests-per-connection", 1, 1'000'000'000, "requests"));
             },
             "With --http: a new connection (TCP connect and TLS handshake) after this many requests; "
             "1: a connection per request, as --crr (default: each of -P connections kept alive)")
          ->type_name("R")
          ->needs(http),
      cmd.add_option_function<double>(
             "--resume-ratio",
             [&t](double ratio) {
               if (!(ratio >= 0 && ratio <= 1))
                 throw UsageError(
                     fmt::format("--resume-ratio {:g}: give a share from 0 to 1 (0.8: 80% resumed)", ratio));
               t.http.resume_percent = static_cast<std::uint32_t>(ratio * 100 + 0.5);
             },
             "With --requests-per-connection: the share of new TLS connections that offer the last session "
             "(resumed handshakes), the rest full (default 0)")
          ->type_name("SHARE")
          ->needs(http),
      cmd.add_option(
             "--url", flags.urls,
             "With --http: load this HTTP server of another make (nginx) instead of a tlscmp server: an "
             "http:// URL the tcp variant, an https:// one the tls variant (give both to compare them); "
             "every request a GET of its path")
          ->type_name("URL")
          ->delimiter(',')
          ->needs(http),
      cmd.add_option_function<std::string>(
             "--request",
             [&t](const std::string& text) {
               t.rr.request_bytes = spec::parse_size(text, "--request", 0, spec::kMaxRrBytes);
             },
             "With --http: each request a POST of this many bytes of body (default 0: a GET)")
          ->type_name("SIZE")
          ->needs(http),
      cmd.add_option_function<std::string>(
             "--response",
             [&t](const std::string& text) {
               t.rr.response_bytes = spec::parse_size(text, "--response", 0, spec::kMaxRrBytes);
             },
             "With --http: each response this many bytes of body, the path asked for (/SIZE; default 4K)")
          ->type_name("SIZE")
          ->needs(http),
  };
}

void configure_http(const SharedFlags& flags, session::ClientConfig& c) {
  const auto refuse = [](const char* flag) {
    throw UsageError(fmt::format("{} is for bulk runs; {}", flag, kHttpKind.takes));
  };
  if (c.test.stream.no_delay) throw UsageError("-N: http tests always set TCP_NODELAY; leave -N out");
  if (!flags.length.empty()) refuse("-l");
  if (c.test.compare_groups) refuse("--compare-groups");
  configure_transactions(flags, c, "requests", "connections");
  if (c.test.rr.rate_tps > 0) {
    if (flags.time_s == 0)
      throw UsageError("--rate needs -t: an open-loop run goes for a time, not a count (-n)");
    if (const std::string problem = schedule_problem(c.test.rr.rate_tps, c.test.streams); !problem.empty())
      throw UsageError("--rate: " + problem);
    if (c.quic_streams > 1)
      throw UsageError(
          "--streams with --rate: in an open loop the schedule sets the requests in flight; leave --streams "
          "out");
  }
  configure_http3(c);
  // --streams: HTTP/2's (and 3's) requests in flight on each connection, not QUIC's streams.
  if (c.quic_streams > 1 && c.test.http.version < 2)
    throw UsageError(
        fmt::format("--streams {}: requests in flight on a connection are HTTP/2's; add --http 2, "
                    "or use -P for more HTTP/1.1 connections",
                    c.quic_streams));
  c.test.http.streams = c.quic_streams;
  c.quic_streams = 1;
  if (!c.urls.empty()) configure_urls(c);
  if (c.test.http.resume_percent > 0 && c.test.http.requests_per_connection == 0)
    throw UsageError(
        "--resume-ratio needs --requests-per-connection: kept-alive connections shake hands once");
}

}  // namespace tlscmp::kinds
