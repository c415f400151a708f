// HTTP/2 on one connection, each end, through Debian's nghttp2
// (libnghttp2): the client keeps --streams requests in flight; the server
// answers each request once it has its end, and holds each to its caps.
// Both drive their session in memory (nghttp2_session_mem_recv/mem_send)
// over the connection's Stream, so that TLS is whatever the stack made.

#include <nghttp2/nghttp2.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "kinds/http/http.hpp"
#include "measure/clock.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

constexpr std::size_t kH2ReadBytes = 64 * 1024;
constexpr std::int32_t kStreamWindow = 16 << 20;     // each stream's receive window
constexpr std::int32_t kConnectionWindow = 1 << 30;  // the connection's

using Session = std::unique_ptr<nghttp2_session, decltype(&nghttp2_session_del)>;
using Callbacks = std::unique_ptr<nghttp2_session_callbacks, decltype(&nghttp2_session_callbacks_del)>;

Callbacks new_callbacks() {
  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) throw std::bad_alloc();
  return {callbacks, nghttp2_session_callbacks_del};
}

nghttp2_nv header(std::string_view name, std::string_view value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

// A body of `left` zero bytes, from the stream's own count.
ssize_t read_zeros(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                   std::uint32_t* flags, nghttp2_data_source* source, void*) {
  auto* left = static_cast<std::uint64_t*>(source->ptr);
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(*left, length));
  std::memset(buf, 0, n);
  *left -= n;
  if (*left == 0) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

// Whatever the session has to send, written; "" or what failed. The
// session serializes a frame at a time: they go out together, up to
// kFlushBytes a write, as nghttp2's own tools send them (a write, and over
// TLS a record, per frame would cost a system call and a record header
// each: HEADERS and DATA apart, every WINDOW_UPDATE).
std::string flush(nghttp2_session* session, Stream& stream) {
  constexpr std::size_t kFlushBytes = 64 * 1024;
  thread_local std::vector<std::byte> out;
  out.clear();
  std::error_code ec;
  const auto write_out = [&] {
    if (!out.empty()) stream.write_all(out, ec);
    out.clear();
    return ec ? fmt::format("sending: {}", describe(ec, stream.error_detail())) : std::string();
  };
  for (;;) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session, &data);
    if (n < 0) return fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n)));
    if (n == 0) return write_out();
    const auto size = static_cast<std::size_t>(n);
    if (out.size() + size > kFlushBytes) {
      if (std::string failed = write_out(); !failed.empty()) return failed;
    }
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    out.insert(out.end(), bytes, bytes + size);
  }
}

// Bytes read in, fed to the session; "" or what failed. `ended`: the peer's end came.
// `got`: how many bytes came, at the start of `buffer`. `now`: what came
// may hold no data (Stream::read_now); then none is read and none waited for.
std::string feed(nghttp2_session* session, Stream& stream, std::vector<std::byte>& buffer, bool& ended,
                 std::size_t& got, bool now = false) {
  std::error_code ec;
  got = now ? stream.read_now(buffer, ec) : stream.read_some(buffer, ec);
  if (ec == TransportErrc::would_block && now) return {};
  if (ec == TransportErrc::eof) {
    ended = true;
    return {};
  }
  if (ec) return fmt::format("reading: {}", describe(ec, stream.error_detail()));
  const ssize_t used =
      nghttp2_session_mem_recv(session, reinterpret_cast<const std::uint8_t*>(buffer.data()), got);
  if (used < 0)
    return fmt::format("the peer's HTTP/2 is not valid: {}", nghttp2_strerror(static_cast<int>(used)));
  return {};
}

// ---- client

// Whether a server's first bytes are an HTTP/1 status line, not HTTP/2's frames.
bool answered_in_http1(const std::vector<std::byte>& buffer, std::size_t got) {
  constexpr std::string_view kStatus = "HTTP/1.";
  return got >= kStatus.size() &&
         std::string_view(reinterpret_cast<const char*>(buffer.data()), kStatus.size()) == kStatus;
}

struct InFlight {
  std::int64_t sent_ns = 0;
  bool first = true;
  unsigned status = 0;
  std::uint64_t body = 0;
  std::uint64_t request_left = 0;  // the POST body still to send
};

struct H2Client {
  Stream& stream;
  const HttpClientSpec& spec;
  HttpSideResult& result;
  nghttp2_session* session = nullptr;
  std::string path;
  std::string content_length;
  std::map<std::int32_t, InFlight> in_flight;
  std::uint64_t issued = 0;
  std::string error;

  bool heard = false;  // whether the server has sent anything yet

  bool more() const { return spec.requests > 0 ? issued < spec.requests : measure::now_ns() < spec.stop_ns; }
  // A request, its latency counted from `sent_ns` (open loop: its scheduled time).
  void submit(std::int64_t sent_ns) {
    const bool post = spec.request_bytes > 0;
    const nghttp2_nv headers[] = {
        header(":method", post ? "POST" : "GET"), header(":scheme", "https"),
        header(":authority", spec.authority),     header(":path", path),
        header("user-agent", "tlscmp"),           header("content-length", content_length)};
    // The stream's entry holds the body's count, which the provider reads from.
    const std::int32_t next = static_cast<std::int32_t>(nghttp2_session_get_next_stream_id(session));
    InFlight& entry = in_flight[next];
    entry.request_left = spec.request_bytes;
    entry.sent_ns = sent_ns;
    nghttp2_data_provider body{};
    body.source.ptr = &entry.request_left;
    body.read_callback = read_zeros;
    const std::int32_t id = nghttp2_submit_request(
        session, nullptr, headers, std::size(headers) - (post ? 0 : 1), post ? &body : nullptr, this);
    if (id != next) {
      in_flight.erase(next);
      error = fmt::format("HTTP/2: cannot submit request {}: {}", issued + 1,
                          id < 0 ? nghttp2_strerror(id) : "another stream id than the next");
      return;
    }
    ++issued;
  }
  // The server's bytes read in and fed to the session; false once the run must stop (`error`).
  // `now`: Stream::read_now, not read_some.
  bool take(std::vector<std::byte>& buffer, bool now = false) {
    bool ended = false;
    std::size_t got = 0;
    error = feed(session, stream, buffer, ended, got, now);
    if (!heard && got > 0 && answered_in_http1(buffer, got))
      error =
          "the server answered in HTTP/1.x: without TLS it takes HTTP/2 only on a port set for it "
          "(nginx: listen PORT http2); give that port, an https:// URL, or --http 1.1";
    heard = heard || got > 0;
    if (ended && error.empty()) error = "the server ended the connection with requests unanswered";
    return error.empty();
  }
};

int client_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* c = static_cast<H2Client*>(user);
  const auto it = c->in_flight.find(frame->hd.stream_id);
  if (it != c->in_flight.end() && it->second.first) {
    c->result.first_byte.add(measure::ns_to_us(measure::now_ns() - it->second.sent_ns));
    it->second.first = false;
  }
  return 0;
}

int client_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                  std::size_t name_bytes, const std::uint8_t* value, std::size_t value_bytes, std::uint8_t,
                  void* user) {
  auto* c = static_cast<H2Client*>(user);
  const std::string_view n(reinterpret_cast<const char*>(name), name_bytes);
  if (n != ":status") return 0;
  const auto it = c->in_flight.find(frame->hd.stream_id);
  if (it != c->in_flight.end())
    it->second.status = static_cast<unsigned>(
        std::atoi(std::string(reinterpret_cast<const char*>(value), value_bytes).c_str()));
  return 0;
}

int client_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t*, std::size_t n,
                void* user) {
  auto* c = static_cast<H2Client*>(user);
  const auto it = c->in_flight.find(id);
  if (it != c->in_flight.end()) it->second.body += n;
  return 0;
}

int client_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user) {
  auto* c = static_cast<H2Client*>(user);
  const auto it = c->in_flight.find(id);
  if (it == c->in_flight.end()) return 0;
  const InFlight f = it->second;
  c->in_flight.erase(it);
  if (!c->error.empty()) return 0;
  if (code != NGHTTP2_NO_ERROR) {
    c->error = fmt::format("the server reset the stream of a request ({})", nghttp2_http2_strerror(code));
  } else if (f.status != 200) {
    c->error = fmt::format("the server answered a request ({} {}) with status {}",
                           c->spec.request_bytes == 0 ? "GET" : "POST", c->path, f.status);
  } else {
    const std::int64_t now = measure::now_ns();
    c->result.latency.add(measure::ns_to_us(now - f.sent_ns));
    c->result.bytes_received += f.body;
    ++c->result.transactions;
    c->result.end_ns = now;
  }
  return 0;
}

Session client_session(H2Client& c) {
  const Callbacks callbacks = new_callbacks();
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks.get(), client_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), client_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(), client_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(), client_stream_close);
  nghttp2_session* session = nullptr;
  if (nghttp2_session_client_new(&session, callbacks.get(), &c) != 0) throw std::bad_alloc();
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow}};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
  return {session, nghttp2_session_del};
}

// Closed loop: --streams requests in flight, a new one as each ends.
void h2_closed_loop(H2Client& c, std::vector<std::byte>& buffer) {
  for (;;) {
    while (c.error.empty() && c.in_flight.size() < c.spec.streams && c.more())
      c.submit(measure::now_ns());
    if (c.error.empty()) c.error = flush(c.session, c.stream);
    if (!c.error.empty() || c.in_flight.empty() || !c.take(buffer)) break;
  }
}

// Open loop (--rate): each request submitted at its time on the schedule's
// grid, however many are in flight (past the server's stream limit nghttp2
// holds them, and the wait counts), its latency from that time.
void h2_open_loop(H2Client& c, std::vector<std::byte>& buffer) {
  const HttpClientSpec& spec = c.spec;
  const double period_ns = 1e9 / spec.rate_rps;
  std::int64_t next_ns = spec.start_ns;
  std::int64_t now = measure::now_ns();
  c.result.start_ns = spec.start_ns;
  for (;;) {
    while (c.error.empty() && next_ns < spec.stop_ns && now >= next_ns) {
      c.submit(next_ns);
      next_ns = spec.start_ns + static_cast<std::int64_t>(static_cast<double>(c.issued) * period_ns);
    }
    if (c.error.empty()) c.error = flush(c.session, c.stream);
    const bool sending = next_ns < spec.stop_ns;
    if (!c.error.empty() || (!sending && c.in_flight.empty())) break;
    std::error_code ec;
    const bool readable = !sending || c.stream.has_buffered() ||
                          c.stream.readable_within(std::chrono::nanoseconds(next_ns - now), ec);
    if (ec) c.error = fmt::format("awaiting responses: {}", describe(ec, c.stream.error_detail()));
    // Until the server's first bytes, what came may be TLS's tickets alone:
    // read without waiting, so that a due request is not held up.
    if (!c.error.empty() || (readable && !c.take(buffer, sending && !c.heard))) break;
    now = measure::now_ns();
  }
  // The run lasts its schedule at least, as rr's open loop does.
  c.result.end_ns = std::max(measure::now_ns(), spec.stop_ns);
}

}  // namespace

void h2_client(Stream& stream, const HttpClientSpec& spec, HttpSideResult& result) {
  H2Client c{stream, spec, result, nullptr, {}, {}, {}, 0, {}};
  c.path = spec.path;
  c.content_length = std::to_string(spec.request_bytes);
  const Session session = client_session(c);
  c.session = session.get();
  std::vector<std::byte> buffer(kH2ReadBytes);
  if (spec.rate_rps > 0) {
    h2_open_loop(c, buffer);
  } else {
    h2_closed_loop(c, buffer);
  }
  if (c.error.empty()) {
    nghttp2_session_terminate_session(c.session, NGHTTP2_NO_ERROR);  // GOAWAY: no more requests
    c.error = flush(c.session, stream);
  }
  result.error = std::move(c.error);
}

namespace {

// ---- server

struct Asked {
  std::string method;
  std::string path;
  std::size_t header_bytes = 0;
  std::uint64_t body = 0;
  std::uint64_t response_left = 0;
  bool answered = false;
};

struct H2Server {
  Stream& stream;
  HttpSideResult& result;
  std::map<std::int32_t, Asked> streams;
  std::string error;
};

int server_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
    static_cast<H2Server*>(user)->streams[frame->hd.stream_id] = Asked{};
  return 0;
}

int server_header(nghttp2_session* session, const nghttp2_frame* frame, const std::uint8_t* name,
                  std::size_t name_bytes, const std::uint8_t* value, std::size_t value_bytes, std::uint8_t,
                  void* user) {
  auto* s = static_cast<H2Server*>(user);
  const auto it = s->streams.find(frame->hd.stream_id);
  if (it == s->streams.end()) return 0;
  Asked& a = it->second;
  a.header_bytes += name_bytes + value_bytes;
  if (a.header_bytes > kMaxHttpHeaderBytes) {
    s->error = fmt::format("request {}'s headers passed {} KiB: the connection was ended (GOAWAY)",
                           s->result.transactions + 1, kMaxHttpHeaderBytes / 1024);
    nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  const std::string_view n(reinterpret_cast<const char*>(name), name_bytes);
  const std::string_view v(reinterpret_cast<const char*>(value), value_bytes);
  if (n == ":method") a.method = v;
  if (n == ":path") a.path = v;
  return 0;
}

int server_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t*, std::size_t n,
                void* user) {
  auto* s = static_cast<H2Server*>(user);
  const auto it = s->streams.find(id);
  if (it != s->streams.end()) it->second.body += n;
  return 0;
}

void respond(nghttp2_session* session, H2Server& s, std::int32_t id, Asked& a) {
  const auto size = response_size_of(a.path);
  const bool known = a.method == "GET" || a.method == "POST" || a.method == "HEAD";
  if (!known || !size) {
    const nghttp2_nv headers[] = {header(":status", known ? "404" : "405")};
    nghttp2_submit_response(session, id, headers, std::size(headers), nullptr);
    s.error = fmt::format("request {} asked for {} {}, which names no response size (/BYTES)",
                          s.result.transactions + 1, a.method.substr(0, 16), a.path.substr(0, 64));
    return;
  }
  const std::string length = std::to_string(*size);
  const nghttp2_nv headers[] = {header(":status", "200"), header("server", "tlscmp"),
                                header("content-type", "application/octet-stream"),
                                header("content-length", length)};
  a.response_left = a.method == "HEAD" ? 0 : *size;
  nghttp2_data_provider body{};
  body.source.ptr = &a.response_left;
  body.read_callback = read_zeros;
  nghttp2_submit_response(session, id, headers, std::size(headers), a.method == "HEAD" ? nullptr : &body);
  a.answered = true;
}

int server_frame(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
  auto* s = static_cast<H2Server*>(user);
  if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0)
    return 0;
  const auto it = s->streams.find(frame->hd.stream_id);
  if (it != s->streams.end() && !it->second.answered) respond(session, *s, it->first, it->second);
  return 0;
}

int server_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user) {
  auto* s = static_cast<H2Server*>(user);
  const auto it = s->streams.find(id);
  if (it == s->streams.end()) return 0;
  if (code == NGHTTP2_NO_ERROR && it->second.answered && it->second.response_left == 0) {
    ++s->result.transactions;
    s->result.bytes_received += it->second.body;
    s->result.end_ns = measure::now_ns();
  }
  s->streams.erase(it);
  return 0;
}

Session server_session(H2Server& s) {
  const Callbacks callbacks = new_callbacks();
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks.get(), server_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), server_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(), server_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks.get(), server_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(), server_stream_close);
  nghttp2_session* session = nullptr;
  if (nghttp2_session_server_new(&session, callbacks.get(), &s) != 0) throw std::bad_alloc();
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, spec::kMaxHttpStreams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<std::uint32_t>(kMaxHttpHeaderBytes)}};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
  return {session, nghttp2_session_del};
}

}  // namespace

void h2_server(Stream& stream, std::span<const std::byte> first, HttpSideResult& result) {
  H2Server s{stream, result, {}, {}};
  const Session session = server_session(s);
  if (!first.empty()) {
    const ssize_t used = nghttp2_session_mem_recv(
        session.get(), reinterpret_cast<const std::uint8_t*>(first.data()), first.size());
    if (used < 0) {
      result.error =
          fmt::format("the client's HTTP/2 is not valid: {}", nghttp2_strerror(static_cast<int>(used)));
      return;
    }
  }
  std::vector<std::byte> buffer(kH2ReadBytes);
  for (;;) {
    std::string failed = flush(session.get(), stream);
    if (failed.empty() && s.error.empty() && nghttp2_session_want_read(session.get()) == 0 &&
        nghttp2_session_want_write(session.get()) == 0)
      break;
    bool ended = false;
    std::size_t got = 0;
    if (failed.empty() && s.error.empty()) failed = feed(session.get(), stream, buffer, ended, got);
    if (!s.error.empty()) {
      (void)flush(session.get(), stream);  // the GOAWAY or the error answer
      result.error = s.error;
      break;
    }
    if (!failed.empty()) {
      result.error = fmt::format("on request {}: {}", result.transactions + 1, failed);
      break;
    }
    if (ended) break;
  }
  std::error_code ec;
  stream.shutdown_send(ec);
}

}  // namespace tlscmp::kinds
