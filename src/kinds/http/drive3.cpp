// One connection's HTTP/3, client and server, on QUIC's streams by number
// (transport/stream_group.hpp): nghttp3's framing (framing/http3.hpp), a
// request a stream, each side's control and QPACK streams beside them.
// The client's loops are every version's (loops.hpp); the test's first
// stream, on which its preamble came, carries each side's end, as a byte
// stream's end does for HTTP/1.1 and 2.

#include <fmt/format.h>

#include "framing/http3.hpp"
#include "kinds/http/http.hpp"
#include "kinds/http/loops.hpp"
#include "measure/clock.hpp"
#include "transport/errors.hpp"

namespace tlscmp::kinds {
namespace {

// Whatever the codec has to send, written a stream's piece at a time; "" or what failed.
template <typename Codec>
std::string write_pieces(StreamGroup& group, Codec& codec, std::chrono::milliseconds idle, const char* doing,
                         std::uint64_t number) {
  for (framing::StreamBytes piece = codec.output(); piece.id >= 0; piece = codec.output()) {
    std::error_code ec;
    group.write(piece.id, piece.bytes, piece.fin, idle, ec);
    if (ec) return fmt::format("{} {}: {}", doing, number, describe(ec, group.error_detail()));
    codec.sent(piece);
  }
  return {};
}

// This side's control and QPACK streams, opened and bound; "" or what failed.
std::string bind_streams(StreamGroup& group, framing::Http3Codec& codec) {
  const std::int64_t control = group.open(false);
  const std::int64_t encoder = group.open(false);
  const std::int64_t decoder = group.open(false);
  return codec.bind(control, encoder, decoder);
}

std::string nothing_for(std::chrono::milliseconds idle) {
  return fmt::format("nothing came for {:g} s (--idle-timeout)", std::chrono::duration<double>(idle).count());
}

// The client's link (loops.hpp) on a connection's streams: a request a new
// bidirectional stream.
class GroupLink {
 public:
  GroupLink(StreamGroup& group, framing::Http3ClientCodec& codec, std::chrono::milliseconds idle)
      : group_(group), codec_(codec), idle_(idle) {}
  void ask(std::int64_t asked_ns) { codec_.ask(group_.open(true), asked_ns); }
  std::size_t in_flight() const { return codec_.in_flight(); }
  std::uint64_t asked() const { return codec_.asked(); }
  bool server_closes() const { return codec_.server_closes(); }
  bool heard() const { return heard_; }
  std::string write_out() { return write_pieces(group_, codec_, idle_, "sending request", codec_.asked()); }
  bool readable_within(std::chrono::nanoseconds wait, std::error_code& ec) {
    return group_.readable_within(wait, ec);
  }
  std::string failure(std::error_code ec) const { return describe(ec, group_.error_detail()); }
  std::string take(bool now, HttpSideResult& result);

 private:
  StreamGroup& group_;
  framing::Http3ClientCodec& codec_;
  std::chrono::milliseconds idle_;
  std::vector<framing::HttpAnswer> answers_;
  bool heard_ = false;
};

std::string GroupLink::take(bool now, HttpSideResult& result) {
  const std::uint64_t number = result.transactions + 1;
  std::error_code ec;
  if (!now && !group_.readable_within(idle_, ec))
    return fmt::format("awaiting the response to request {}: {}", number, nothing_for(idle_));
  std::string failed;
  group_.read(
      [&](std::int64_t id, std::span<const std::byte> bytes, bool fin) {
        if (!failed.empty()) return;
        if (id == group_.base_id()) {
          if (fin) failed = fmt::format("the server ended the test with request {} unanswered", number);
          return;
        }
        heard_ = true;
        answers_.clear();
        failed = codec_.input({id, bytes, fin}, measure::now_ns(), answers_);
        http_loops::count(answers_, result);
      },
      ec);
  if (ec && failed.empty())
    failed = ec == TransportErrc::eof
                 ? fmt::format("the server ended the connection with request {} unanswered", number)
                 : fmt::format("awaiting the response to request {}: {}", number, failure(ec));
  return failed;
}

}  // namespace

void http3_client_exchange(StreamGroup& group, const HttpClientSpec& spec, HttpSideResult& result) {
  const std::unique_ptr<framing::Http3ClientCodec> codec =
      framing::http3_client({spec.version, spec.authority, spec.path, spec.request_bytes});
  if ((result.error = bind_streams(group, *codec)).empty()) {
    GroupLink link(group, *codec, spec.idle_timeout);
    result.error = http_loops::run_loop(link, spec, result);
  }
}

void http3_server_exchange(Stream& stream, StreamGroup& group, std::chrono::milliseconds idle,
                           HttpSideResult& result) {
  const std::unique_ptr<framing::Http3ServerCodec> codec = framing::http3_server(kMaxHttpResponseBytes);
  std::string failed = bind_streams(group, *codec);
  bool ended = false;          // the client's end of the test, on the first stream
  std::uint64_t answered = 0;  // as of the last write: the window ends with the last answer out
  while (failed.empty()) {
    failed = write_pieces(group, *codec, idle, "answering request", codec->answered() + 1);
    if (codec->answered() != answered) {
      answered = codec->answered();
      result.end_ns = measure::now_ns();
    }
    if (!failed.empty() || ended) break;
    std::error_code ec;
    if (!group.readable_within(idle, ec)) {
      failed = fmt::format("reading request {}: {}", answered + 1, nothing_for(idle));
      break;
    }
    group.read(
        [&](std::int64_t id, std::span<const std::byte> bytes, bool fin) {
          if (!failed.empty()) return;
          if (id == group.base_id()) {
            ended = ended || fin;
          } else {
            failed = codec->input({id, bytes, fin});
          }
        },
        ec);
    if (ec && failed.empty())
      failed = fmt::format("reading request {}: {}", answered + 1, describe(ec, group.error_detail()));
  }
  if (failed.empty() && codec->mid_request())
    failed = fmt::format("the client ended the test with request {} unanswered", codec->answered() + 1);
  result.transactions = codec->answered();
  result.bytes_received = codec->body_received();
  result.error = failed;
  std::error_code ignored;
  stream.shutdown_send(ignored);  // ours, after the client's
}

}  // namespace tlscmp::kinds
