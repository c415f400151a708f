// One connection's HTTP, client and server, over a blocking Stream: the
// version's framing (framing/http.hpp) driven a request, a read and a
// write at a time, closed loop (-n, -t: --streams requests in flight) or
// open loop (--rate: each request sent at its time on the schedule's grid,
// its latency counted from that time, as wrk2 does).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "transport/errors.hpp"

namespace tlscmp::kinds {
namespace {

constexpr std::size_t kReadBytes = 64 * 1024;

// Whatever the codec has to send, written; "" or what failed.
template <typename Codec>
std::string write_out(Stream& stream, Codec& codec, const char* doing, std::uint64_t number) {
  for (std::span<const std::byte> out = codec.output(); !out.empty(); out = codec.output()) {
    std::error_code ec;
    stream.write_all(out, ec);
    if (ec) return fmt::format("{} {}: {}", doing, number, describe(ec, stream.error_detail()));
    codec.sent(out.size());
  }
  return {};
}

// The answers taken into this side's figures.
void count(const std::vector<framing::HttpAnswer>& answers, HttpSideResult& result) {
  for (const framing::HttpAnswer& a : answers) {
    result.first_byte.add(measure::ns_to_us(a.first_ns - a.asked_ns));
    result.latency.add(measure::ns_to_us(a.done_ns - a.asked_ns));
    result.bytes_received += a.body;
    ++result.transactions;
    result.end_ns = std::max(result.end_ns, a.done_ns);
  }
}

// What a client's loop reads into, kept across its reads: the bytes, and
// the answers they completed.
struct Reading {
  std::vector<std::byte> buffer = std::vector<std::byte>(kReadBytes);
  std::vector<framing::HttpAnswer> answers;
  bool heard = false;  // the server's first bytes came
};

// The server's bytes in, read (without waiting where `now`), taken whole
// answers counted; "" or what failed.
std::string take(Stream& stream, framing::HttpClientCodec& codec, Reading& in, bool now,
                 HttpSideResult& result) {
  std::error_code ec;
  const std::size_t got = now ? stream.read_now(in.buffer, ec) : stream.read_some(in.buffer, ec);
  if (ec == TransportErrc::would_block && now) return {};
  const std::uint64_t number = result.transactions + 1;
  if (ec == TransportErrc::eof)
    return fmt::format("the server ended the connection with request {} unanswered", number);
  if (ec)
    return fmt::format("awaiting the response to request {}: {}", number,
                       describe(ec, stream.error_detail()));
  in.heard = in.heard || got > 0;
  in.answers.clear();
  std::string failed = codec.input({in.buffer.data(), got}, measure::now_ns(), in.answers);
  count(in.answers, result);
  return failed;
}

// Closed loop: --streams requests in flight (HTTP/1.1: one), a new one as
// each is answered, until -n is asked or -t is up.
std::string closed_loop(Stream& stream, framing::HttpClientCodec& codec, const HttpClientSpec& spec,
                        HttpSideResult& result) {
  Reading in;
  for (;;) {
    while (codec.in_flight() < spec.streams &&
           (spec.requests > 0 ? codec.asked() < spec.requests : measure::now_ns() < spec.stop_ns)) {
      if (codec.server_closes())
        return fmt::format(
            "the server closes the connection after request {}, and keep-alive was asked (its limit of "
            "requests a connection: nginx's keepalive_requests); raise it, or use -n below it times -P",
            codec.asked());
      codec.ask(measure::now_ns());
    }
    if (std::string failed = write_out(stream, codec, "sending request", codec.asked()); !failed.empty())
      return failed;
    if (codec.in_flight() == 0) return {};
    if (std::string failed = take(stream, codec, in, false, result); !failed.empty()) return failed;
  }
}

// Open loop: each request asked at its time on this connection's grid,
// whether or not those before it were answered. Until the server's first
// bytes, what comes may be TLS's tickets alone: read without waiting then,
// so that a due request is not held up.
std::string open_loop(Stream& stream, framing::HttpClientCodec& codec, const HttpClientSpec& spec,
                      HttpSideResult& result) {
  Reading in;
  const double period_ns = 1e9 / spec.rate_rps;
  std::int64_t next_ns = spec.start_ns;
  std::string failed;
  for (;;) {
    for (std::int64_t now = measure::now_ns(); next_ns < spec.stop_ns && now >= next_ns;) {
      codec.ask(next_ns);
      next_ns = spec.start_ns + static_cast<std::int64_t>(static_cast<double>(codec.asked()) * period_ns);
    }
    if (!(failed = write_out(stream, codec, "sending request", codec.asked())).empty()) break;
    const bool sending = next_ns < spec.stop_ns;
    if (!sending && codec.in_flight() == 0) break;
    std::error_code ec;
    const bool readable = !sending || stream.has_buffered() ||
                          stream.readable_within(std::chrono::nanoseconds(next_ns - measure::now_ns()), ec);
    if (ec) {
      failed = fmt::format("awaiting the response to request {}: {}", result.transactions + 1,
                           describe(ec, stream.error_detail()));
      break;
    }
    if (readable && !(failed = take(stream, codec, in, sending && !in.heard, result)).empty()) break;
  }
  // The run lasts its schedule at least, as rr's open loop does.
  result.end_ns = std::max(measure::now_ns(), spec.stop_ns);
  return failed;
}

}  // namespace

void http_client_exchange(Stream& stream, const HttpClientSpec& spec, HttpSideResult& result) {
  const std::unique_ptr<framing::HttpClientCodec> codec =
      framing::http_client({spec.version, spec.authority, spec.path, spec.request_bytes});
  if (spec.rate_rps > 0) result.start_ns = spec.start_ns;
  result.error =
      spec.rate_rps > 0 ? open_loop(stream, *codec, spec, result) : closed_loop(stream, *codec, spec, result);
  if (!result.error.empty()) return;
  codec->end();  // HTTP/2: GOAWAY, no more requests
  result.error = write_out(stream, *codec, "ending after request", codec->asked());
}

void http_server_exchange(Stream& stream, std::uint32_t version, std::span<const std::byte> first,
                          HttpSideResult& result) {
  const std::unique_ptr<framing::HttpServerCodec> codec =
      framing::http_server(version, kMaxHttpResponseBytes, spec::kMaxHttpStreams);
  std::string failed = codec->input(first);
  std::vector<std::byte> buffer(kReadBytes);
  std::uint64_t answered = 0;  // as of the last write: the window ends with the last answer out
  for (;;) {
    const std::string write_failed = write_out(stream, *codec, "answering request", codec->answered() + 1);
    if (codec->answered() != answered) {
      answered = codec->answered();
      result.end_ns = measure::now_ns();
    }
    if (!write_failed.empty() && failed.empty()) failed = write_failed;
    if (!failed.empty() || codec->over()) break;
    std::error_code ec;
    const std::size_t got = stream.read_some(buffer, ec);
    if (ec == TransportErrc::eof && !codec->mid_request()) break;  // the client's end after its last request
    if (ec) {
      failed =
          fmt::format("reading request {}: {}", codec->answered() + 1, describe(ec, stream.error_detail()));
      break;
    }
    failed = codec->input({buffer.data(), got});
  }
  result.transactions = codec->answered();
  result.bytes_received = codec->body_received();
  result.error = failed;
  std::error_code ignored;
  stream.shutdown_send(ignored);  // ours, after the client's or after the answer that ends it
}

}  // namespace tlscmp::kinds
