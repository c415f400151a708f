// HTTP/2 as bytes in and out (see framing/http.hpp), through Debian's
// nghttp2, its session driven in memory (nghttp2_session_mem_recv and
// mem_send): the client opens a stream a request; the server answers each
// request once it has its end, and holds each to its caps.

#include <nghttp2/nghttp2.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>

#include "framing/http.hpp"

namespace tlscmp::framing {
namespace {

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

// What the session has to send, gathered into `out` while it has room
// (the session serializes a frame at a time: the last may pass kBytes by
// a frame at most); "" or what failed.
std::string gather(nghttp2_session* session, HttpOutput& out) {
  while (out.room() > 0) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session, &data);
    if (n < 0) return fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n)));
    if (n == 0) break;
    out.add({reinterpret_cast<const std::byte*>(data), static_cast<std::size_t>(n)});
  }
  return {};
}

// Bytes fed to the session; "" or what is wrong.
std::string feed(nghttp2_session* session, std::span<const std::byte> bytes) {
  const ssize_t used =
      nghttp2_session_mem_recv(session, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  if (used < 0)
    return fmt::format("the peer's HTTP/2 is not valid: {}", nghttp2_strerror(static_cast<int>(used)));
  return {};
}

// ---- client

struct InFlight {
  std::int64_t asked_ns = 0;
  std::int64_t first_ns = 0;
  unsigned status = 0;
  std::uint64_t body = 0;
  std::uint64_t request_left = 0;  // the POST body still to send
};

class H2Client final : public HttpClientCodec {
 public:
  explicit H2Client(const HttpAsk& ask);

  void ask(std::int64_t asked_ns) override;
  void end() override { nghttp2_session_terminate_session(session_.get(), NGHTTP2_NO_ERROR); }
  std::span<const std::byte> output() override {
    if (out_.empty() && error_.empty()) error_ = gather(session_.get(), out_);
    return out_.pending();
  }
  void sent(std::size_t n) override { out_.sent(n); }
  std::string input(std::span<const std::byte> bytes, std::int64_t now,
                    std::vector<HttpAnswer>& answers) override;
  std::size_t in_flight() const override { return in_flight_.size(); }
  bool server_closes() const override { return nghttp2_session_want_read(session_.get()) == 0; }

 private:
  static int begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t name_bytes, const std::uint8_t* value, std::size_t value_bytes,
                       std::uint8_t, void* user);
  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t*, std::size_t n,
                     void* user);
  static int on_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user);

  HttpAsk ask_;
  std::string content_length_;
  Session session_{nullptr, nghttp2_session_del};
  HttpOutput out_;
  std::map<std::int32_t, InFlight> in_flight_;
  std::vector<HttpAnswer> done_;  // answered since input() last handed them on
  std::int64_t now_ = 0;          // input()'s time, for the callbacks
  bool heard_ = false;
  std::string error_;
};

H2Client::H2Client(const HttpAsk& ask) : ask_(ask), content_length_(std::to_string(ask.request_bytes)) {
  const Callbacks callbacks = new_callbacks();
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks.get(), begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(), on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(), on_close);
  nghttp2_session* session = nullptr;
  if (nghttp2_session_client_new(&session, callbacks.get(), this) != 0) throw std::bad_alloc();
  session_.reset(session);
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow}};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
}

void H2Client::ask(std::int64_t asked_ns) {
  const bool post = ask_.request_bytes > 0;
  const nghttp2_nv headers[] = {
      header(":method", post ? "POST" : "GET"), header(":scheme", "https"),
      header(":authority", ask_.authority),     header(":path", ask_.path),
      header("user-agent", "tlscmp"),           header("content-length", content_length_)};
  // The stream's entry holds the body's count, which the provider reads from.
  const auto next = static_cast<std::int32_t>(nghttp2_session_get_next_stream_id(session_.get()));
  InFlight& entry = in_flight_[next];
  entry.request_left = ask_.request_bytes;
  entry.asked_ns = asked_ns;
  nghttp2_data_provider body{};
  body.source.ptr = &entry.request_left;
  body.read_callback = read_zeros;
  const std::int32_t id = nghttp2_submit_request(
      session_.get(), nullptr, headers, std::size(headers) - (post ? 0 : 1), post ? &body : nullptr, this);
  if (id != next) {
    in_flight_.erase(next);
    if (error_.empty())
      error_ = fmt::format("HTTP/2: cannot submit request {}: {}", asked_ + 1,
                           id < 0 ? nghttp2_strerror(id) : "another stream id than the next");
    return;
  }
  ++asked_;
}

std::string H2Client::input(std::span<const std::byte> bytes, std::int64_t now,
                            std::vector<HttpAnswer>& answers) {
  constexpr std::string_view kStatus = "HTTP/1.";
  if (!heard_ && bytes.size() >= kStatus.size() &&
      std::string_view(reinterpret_cast<const char*>(bytes.data()), kStatus.size()) == kStatus)
    return "the server answered in HTTP/1.x: without TLS it takes HTTP/2 only on a port set for it "
           "(nginx: listen PORT http2); give that port, an https:// URL, or --http 1.1";
  heard_ = heard_ || !bytes.empty();
  now_ = now;
  std::string failed = feed(session_.get(), bytes);
  answers.insert(answers.end(), done_.begin(), done_.end());
  done_.clear();
  if (!error_.empty()) return error_;
  return failed;
}

int H2Client::begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* c = static_cast<H2Client*>(user);
  const auto it = c->in_flight_.find(frame->hd.stream_id);
  if (it != c->in_flight_.end() && it->second.first_ns == 0) it->second.first_ns = c->now_;
  return 0;
}

int H2Client::on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                        std::size_t name_bytes, const std::uint8_t* value, std::size_t value_bytes,
                        std::uint8_t, void* user) {
  auto* c = static_cast<H2Client*>(user);
  if (std::string_view(reinterpret_cast<const char*>(name), name_bytes) != ":status") return 0;
  const auto it = c->in_flight_.find(frame->hd.stream_id);
  if (it != c->in_flight_.end())
    it->second.status = static_cast<unsigned>(
        std::atoi(std::string(reinterpret_cast<const char*>(value), value_bytes).c_str()));
  return 0;
}

int H2Client::on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t*, std::size_t n,
                      void* user) {
  auto* c = static_cast<H2Client*>(user);
  const auto it = c->in_flight_.find(id);
  if (it != c->in_flight_.end()) it->second.body += n;
  return 0;
}

int H2Client::on_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user) {
  auto* c = static_cast<H2Client*>(user);
  const auto it = c->in_flight_.find(id);
  if (it == c->in_flight_.end()) return 0;
  const InFlight f = it->second;
  c->in_flight_.erase(it);
  if (!c->error_.empty()) return 0;
  if (code != NGHTTP2_NO_ERROR) {
    c->error_ = fmt::format("the server reset the stream of a request ({})", nghttp2_http2_strerror(code));
  } else if (f.status != 200) {
    c->error_ = unexpected_status(c->ask_, f.status);
  } else {
    c->done_.push_back({f.asked_ns, f.first_ns != 0 ? f.first_ns : c->now_, c->now_, f.body});
  }
  return 0;
}

// ---- server

struct Asked {
  std::string method;
  std::string path;
  std::size_t header_bytes = 0;
  std::uint64_t body = 0;
  std::uint64_t response_left = 0;
  bool answered = false;
};

class H2Server final : public HttpServerCodec {
 public:
  H2Server(std::uint64_t most, std::uint32_t max_streams);

  std::string input(std::span<const std::byte> bytes) override {
    std::string failed = feed(session_.get(), bytes);
    if (!error_.empty()) return error_;
    return failed;
  }
  std::span<const std::byte> output() override {
    if (out_.empty()) {
      std::string failed = gather(session_.get(), out_);
      if (error_.empty()) error_ = std::move(failed);
    }
    return out_.pending();
  }
  void sent(std::size_t n) override { out_.sent(n); }
  bool over() const override {
    return !error_.empty() || (nghttp2_session_want_read(session_.get()) == 0 &&
                               nghttp2_session_want_write(session_.get()) == 0);
  }
  bool mid_request() const override { return !streams_.empty(); }

 private:
  static int begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_header(nghttp2_session* session, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t name_bytes, const std::uint8_t* value, std::size_t value_bytes,
                       std::uint8_t, void* user);
  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t*, std::size_t n,
                     void* user);
  static int on_frame(nghttp2_session* session, const nghttp2_frame* frame, void* user);
  static int on_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user);
  void respond(std::int32_t id, Asked& a);

  std::uint64_t most_;
  Session session_{nullptr, nghttp2_session_del};
  HttpOutput out_;
  std::map<std::int32_t, Asked> streams_;
  std::string error_;
};

H2Server::H2Server(std::uint64_t most, std::uint32_t max_streams) : most_(most) {
  const Callbacks callbacks = new_callbacks();
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks.get(), begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(), on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks.get(), on_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(), on_close);
  nghttp2_session* session = nullptr;
  if (nghttp2_session_server_new(&session, callbacks.get(), this) != 0) throw std::bad_alloc();
  session_.reset(session);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<std::uint32_t>(kMaxHttpHeaderBytes)}};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
}

int H2Server::begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
    static_cast<H2Server*>(user)->streams_[frame->hd.stream_id] = Asked{};
  return 0;
}

int H2Server::on_header(nghttp2_session* session, const nghttp2_frame* frame, const std::uint8_t* name,
                        std::size_t name_bytes, const std::uint8_t* value, std::size_t value_bytes,
                        std::uint8_t, void* user) {
  auto* s = static_cast<H2Server*>(user);
  const auto it = s->streams_.find(frame->hd.stream_id);
  if (it == s->streams_.end()) return 0;
  Asked& a = it->second;
  a.header_bytes += name_bytes + value_bytes;
  if (a.header_bytes > kMaxHttpHeaderBytes) {
    s->error_ = fmt::format("request {}'s headers passed {} KiB: the connection was ended (GOAWAY)",
                            s->answered_ + 1, kMaxHttpHeaderBytes / 1024);
    nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  const std::string_view n(reinterpret_cast<const char*>(name), name_bytes);
  const std::string_view v(reinterpret_cast<const char*>(value), value_bytes);
  if (n == ":method") a.method = v;
  if (n == ":path") a.path = v;
  return 0;
}

int H2Server::on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t*, std::size_t n,
                      void* user) {
  auto* s = static_cast<H2Server*>(user);
  const auto it = s->streams_.find(id);
  if (it != s->streams_.end()) it->second.body += n;
  return 0;
}

void H2Server::respond(std::int32_t id, Asked& a) {
  const HttpReply reply = reply_to(a.method, a.path, most_, answered_ + 1);
  if (reply.status != 200) {
    const std::string status = std::to_string(reply.status);
    const nghttp2_nv headers[] = {header(":status", status)};
    nghttp2_submit_response(session_.get(), id, headers, std::size(headers), nullptr);
    error_ = reply.refusal;
    return;
  }
  const std::string length = std::to_string(reply.body);
  const nghttp2_nv headers[] = {header(":status", "200"), header("server", "tlscmp"),
                                header("content-type", "application/octet-stream"),
                                header("content-length", length)};
  a.response_left = a.method == "HEAD" ? 0 : reply.body;
  nghttp2_data_provider body{};
  body.source.ptr = &a.response_left;
  body.read_callback = read_zeros;
  nghttp2_submit_response(session_.get(), id, headers, std::size(headers),
                          a.method == "HEAD" ? nullptr : &body);
  a.answered = true;
}

int H2Server::on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* s = static_cast<H2Server*>(user);
  if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0)
    return 0;
  const auto it = s->streams_.find(frame->hd.stream_id);
  if (it != s->streams_.end() && !it->second.answered) s->respond(it->first, it->second);
  return 0;
}

int H2Server::on_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user) {
  auto* s = static_cast<H2Server*>(user);
  const auto it = s->streams_.find(id);
  if (it == s->streams_.end()) return 0;
  if (code == NGHTTP2_NO_ERROR && it->second.answered && it->second.response_left == 0) {
    ++s->answered_;
    s->body_received_ += it->second.body;
  }
  s->streams_.erase(it);
  return 0;
}

}  // namespace

std::unique_ptr<HttpClientCodec> http2_client(const HttpAsk& ask) {
  return std::make_unique<H2Client>(ask);
}

std::unique_ptr<HttpServerCodec> http2_server(std::uint64_t most, std::uint32_t max_streams) {
  return std::make_unique<H2Server>(most, max_streams);
}

}  // namespace tlscmp::framing
