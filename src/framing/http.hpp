#pragma once

// HTTP/1.1 and HTTP/2 on one connection as bytes in and bytes out, no
// socket: a client's requests and the answers it takes, a server's answers
// to what it is asked, each held to its caps. The http kind's threads drive
// them over a blocking connection; an event loop drives them without
// waiting. HTTP/1.1 through Debian's http-parser, HTTP/2 through nghttp2,
// so that neither is hand-written. Requests are a GET of the path, or a
// POST of `request_bytes` zeros to it; a server answers a GET or POST of
// /N with N bytes of zeros.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tlscmp::framing {

// The most a server takes of one request's headers, all together.
inline constexpr std::size_t kMaxHttpHeaderBytes = 16 * 1024;

// "HTTP/1.1", "HTTP/2" or "HTTP/3", as a version (1, 2 or 3) names it.
inline const char* http_version_name(std::uint32_t version) {
  return version == 3 ? "HTTP/3" : version == 2 ? "HTTP/2" : "HTTP/1.1";
}

// The body size a path names ("/4096", "/4096?x"), up to `most`; none where
// it names none.
std::optional<std::uint64_t> response_size_of(std::string_view path, std::uint64_t most);

// A server's answer to request `number`, a `method` of `path`: 200 and the
// body's size where the method is GET, POST or HEAD and the path names a
// size up to `most`; else 405 (another method) or 404, and the line that
// says why the connection ends.
struct HttpReply {
  unsigned status = 200;
  std::uint64_t body = 0;
  std::string refusal;  // "" for 200
};
HttpReply reply_to(std::string_view method, std::string_view path, std::uint64_t most, std::uint64_t number);

// What a client asks, each request alike.
struct HttpAsk {
  std::uint32_t version =
      1;                  // 1: HTTP/1.1, 2: HTTP/2 (3: HTTP/3, framing/http3.hpp; over a byte stream, HTTP/2)
  std::string authority;  // the Host header (:authority): "host:port"
  std::string path;
  std::uint64_t request_bytes = 0;  // 0: a GET; else a POST of this many bytes
};

// One response taken whole, with its request's times.
struct HttpAnswer {
  std::int64_t asked_ns = 0;  // the request's time: its send, or (open loop) its scheduled time
  std::int64_t first_ns = 0;  // its response's first byte
  std::int64_t done_ns = 0;   // its last
  std::uint64_t body = 0;     // the response's body bytes
};

// Bytes to send, gathered: what a codec has to send goes out in writes of
// up to kBytes, not a write (and a TLS record) per frame or piece.
class HttpOutput {
 public:
  static constexpr std::size_t kBytes = 64 * 1024;
  std::span<const std::byte> pending() const { return {bytes_.data() + at_, bytes_.size() - at_}; }
  void sent(std::size_t n);
  bool empty() const { return at_ == bytes_.size(); }
  std::size_t room() const { return kBytes > bytes_.size() ? kBytes - bytes_.size() : 0; }
  void add(std::span<const std::byte> bytes);
  void add(std::string_view text);
  void add_zeros(std::size_t n);

 private:
  std::vector<std::byte> bytes_;
  std::size_t at_ = 0;
};

// What a client's side counts, whatever its version: the requests asked.
class HttpAskTally {
 public:
  std::uint64_t asked() const { return asked_; }

 protected:
  std::uint64_t asked_ = 0;
};

// What a server's side counts, whatever its version: the requests
// answered, and the bodies they brought.
class HttpAnswerTally {
 public:
  std::uint64_t answered() const { return answered_; }
  std::uint64_t body_received() const { return body_received_; }

 protected:
  std::uint64_t answered_ = 0;
  std::uint64_t body_received_ = 0;
};

// A client's side of one connection.
class HttpClientCodec : public HttpAskTally {
 public:
  virtual ~HttpClientCodec() = default;
  // A request at `asked_ns`; HTTP/1.1 pipelines it behind those unanswered,
  // HTTP/2 opens a stream for it.
  virtual void ask(std::int64_t asked_ns) = 0;
  // No more requests (HTTP/2: a GOAWAY goes out with the rest).
  virtual void end() {}
  // What there is to send now, gathered; empty once all is out.
  virtual std::span<const std::byte> output() = 0;
  virtual void sent(std::size_t n) = 0;
  // The server's bytes, taken at `now`: each response they complete in
  // `answers`. "" or what is wrong (a status other than 200 and the
  // request it answered, bytes no request asked for, a protocol error).
  virtual std::string input(std::span<const std::byte> bytes, std::int64_t now,
                            std::vector<HttpAnswer>& answers) = 0;
  // Requests asked and not yet answered whole.
  virtual std::size_t in_flight() const = 0;
  // The server said it closes the connection after its last answer
  // (HTTP/1.1's Connection: close, HTTP/2's GOAWAY): no more requests.
  virtual bool server_closes() const { return false; }
};

// A server's side of one connection.
class HttpServerCodec : public HttpAnswerTally {
 public:
  virtual ~HttpServerCodec() = default;
  // The client's bytes: each request they complete answered (its answer in
  // output()). "" or why the connection ends: a request refused with its
  // status (400, 404, 405, 431: the answer is in output(), and over() says
  // so), or a protocol error.
  virtual std::string input(std::span<const std::byte> bytes) = 0;
  virtual std::span<const std::byte> output() = 0;
  virtual void sent(std::size_t n) = 0;
  // Nothing more to read: the connection ends once output() is empty (an
  // answer with Connection: close, an error answered, HTTP/2's GOAWAY).
  virtual bool over() const = 0;
  // Bytes of a request come but not yet whole (its end, then, is no clean one).
  virtual bool mid_request() const = 0;
};

// A client's line for an answer whose status is not 200 (HTTP/2 and 3).
std::string unexpected_status(const HttpAsk& ask, unsigned status);

std::unique_ptr<HttpClientCodec> http1_client(const HttpAsk& ask);
std::unique_ptr<HttpClientCodec> http2_client(const HttpAsk& ask);
// `most`: the largest body a path may ask for; `max_streams`: HTTP/2's
// requests in flight a client may have.
std::unique_ptr<HttpServerCodec> http1_server(std::uint64_t most);
std::unique_ptr<HttpServerCodec> http2_server(std::uint64_t most, std::uint32_t max_streams);

inline std::unique_ptr<HttpClientCodec> http_client(const HttpAsk& ask) {
  return ask.version >= 2 ? http2_client(ask) : http1_client(ask);
}
inline std::unique_ptr<HttpServerCodec> http_server(std::uint32_t version, std::uint64_t most,
                                                    std::uint32_t max_streams) {
  return version >= 2 ? http2_server(most, max_streams) : http1_server(most);
}

}  // namespace tlscmp::framing
