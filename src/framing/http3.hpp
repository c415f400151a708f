#pragma once

// HTTP/3 (RFC 9114) on one QUIC connection as bytes in and out of its
// streams by number, no socket: a client's requests, each on a
// bidirectional stream of its own, and the answers it takes; a server's
// answers, held to its caps. The caller opens the streams
// (transport/stream_group.hpp) and moves their bytes; the framing, QPACK
// and the control streams are nghttp3's (Debian 13's libnghttp3-dev, 1.x;
// built where CMake finds it). Requests and answers are HTTP/1.1's and
// HTTP/2's (framing/http.hpp): a GET of the path or a POST of
// `request_bytes` zeros; a GET or POST of /N answered with N zeros.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "framing/http.hpp"

namespace tlscmp::framing {

// Whether this build has HTTP/3; where not, `why` (if given) says why.
bool has_http3(std::string* why = nullptr);
// "yes, nghttp3 1.8.0" where it has (the library's own version), for --version.
std::string http3_library();

// Bytes on one stream: its number, the bytes, and whether its end follows them.
struct StreamBytes {
  std::int64_t id = -1;  // -1: none
  std::span<const std::byte> bytes;
  bool fin = false;
};

class Http3Codec {
 public:
  virtual ~Http3Codec() = default;
  // This side's control stream and QPACK encoder and decoder streams (one
  // way, opened by the caller), before anything else; "" or what failed.
  virtual std::string bind(std::int64_t control, std::int64_t encoder, std::int64_t decoder) = 0;
  // What there is to send next, one stream's; id -1 once all is out.
  virtual StreamBytes output() = 0;
  // All of the last output taken by its stream (its end too, with fin).
  virtual void sent(const StreamBytes& piece) = 0;
};

class Http3ClientCodec : public Http3Codec, public HttpAskTally {
 public:
  // A request at `asked_ns` on `stream`, a bidirectional stream just opened.
  virtual void ask(std::int64_t stream, std::int64_t asked_ns) = 0;
  // The server's bytes on a stream (`in`), taken at `now`: each response
  // they complete in `answers`. "" or what is wrong (a status other than
  // 200 and the request it answered, a protocol error).
  virtual std::string input(const StreamBytes& in, std::int64_t now, std::vector<HttpAnswer>& answers) = 0;
  virtual std::size_t in_flight() const = 0;
  // The server sent GOAWAY: no more requests.
  virtual bool server_closes() const = 0;
};

class Http3ServerCodec : public Http3Codec, public HttpAnswerTally {
 public:
  // The client's bytes on a stream: each request they complete answered.
  // "" or why the connection ends (a request refused: 404, 405; headers
  // past kMaxHttpHeaderBytes; a protocol error).
  virtual std::string input(const StreamBytes& in) = 0;
  // Requests begun and not yet answered whole.
  virtual bool mid_request() const = 0;
};

// Throw tlscmp::Error (has_http3's reason) where the build has no HTTP/3.
std::unique_ptr<Http3ClientCodec> http3_client(const HttpAsk& ask);
// `most`: the largest body a path may ask for.
std::unique_ptr<Http3ServerCodec> http3_server(std::uint64_t most);

}  // namespace tlscmp::framing
