// One connection's HTTP/1.1 or HTTP/2, client and server, over a blocking
// byte stream: the version's framing (framing/http.hpp) driven a request,
// a read and a write at a time, in the client's loops (loops.hpp).

#include <fmt/format.h>
#include <algorithm>

#include "kinds/http/http.hpp"
#include "kinds/http/loops.hpp"
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

// The client's link (loops.hpp) over a byte stream: what it reads into,
// kept across its reads.
class ByteLink {
 public:
  ByteLink(Stream& stream, framing::HttpClientCodec& codec) : stream_(stream), codec_(codec) {}
  void ask(std::int64_t asked_ns) { codec_.ask(asked_ns); }
  std::size_t in_flight() const { return codec_.in_flight(); }
  std::uint64_t asked() const { return codec_.asked(); }
  bool server_closes() const { return codec_.server_closes(); }
  bool heard() const { return heard_; }
  std::string write_out() { return kinds::write_out(stream_, codec_, "sending request", codec_.asked()); }
  bool readable_within(std::chrono::nanoseconds wait, std::error_code& ec) {
    return stream_.has_buffered() || stream_.readable_within(wait, ec);
  }
  std::string failure(std::error_code ec) const { return describe(ec, stream_.error_detail()); }
  std::string take(bool now, HttpSideResult& result);

 private:
  Stream& stream_;
  framing::HttpClientCodec& codec_;
  std::vector<std::byte> buffer_ = std::vector<std::byte>(kReadBytes);
  std::vector<framing::HttpAnswer> answers_;
  bool heard_ = false;
};

// The server's bytes in, read (without waiting where `now`), taken whole
// answers counted; "" or what failed.
std::string ByteLink::take(bool now, HttpSideResult& result) {
  std::error_code ec;
  const std::size_t got = now ? stream_.read_now(buffer_, ec) : stream_.read_some(buffer_, ec);
  if (ec == TransportErrc::would_block && now) return {};
  const std::uint64_t number = result.transactions + 1;
  if (ec == TransportErrc::eof)
    return fmt::format("the server ended the connection with request {} unanswered", number);
  if (ec) return fmt::format("awaiting the response to request {}: {}", number, failure(ec));
  heard_ = heard_ || got > 0;
  answers_.clear();
  std::string failed = codec_.input({buffer_.data(), got}, measure::now_ns(), answers_);
  http_loops::count(answers_, result);
  return failed;
}

}  // namespace

void http_client_exchange(Stream& stream, const HttpClientSpec& spec, HttpSideResult& result) {
  const std::unique_ptr<framing::HttpClientCodec> codec =
      framing::http_client({spec.version, spec.authority, spec.path, spec.request_bytes});
  ByteLink link(stream, *codec);
  result.error = http_loops::run_loop(link, spec, result);
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
