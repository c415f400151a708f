// HTTP/1.1 on one connection, each end, through Debian's http-parser
// (libhttp-parser): the client keeps the connection alive and sends a
// request at a time; the server answers each request it parses, pipelined
// ones in order, and holds each to its caps.

#include <http_parser.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

constexpr std::size_t kH1ReadBytes = 64 * 1024;
constexpr std::size_t kBodyPiece = 256 * 1024;

std::span<const std::byte> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

// `bytes` of zeros, in pieces.
void write_body(Stream& stream, std::uint64_t bytes, std::error_code& ec) {
  static const std::vector<std::byte> zeros(kBodyPiece);
  for (std::uint64_t done = 0; done < bytes && !ec;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kBodyPiece, bytes - done));
    stream.write_all({zeros.data(), n}, ec);
    done += n;
  }
}

std::string parser_error(const http_parser& parser) {
  return http_errno_description(static_cast<http_errno>(parser.http_errno));
}

// The client's view of the response being read.
struct Response {
  unsigned status = 0;
  std::uint64_t body = 0;
  bool complete = false;
};

int on_response_body(http_parser* p, const char*, std::size_t n) {
  static_cast<Response*>(p->data)->body += n;
  return 0;
}

int on_response_complete(http_parser* p) {
  auto* r = static_cast<Response*>(p->data);
  r->status = p->status_code;
  r->complete = true;
  http_parser_pause(p, 1);  // what follows is no answer to anything asked
  return 0;
}

std::string request_head(const HttpClientSpec& spec) {
  if (spec.request_bytes == 0) {
    return fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: tlscmp\r\nAccept: */*\r\n\r\n", spec.path,
                       spec.authority);
  }
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: tlscmp\r\nContent-Type: application/octet-stream\r\n"
      "Content-Length: {}\r\n\r\n",
      spec.path, spec.authority, spec.request_bytes);
}

// One request and its response, whole; "" or what went wrong.
std::string h1_exchange(Stream& stream, const HttpClientSpec& spec, const std::string& head, std::uint64_t n,
                        std::vector<std::byte>& buffer, HttpSideResult& result) {
  http_parser parser;
  http_parser_init(&parser, HTTP_RESPONSE);
  http_parser_settings settings;
  http_parser_settings_init(&settings);
  settings.on_body = on_response_body;
  settings.on_message_complete = on_response_complete;
  Response response;
  parser.data = &response;
  const std::int64_t sent_ns = measure::now_ns();
  std::error_code ec;
  stream.write_all(bytes_of(head), ec);
  if (!ec) write_body(stream, spec.request_bytes, ec);
  if (ec) return fmt::format("sending request {}: {}", n, describe(ec, stream.error_detail()));
  bool first = true;
  while (!response.complete) {
    const std::size_t got = stream.read_some(buffer, ec);
    if (ec)
      return fmt::format("reading the response to request {}: {}", n, describe(ec, stream.error_detail()));
    if (first) {
      result.first_byte.add(measure::ns_to_us(measure::now_ns() - sent_ns));
      first = false;
    }
    const std::size_t parsed =
        http_parser_execute(&parser, &settings, reinterpret_cast<const char*>(buffer.data()), got);
    if (HTTP_PARSER_ERRNO(&parser) != HPE_OK && HTTP_PARSER_ERRNO(&parser) != HPE_PAUSED)
      return fmt::format("the response to request {} is not HTTP/1.1: {}", n, parser_error(parser));
    if (parsed < got) return fmt::format("the server sent bytes after the response to request {}", n);
  }
  const std::int64_t done_ns = measure::now_ns();
  if (response.status != 200)
    return fmt::format("the server answered request {} ({} {}) with status {}", n,
                       spec.request_bytes == 0 ? "GET" : "POST", spec.path, response.status);
  if (!http_should_keep_alive(&parser) && n != spec.requests)
    return fmt::format(
        "the server closes the connection after request {}, and keep-alive was asked (its limit of requests "
        "a connection: nginx's keepalive_requests); raise it, or use -n below it times -P",
        n);
  result.latency.add(measure::ns_to_us(done_ns - sent_ns));
  result.bytes_received += response.body;
  ++result.transactions;
  return {};
}

// The open loop's responses, parsed in order as they come, each matched
// to the scheduled time of the request it answers.
struct Pipeline {
  const HttpClientSpec& spec;
  HttpSideResult& result;
  http_parser parser;
  http_parser_settings settings;
  Response response;
  std::deque<std::int64_t> scheduled;  // the requests awaiting their responses, by scheduled time
  bool first_seen = false;             // the front response's first byte has come

  Pipeline(const HttpClientSpec& s, HttpSideResult& r) : spec(s), result(r) {
    http_parser_init(&parser, HTTP_RESPONSE);
    http_parser_settings_init(&settings);
    settings.on_body = on_response_body;
    settings.on_message_complete = on_response_complete;
    parser.data = &response;
  }

  // Bytes read: every response they complete counted; "" or what is wrong.
  std::string take(const char* data, std::size_t n, std::int64_t now, bool more_to_send) {
    for (std::size_t at = 0; at < n;) {
      if (scheduled.empty()) return "the server sent bytes no request asked for";
      const std::uint64_t number = result.transactions + 1;
      if (!first_seen) result.first_byte.add(measure::ns_to_us(now - scheduled.front()));
      first_seen = true;
      at += http_parser_execute(&parser, &settings, data + at, n - at);
      if (HTTP_PARSER_ERRNO(&parser) != HPE_OK && HTTP_PARSER_ERRNO(&parser) != HPE_PAUSED)
        return fmt::format("the response to request {} is not HTTP/1.1: {}", number, parser_error(parser));
      if (!response.complete) continue;
      if (response.status != 200)
        return fmt::format("the server answered request {} ({} {}) with status {}", number,
                           spec.request_bytes == 0 ? "GET" : "POST", spec.path, response.status);
      if (!http_should_keep_alive(&parser) && (more_to_send || scheduled.size() > 1))
        return fmt::format("the server closes the connection after request {}, and keep-alive was asked",
                           number);
      result.latency.add(measure::ns_to_us(now - scheduled.front()));
      result.bytes_received += response.body;
      ++result.transactions;
      scheduled.pop_front();
      response = Response{};
      first_seen = false;
      http_parser_pause(&parser, 0);
    }
    return {};
  }
};

// Open loop (--rate): each request sent at its time on the schedule's grid,
// pipelined behind those not yet answered (HTTP/1.1 answers in order), its
// latency counted from that time, as wrk2 does.
void h1_open_loop(Stream& stream, const HttpClientSpec& spec, HttpSideResult& result) {
  const std::string head = request_head(spec);
  std::vector<std::byte> buffer(kH1ReadBytes);
  Pipeline pipeline(spec, result);
  const double period_ns = 1e9 / spec.rate_rps;
  std::uint64_t sent = 0;
  bool heard = false;  // the server's first bytes came
  std::int64_t next_ns = spec.start_ns;
  result.start_ns = spec.start_ns;
  for (;;) {
    const bool sending = next_ns < spec.stop_ns;
    if (!sending && pipeline.scheduled.empty()) break;
    std::error_code ec;
    const bool readable = !sending || stream.has_buffered() ||
                          stream.readable_within(std::chrono::nanoseconds(next_ns - measure::now_ns()), ec);
    if (!ec && readable) {
      // Until the server's first bytes, what came may be TLS's tickets
      // alone: read without waiting, so that a due request is not held up.
      const std::size_t got = sending && !heard ? stream.read_now(buffer, ec) : stream.read_some(buffer, ec);
      if (ec == TransportErrc::would_block) ec.clear();
      heard = heard || got > 0;
      if (!ec && got > 0) {
        result.error =
            pipeline.take(reinterpret_cast<const char*>(buffer.data()), got, measure::now_ns(), sending);
        if (!result.error.empty()) break;
      }
    }
    if (ec) {
      result.error = fmt::format("awaiting the response to request {}: {}", result.transactions + 1,
                                 describe(ec, stream.error_detail()));
      break;
    }
    if (sending && measure::now_ns() >= next_ns) {
      stream.write_all(bytes_of(head), ec);
      if (!ec) write_body(stream, spec.request_bytes, ec);
      if (ec) {
        result.error = fmt::format("sending request {}: {}", sent + 1, describe(ec, stream.error_detail()));
        break;
      }
      pipeline.scheduled.push_back(next_ns);
      ++sent;
      next_ns = spec.start_ns + static_cast<std::int64_t>(static_cast<double>(sent) * period_ns);
    }
  }
  // The run lasts its schedule at least, as rr's open loop does.
  result.end_ns = std::max(measure::now_ns(), spec.stop_ns);
}

}  // namespace

void h1_client(Stream& stream, const HttpClientSpec& spec, HttpSideResult& result) {
  if (spec.rate_rps > 0) {
    h1_open_loop(stream, spec, result);
    return;
  }
  const std::string head = request_head(spec);
  std::vector<std::byte> buffer(kH1ReadBytes);
  for (std::uint64_t n = 1;; ++n) {
    if (spec.requests > 0 ? n > spec.requests : measure::now_ns() >= spec.stop_ns) break;
    if (std::string error = h1_exchange(stream, spec, head, n, buffer, result); !error.empty()) {
      result.error = std::move(error);
      return;
    }
    result.end_ns = measure::now_ns();
  }
}

namespace {

// The server's view of the request being parsed, and its caps.
struct Request {
  std::string url;
  std::size_t header_bytes = 0;
  std::uint64_t body = 0;
  bool complete = false;
  bool too_large = false;
};

int on_request_url(http_parser* p, const char* at, std::size_t n) {
  auto* r = static_cast<Request*>(p->data);
  r->header_bytes += n;
  if (r->header_bytes > kMaxHttpHeaderBytes) {
    r->too_large = true;
    return 1;
  }
  r->url.append(at, n);
  return 0;
}

int on_request_header(http_parser* p, const char*, std::size_t n) {
  auto* r = static_cast<Request*>(p->data);
  r->header_bytes += n;
  if (r->header_bytes > kMaxHttpHeaderBytes) {
    r->too_large = true;
    return 1;
  }
  return 0;
}

int on_request_body(http_parser* p, const char*, std::size_t n) {
  static_cast<Request*>(p->data)->body += n;
  return 0;
}

int on_request_complete(http_parser* p) {
  static_cast<Request*>(p->data)->complete = true;
  http_parser_pause(p, 1);  // answered before the next is parsed
  return 0;
}

// An error answer, then the end of the connection.
void refuse(Stream& stream, const char* status) {
  std::error_code ec;
  stream.write_all(
      bytes_of(fmt::format("HTTP/1.1 {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status)), ec);
  if (!ec) stream.shutdown_send(ec);
}

// Answers the request parsed whole; "" or why the connection ends.
std::string answer(Stream& stream, const http_parser& parser, const Request& request,
                   HttpSideResult& result) {
  const auto size = response_size_of(request.url);
  const bool known = parser.method == HTTP_GET || parser.method == HTTP_POST || parser.method == HTTP_HEAD;
  if (!known || !size) {
    refuse(stream, known ? "404 Not Found" : "405 Method Not Allowed");
    return fmt::format("request {} asked for {} {}, which names no response size (/BYTES)",
                       result.transactions + 1, http_method_str(static_cast<http_method>(parser.method)),
                       request.url.substr(0, 64));
  }
  const bool keep = http_should_keep_alive(&parser) != 0;
  const std::string head = fmt::format(
      "HTTP/1.1 200 OK\r\nServer: tlscmp\r\nContent-Type: application/octet-stream\r\nContent-Length: "
      "{}\r\n{}\r\n",
      *size, keep ? "" : "Connection: close\r\n");
  std::error_code ec;
  stream.write_all(bytes_of(head), ec);
  if (!ec && parser.method != HTTP_HEAD) write_body(stream, *size, ec);
  if (ec)
    return fmt::format("answering request {}: {}", result.transactions + 1,
                       describe(ec, stream.error_detail()));
  ++result.transactions;
  result.bytes_received += request.body;
  result.end_ns = measure::now_ns();
  if (!keep) stream.shutdown_send(ec);
  return keep ? "" : "closed";
}

// Parses `got` bytes, answering each request complete; false once the
// connection is over (answered with an error, or closed as asked).
bool parse_requests(Stream& stream, http_parser& parser, const http_parser_settings& settings,
                    Request& request, const char* at, std::size_t left, HttpSideResult& result) {
  while (left > 0) {
    const std::size_t parsed = http_parser_execute(&parser, &settings, at, left);
    at += parsed;
    left -= parsed;
    if (request.too_large) {
      refuse(stream, "431 Request Header Fields Too Large");
      result.error = fmt::format("request {}'s headers passed {} KiB: answered 431 and closed",
                                 result.transactions + 1, kMaxHttpHeaderBytes / 1024);
      return false;
    }
    if (HTTP_PARSER_ERRNO(&parser) != HPE_OK && HTTP_PARSER_ERRNO(&parser) != HPE_PAUSED) {
      refuse(stream, "400 Bad Request");
      result.error = fmt::format("request {} is not HTTP/1.1 ({}): answered 400 and closed",
                                 result.transactions + 1, parser_error(parser));
      return false;
    }
    if (!request.complete) return true;
    if (std::string why = answer(stream, parser, request, result); !why.empty()) {
      if (why != "closed") result.error = std::move(why);
      return false;
    }
    request = Request{};
    http_parser_pause(&parser, 0);
  }
  return true;
}

}  // namespace

void h1_server(Stream& stream, std::span<const std::byte> first, HttpSideResult& result) {
  http_parser parser;
  http_parser_init(&parser, HTTP_REQUEST);
  http_parser_settings settings;
  http_parser_settings_init(&settings);
  settings.on_url = on_request_url;
  settings.on_header_field = on_request_header;
  settings.on_header_value = on_request_header;
  settings.on_body = on_request_body;
  settings.on_message_complete = on_request_complete;
  Request request;
  parser.data = &request;
  if (!parse_requests(stream, parser, settings, request, reinterpret_cast<const char*>(first.data()),
                      first.size(), result))
    return;
  std::vector<std::byte> buffer(kH1ReadBytes);
  for (;;) {
    std::error_code ec;
    const std::size_t got = stream.read_some(buffer, ec);
    if (ec == TransportErrc::eof && request.url.empty() && request.header_bytes == 0) {
      stream.shutdown_send(ec);  // the client's end after its last request: ours
      return;
    }
    if (ec) {
      result.error =
          fmt::format("reading request {}: {}", result.transactions + 1, describe(ec, stream.error_detail()));
      return;
    }
    if (!parse_requests(stream, parser, settings, request, reinterpret_cast<const char*>(buffer.data()), got,
                        result))
      return;
  }
}

}  // namespace tlscmp::kinds
