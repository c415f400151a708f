// --url: tlscmp's client against an HTTP server of another make (nginx,
// any web server), instead of tlscmp's: each URL a variant (http:// the
// tcp one, https:// the tls one), -P connections each, and only this
// side's figures, as h2load and wrk report.

#include <fmt/format.h>
#include <algorithm>
#include <charconv>

#include "kinds/data_connections.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/http/http.hpp"
#include "kinds/variants.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/host.hpp"
#include "measure/stats.hpp"
#include "session/interrupt.hpp"
#include "stacks/stack.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {

HttpUrl parse_http_url(const std::string& text) {
  const auto bad = [&](const char* why) {
    return UsageError(
        fmt::format("--url {}: {}; give http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH", text, why));
  };
  HttpUrl url;
  std::string_view rest = text;
  if (rest.starts_with("https://")) {
    url.tls = true;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else {
    throw bad("not an http:// or https:// URL");
  }
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  url.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  std::string_view port_text;
  if (authority.starts_with('[')) {  // [IPv6]:port
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) throw bad("an IPv6 address without its ']'");
    url.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') throw bad("something after the IPv6 address that is not :PORT");
      port_text = authority.substr(close + 2);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    url.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) throw bad("no host");
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [at, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || at != port_text.data() + port_text.size() || port == 0 || port > 65535)
      throw bad("a port outside 1-65535");
    url.port = static_cast<std::uint16_t>(port);
  }
  url.authority = std::string(authority);
  return url;
}

namespace {

// A variant's URL: the https:// one for tls, the http:// one for tcp.
HttpUrl url_of(const session::ClientConfig& config, Mode mode) {
  for (const std::string& text : config.urls) {
    HttpUrl url = parse_http_url(text);
    if (url.tls == facts(mode).encrypted) return url;
  }
  throw Error(fmt::format("no --url for {}", to_string(mode)));
}

// What to do when the server's certificate was not accepted, or "".
std::string trust_hint(const Stream& stream, const session::ClientConfig& config, const HttpUrl& url) {
  const tls::TlsStream* tls = stream.tls();
  if (tls == nullptr) return {};
  switch (tls->verify_failure()) {
    case tls::VerifyFailure::untrusted:
      return config.ca_file.empty()
                 ? " (trust the server's CA with --ca FILE, or skip verification with --insecure)"
                 : "";
    case tls::VerifyFailure::name_mismatch:
      return fmt::format(
          " (the server's certificate does not name '{}': put a name it has in the URL, or use --insecure)",
          url.host);
    default:
      return {};
  }
}

std::unique_ptr<Stream> connect_to(const session::ClientConfig& config, const HttpUrl& url, Mode mode,
                                   const tls::Context* tls, const tls::Session& resume,
                                   double& handshake_us) {
  const std::int64_t start_ns = measure::now_ns();
  stacks::DataTarget target{url.host,
                            url.port,
                            config.bind_address,
                            Deadline::after(config.timeouts.connect),
                            config.test.sndbuf_bytes,
                            config.test.rcvbuf_bytes,
                            -1};
  std::unique_ptr<Stream> stream = stacks::client_stream(mode, stacks::stack_of(mode).open_socket(target),
                                                         tls, {url.host, resume, {}, {}});
  stream->set_deadline(Deadline::after(config.timeouts.handshake));
  if (const std::error_code ec = stream->handshake())
    throw Error(fmt::format("{} handshake with {} failed: {}{}", facts(mode).handshake, url.authority,
                            describe(ec, stream->error_detail()), trust_hint(*stream, config, url)));
  set_nodelay(stream->native_handle(), true);
  handshake_us = measure::ns_to_us(measure::now_ns() - start_ns);
  return stream;
}

}  // namespace

std::vector<session::Variant> url_variants(const session::ClientConfig& config,
                                           const tls::ClientOptions& tls_config) {
  std::vector<session::Variant> variants;
  for (const std::string& text : config.urls) {
    const HttpUrl url = parse_http_url(text);
    variants.push_back(mode_variant(url.tls ? Mode::tls : Mode::tcp, tls_config));
  }
  std::stable_sort(variants.begin(), variants.end(),
                   [](const session::Variant& a, const session::Variant& b) { return a.mode < b.mode; });
  return variants;
}

namespace {

// -P connections kept alive, opened first, the handshakes timed apart.
std::vector<HttpSideResult> kept_alive(const session::ClientConfig& config, const HttpUrl& url, Mode mode,
                                       const tls::Context* tls, const std::vector<HttpClientSpec>& specs,
                                       session::InterruptWatch& interrupt, HttpRun& run) {
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<double> handshake_us(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i)
    streams.push_back(connect_to(config, url, mode, tls, {}, handshake_us[i]));
  run.handshake_us = measure::summarize(handshake_us).mean;
  run.tls = tls_parameters(*streams.front(), config.test.record_size);
  if (const tls::TlsStream* tls_stream = streams.front()->tls()) run.alpn = tls_stream->session_info().alpn;
  std::vector<HttpSideResult> mine(specs.size());
  std::vector<std::unique_ptr<session::InterruptWatch::Guard>> guards;
  std::vector<int> fds;
  for (const auto& stream : streams) {
    guards.push_back(std::make_unique<session::InterruptWatch::Guard>(interrupt, stream->native_handle()));
    fds.push_back(stream->native_handle());
  }
  std::vector<RunFacts> facts = run_data_threads(
      fds, config.client_cpu, [&](std::size_t i) { mine[i] = run_http_client(*streams[i], specs[i]); });
  for (std::size_t i = 0; i < mine.size(); ++i)
    mine[i].facts = std::move(facts[i]);
  return mine;
}

}  // namespace

HttpRun run_http_url(const session::ClientConfig& config, const tls::Context* tls, Mode mode,
                     session::InterruptWatch& interrupt) {
  const HttpUrl url = url_of(config, mode);
  HttpRun run;
  run.mode = mode;
  run.server_measured = false;
  std::vector<HttpClientSpec> specs = http_client_specs(config, config.test, measure::now_ns());
  for (HttpClientSpec& spec : specs) {
    spec.authority = url.authority;
    spec.path = url.path;
  }
  const HttpDial dial = [&](const tls::Session& resume, double& us) {
    return connect_to(config, url, mode, tls, resume, us);
  };
  const std::vector<HttpSideResult> mine = config.test.http.requests_per_connection > 0
                                               ? run_connectors(config, tls != nullptr, specs, dial, run)
                                               : kept_alive(config, url, mode, tls, specs, interrupt, run);
  aggregate_http(run, mine);
  if (interrupt.interrupted()) {
    run.partial = true;
    return run;
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (!mine[i].error.empty())
      throw Error(fmt::format("{}{}: {}", url.authority,
                              mine.size() > 1 ? fmt::format(", connection {}", i) : "", mine[i].error));
  }
  return run;
}

}  // namespace tlscmp::kinds
