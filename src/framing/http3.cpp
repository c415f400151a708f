// HTTP/3 as bytes in and out of a QUIC connection's streams (see
// framing/http3.hpp), through Debian's nghttp3 driven in memory: what it
// has to send is taken a stream at a time (nghttp3_conn_writev_stream),
// what came is fed a stream at a time (nghttp3_conn_read_stream). The
// QUIC stack below keeps what it was given until the peer acknowledges
// it, so bytes count as acknowledged once written; a request's stream is
// closed to nghttp3 once both its ends are through.

#include "framing/http3.hpp"

#include "error.hpp"

#if TLSCMP_HAVE_HTTP3

#include <nghttp3/nghttp3.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <new>

namespace tlscmp::framing {

bool has_http3(std::string* why) {
  (void)why;
  return true;
}

std::string http3_library() {
  const nghttp3_info* info = nghttp3_version(0);
  return fmt::format("yes, nghttp3 {}", info != nullptr ? info->version_str : "?");
}

namespace {

constexpr std::size_t kH3ZeroBlock = 16 * 1024;
const std::uint8_t kH3Zeros[kH3ZeroBlock] = {};

nghttp3_nv h3_header(std::string_view name, std::string_view value) {
  return {reinterpret_cast<const std::uint8_t*>(name.data()),
          reinterpret_cast<const std::uint8_t*>(value.data()), name.size(), value.size(),
          NGHTTP3_NV_FLAG_NONE};
}

std::string_view h3_text_of(nghttp3_rcbuf* buffer) {
  const nghttp3_vec v = nghttp3_rcbuf_get_buf(buffer);
  return {reinterpret_cast<const char*>(v.base), v.len};
}

// What client and server share: the connection, its output a stream at a
// time, the bodies it sends (zeros, `left` of them a stream).
class H3Session {
 public:
  virtual ~H3Session() {
    if (conn_ != nullptr) nghttp3_conn_del(conn_);
  }

  std::string bind_streams(std::int64_t control, std::int64_t encoder, std::int64_t decoder) {
    int rv = nghttp3_conn_bind_control_stream(conn_, control);
    if (rv == 0) rv = nghttp3_conn_bind_qpack_streams(conn_, encoder, decoder);
    return rv == 0 ? std::string() : fmt::format("HTTP/3: cannot bind its streams: {}", nghttp3_strerror(rv));
  }

  StreamBytes next_output() {
    if (!error_.empty()) return {};
    nghttp3_vec vec[16];
    std::int64_t id = -1;
    int fin = 0;
    const nghttp3_ssize n = nghttp3_conn_writev_stream(conn_, &id, &fin, vec, std::size(vec));
    if (n < 0) {
      error_ = fmt::format("HTTP/3: {}", nghttp3_strerror(static_cast<int>(n)));
      return {};
    }
    if (id < 0) return {};
    out_.clear();
    for (nghttp3_ssize i = 0; i < n; ++i) {
      const auto* base = reinterpret_cast<const std::byte*>(vec[i].base);
      out_.insert(out_.end(), base, base + vec[i].len);
    }
    return {id, out_, fin != 0};
  }

  // The piece written: nghttp3 moves on past it, and may let its bytes go.
  void written(const StreamBytes& piece) {
    nghttp3_conn_add_write_offset(conn_, piece.id, piece.bytes.size());
    nghttp3_conn_add_ack_offset(conn_, piece.id, piece.bytes.size());
  }

  // The peer's bytes on a stream; "" or what is wrong.
  std::string feed(const StreamBytes& in) {
    const nghttp3_ssize used =
        nghttp3_conn_read_stream(conn_, in.id, reinterpret_cast<const std::uint8_t*>(in.bytes.data()),
                                 in.bytes.size(), in.fin ? 1 : 0);
    if (used < 0 && error_.empty())
      return fmt::format("the peer's HTTP/3 is not valid: {}", nghttp3_strerror(static_cast<int>(used)));
    return error_;
  }

  // A stream both of whose ends are through, closed to nghttp3.
  void close(std::int64_t id) { nghttp3_conn_close_stream(conn_, id, NGHTTP3_H3_NO_ERROR); }

 protected:
  // The body bytes still to send on stream `id` (null: none).
  virtual std::uint64_t* left_of(std::int64_t id) = 0;

  static nghttp3_ssize read_zeros(nghttp3_conn*, std::int64_t id, nghttp3_vec* vec, std::size_t count,
                                  std::uint32_t* flags, void* user, void*) {
    std::uint64_t* left = static_cast<H3Session*>(user)->left_of(id);
    std::size_t i = 0;
    for (; left != nullptr && *left > 0 && i < count; ++i) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(*left, kH3ZeroBlock));
      vec[i].base = const_cast<std::uint8_t*>(kH3Zeros);
      vec[i].len = n;
      *left -= n;
    }
    if (left == nullptr || *left == 0) *flags |= NGHTTP3_DATA_FLAG_EOF;
    return static_cast<nghttp3_ssize>(i);
  }

  nghttp3_conn* conn_ = nullptr;
  std::vector<std::byte> out_;
  std::string error_;
};

// ---- client

struct H3InFlight {
  std::int64_t asked_ns = 0;
  std::int64_t first_ns = 0;
  unsigned status = 0;
  std::uint64_t body = 0;
  std::uint64_t request_left = 0;
  bool sent_end = false;  // the request's end is written
  bool got_end = false;   // the response's
};

class H3Client final : public Http3ClientCodec, H3Session {
 public:
  explicit H3Client(const HttpAsk& ask);
  std::string bind(std::int64_t control, std::int64_t encoder, std::int64_t decoder) override {
    return bind_streams(control, encoder, decoder);
  }
  StreamBytes output() override { return next_output(); }
  void sent(const StreamBytes& piece) override;
  void ask(std::int64_t stream, std::int64_t asked_ns) override;
  std::string input(const StreamBytes& in, std::int64_t now, std::vector<HttpAnswer>& answers) override;
  std::size_t in_flight() const override { return in_flight_.size(); }
  bool server_closes() const override { return goaway_; }

 private:
  // The codec a callback's user data (the session, as the connection holds it) belongs to.
  static H3Client* self(void* user) { return static_cast<H3Client*>(static_cast<H3Session*>(user)); }
  std::uint64_t* left_of(std::int64_t id) override {
    const auto it = in_flight_.find(id);
    return it == in_flight_.end() ? nullptr : &it->second.request_left;
  }
  void finish(std::map<std::int64_t, H3InFlight>::iterator it);
  static int begin_headers(nghttp3_conn*, std::int64_t id, void* user, void*);
  static int on_header(nghttp3_conn*, std::int64_t id, std::int32_t token, nghttp3_rcbuf*,
                       nghttp3_rcbuf* value, std::uint8_t, void* user, void*);
  static int on_data(nghttp3_conn*, std::int64_t id, const std::uint8_t*, std::size_t n, void* user, void*);
  static int on_shutdown(nghttp3_conn*, std::int64_t, void* user) {
    self(user)->goaway_ = true;
    return 0;
  }

  HttpAsk ask_;
  std::string content_length_;
  std::map<std::int64_t, H3InFlight> in_flight_;
  std::vector<HttpAnswer> done_;
  std::int64_t now_ = 0;
  bool goaway_ = false;
};

H3Client::H3Client(const HttpAsk& ask) : ask_(ask), content_length_(std::to_string(ask.request_bytes)) {
  nghttp3_callbacks callbacks{};
  callbacks.begin_headers = begin_headers;
  callbacks.recv_header = on_header;
  callbacks.recv_data = on_data;
  callbacks.shutdown = on_shutdown;
  nghttp3_settings settings;
  nghttp3_settings_default(&settings);
  if (nghttp3_conn_client_new(&conn_, &callbacks, &settings, nullptr, static_cast<H3Session*>(this)) != 0)
    throw std::bad_alloc();
}

void H3Client::ask(std::int64_t stream, std::int64_t asked_ns) {
  const bool post = ask_.request_bytes > 0;
  const nghttp3_nv headers[] = {
      h3_header(":method", post ? "POST" : "GET"), h3_header(":scheme", "https"),
      h3_header(":authority", ask_.authority),     h3_header(":path", ask_.path),
      h3_header("user-agent", "tlscmp"),           h3_header("content-length", content_length_)};
  H3InFlight& entry = in_flight_[stream];
  entry.asked_ns = asked_ns;
  entry.request_left = ask_.request_bytes;
  nghttp3_data_reader body{read_zeros};
  const int rv = nghttp3_conn_submit_request(conn_, stream, headers, std::size(headers) - (post ? 0 : 1),
                                             post ? &body : nullptr, nullptr);
  if (rv != 0) {
    in_flight_.erase(stream);
    if (error_.empty())
      error_ = fmt::format("HTTP/3: cannot submit request {}: {}", asked_ + 1, nghttp3_strerror(rv));
    return;
  }
  ++asked_;
}

void H3Client::sent(const StreamBytes& piece) {
  written(piece);
  const auto it = in_flight_.find(piece.id);
  if (it == in_flight_.end() || !piece.fin) return;
  it->second.sent_end = true;
  if (it->second.got_end) finish(it);
}

std::string H3Client::input(const StreamBytes& in, std::int64_t now, std::vector<HttpAnswer>& answers) {
  now_ = now;
  std::string failed = feed(in);
  if (in.fin) {
    const auto it = in_flight_.find(in.id);
    if (it != in_flight_.end()) {
      it->second.got_end = true;
      if (it->second.sent_end) finish(it);
    }
  }
  answers.insert(answers.end(), done_.begin(), done_.end());
  done_.clear();
  return error_.empty() ? failed : error_;
}

// A request's stream through both ways: its answer taken, or what was wrong with it.
void H3Client::finish(std::map<std::int64_t, H3InFlight>::iterator it) {
  const H3InFlight f = it->second;
  close(it->first);
  in_flight_.erase(it);
  if (!error_.empty()) return;
  if (f.status != 200) {
    error_ = unexpected_status(ask_, f.status);
    return;
  }
  done_.push_back({f.asked_ns, f.first_ns != 0 ? f.first_ns : now_, now_, f.body});
}

int H3Client::begin_headers(nghttp3_conn*, std::int64_t id, void* user, void*) {
  auto* c = self(user);
  const auto it = c->in_flight_.find(id);
  if (it != c->in_flight_.end() && it->second.first_ns == 0) it->second.first_ns = c->now_;
  return 0;
}

int H3Client::on_header(nghttp3_conn*, std::int64_t id, std::int32_t token, nghttp3_rcbuf*,
                        nghttp3_rcbuf* value, std::uint8_t, void* user, void*) {
  auto* c = self(user);
  const auto it = c->in_flight_.find(id);
  if (token == NGHTTP3_QPACK_TOKEN__STATUS && it != c->in_flight_.end())
    it->second.status = static_cast<unsigned>(std::atoi(std::string(h3_text_of(value)).c_str()));
  return 0;
}

int H3Client::on_data(nghttp3_conn*, std::int64_t id, const std::uint8_t*, std::size_t n, void* user, void*) {
  auto* c = self(user);
  const auto it = c->in_flight_.find(id);
  if (it != c->in_flight_.end()) it->second.body += n;
  return 0;
}

// ---- server

struct H3Asked {
  std::string method;
  std::string path;
  std::size_t header_bytes = 0;
  std::uint64_t body = 0;
  std::uint64_t response_left = 0;
  bool answered = false;  // its answer submitted
};

class H3Server final : public Http3ServerCodec, H3Session {
 public:
  explicit H3Server(std::uint64_t most);
  std::string bind(std::int64_t control, std::int64_t encoder, std::int64_t decoder) override {
    return bind_streams(control, encoder, decoder);
  }
  StreamBytes output() override { return next_output(); }
  void sent(const StreamBytes& piece) override;
  std::string input(const StreamBytes& in) override {
    std::string failed = feed(in);
    return error_.empty() ? failed : error_;
  }
  bool mid_request() const override {
    return std::any_of(streams_.begin(), streams_.end(), [](const auto& s) { return !s.second.answered; });
  }

 private:
  static H3Server* self(void* user) { return static_cast<H3Server*>(static_cast<H3Session*>(user)); }
  std::uint64_t* left_of(std::int64_t id) override {
    const auto it = streams_.find(id);
    return it == streams_.end() ? nullptr : &it->second.response_left;
  }
  void respond(std::int64_t id, H3Asked& a);
  static int begin_headers(nghttp3_conn*, std::int64_t id, void* user, void*) {
    self(user)->streams_[id] = H3Asked{};
    return 0;
  }
  static int on_header(nghttp3_conn*, std::int64_t id, std::int32_t token, nghttp3_rcbuf* name,
                       nghttp3_rcbuf* value, std::uint8_t, void* user, void*);
  static int on_data(nghttp3_conn*, std::int64_t id, const std::uint8_t*, std::size_t n, void* user, void*) {
    auto* s = self(user);
    if (const auto it = s->streams_.find(id); it != s->streams_.end()) it->second.body += n;
    return 0;
  }
  static int on_end(nghttp3_conn*, std::int64_t id, void* user, void*);
  static int on_close(nghttp3_conn*, std::int64_t id, std::uint64_t, void* user, void*) {
    self(user)->streams_.erase(id);
    return 0;
  }

  std::uint64_t most_;
  std::map<std::int64_t, H3Asked> streams_;
};

H3Server::H3Server(std::uint64_t most) : most_(most) {
  nghttp3_callbacks callbacks{};
  callbacks.begin_headers = begin_headers;
  callbacks.recv_header = on_header;
  callbacks.recv_data = on_data;
  callbacks.end_stream = on_end;
  callbacks.stream_close = on_close;
  nghttp3_settings settings;
  nghttp3_settings_default(&settings);
  settings.max_field_section_size = kMaxHttpHeaderBytes;
  if (nghttp3_conn_server_new(&conn_, &callbacks, &settings, nullptr, static_cast<H3Session*>(this)) != 0)
    throw std::bad_alloc();
  // The QUIC stack holds the client to its own stream limit.
  nghttp3_conn_set_max_client_streams_bidi(conn_, std::uint64_t{1} << 60);
}

int H3Server::on_header(nghttp3_conn*, std::int64_t id, std::int32_t token, nghttp3_rcbuf* name,
                        nghttp3_rcbuf* value, std::uint8_t, void* user, void*) {
  auto* s = self(user);
  const auto it = s->streams_.find(id);
  if (it == s->streams_.end()) return 0;
  H3Asked& a = it->second;
  a.header_bytes += h3_text_of(name).size() + h3_text_of(value).size();
  if (a.header_bytes > kMaxHttpHeaderBytes) {
    s->error_ = fmt::format("request {}'s headers passed {} KiB: the connection was ended", s->answered_ + 1,
                            kMaxHttpHeaderBytes / 1024);
    return NGHTTP3_ERR_CALLBACK_FAILURE;
  }
  if (token == NGHTTP3_QPACK_TOKEN__METHOD) a.method = h3_text_of(value);
  if (token == NGHTTP3_QPACK_TOKEN__PATH) a.path = h3_text_of(value);
  return 0;
}

int H3Server::on_end(nghttp3_conn*, std::int64_t id, void* user, void*) {
  auto* s = self(user);
  const auto it = s->streams_.find(id);
  if (it != s->streams_.end() && !it->second.answered) s->respond(id, it->second);
  return 0;
}

void H3Server::respond(std::int64_t id, H3Asked& a) {
  const HttpReply reply = reply_to(a.method, a.path, most_, answered_ + 1);
  if (reply.status != 200) {
    const std::string status = std::to_string(reply.status);
    const nghttp3_nv headers[] = {h3_header(":status", status)};
    nghttp3_conn_submit_response(conn_, id, headers, std::size(headers), nullptr);
    error_ = reply.refusal;
    return;
  }
  const std::string length = std::to_string(reply.body);
  const nghttp3_nv headers[] = {h3_header(":status", "200"), h3_header("server", "tlscmp"),
                                h3_header("content-type", "application/octet-stream"),
                                h3_header("content-length", length)};
  a.response_left = a.method == "HEAD" ? 0 : reply.body;
  nghttp3_data_reader body{read_zeros};
  const int rv = nghttp3_conn_submit_response(conn_, id, headers, std::size(headers),
                                              a.method == "HEAD" ? nullptr : &body);
  if (rv != 0)
    error_ = fmt::format("HTTP/3: cannot answer request {}: {}", answered_ + 1, nghttp3_strerror(rv));
  a.answered = true;
}

void H3Server::sent(const StreamBytes& piece) {
  written(piece);
  const auto it = streams_.find(piece.id);
  if (it == streams_.end() || !piece.fin || !it->second.answered) return;
  // The answer's end is out, after the request's: the request is done.
  ++answered_;
  body_received_ += it->second.body;
  close(piece.id);
  streams_.erase(piece.id);
}

}  // namespace

std::unique_ptr<Http3ClientCodec> http3_client(const HttpAsk& ask) {
  return std::make_unique<H3Client>(ask);
}

std::unique_ptr<Http3ServerCodec> http3_server(std::uint64_t most) {
  return std::make_unique<H3Server>(most);
}

}  // namespace tlscmp::framing

#else  // no nghttp3 in this build

namespace tlscmp::framing {

bool has_http3(std::string* why) {
  if (why != nullptr)
    *why = "HTTP/3 needs nghttp3 1.x (libnghttp3-dev, Debian 13), which this build was made without";
  return false;
}

std::string http3_library() {
  return "no";
}

namespace {
// Why the build has no HTTP/3, thrown.
[[noreturn]] void refuse_http3() {
  std::string why;
  has_http3(&why);
  throw Error(why);
}
}  // namespace

std::unique_ptr<Http3ClientCodec> http3_client(const HttpAsk&) {
  refuse_http3();
}

std::unique_ptr<Http3ServerCodec> http3_server(std::uint64_t) {
  refuse_http3();
}

}  // namespace tlscmp::framing

#endif
