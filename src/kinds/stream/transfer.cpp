#include "kinds/stream/transfer.hpp"

#include <fmt/format.h>
#include <vector>

#include "framing/framing.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/payload.hpp"
#include "measure/units.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

// The clock work of the data loop: the receiver's recorded intervals, the
// live view, and (in duration mode) the sender's stop time. It reads the
// clock once per chunk only when one of those is wanted.
class Clockwork {
 public:
  Clockwork(const TransferSpec& spec, std::int64_t start_ns) : observer_(spec.observer) {
    if (spec.role == Role::receiver && spec.interval.count() > 0) {
      record_.emplace(start_ns, std::chrono::nanoseconds(spec.interval).count(), protocol::kMaxIntervals);
    }
    if (observer_ != nullptr && observer_->tick_period().count() > 0) {
      live_.emplace(start_ns, std::chrono::nanoseconds(observer_->tick_period()).count(), 0);
    }
    timed_ = spec.bytes == 0;
    stop_ns_ = start_ns + std::chrono::nanoseconds(spec.duration).count();
    if (spec.max_duration.count() > 0) {
      limit_ns_ = start_ns + std::chrono::nanoseconds(spec.max_duration).count();
      limit_ = spec.max_duration;
    }
    on_ = timed_ || record_ || live_ || limit_ns_ != 0;
  }

  bool on() const { return on_; }

  // After each chunk, with this side's total since go. Returns the time read.
  std::int64_t tick(std::uint64_t total_bytes) {
    const std::int64_t now = measure::now_ns();
    if (record_ && record_->due(now)) record_->advance(now, total_bytes);
    if (live_ && live_->due(now)) observer_->on_tick(live_->advance(now, total_bytes), total_bytes);
    return now;
  }

  // Duration mode: has the sender's time run out?
  bool time_is_up(std::int64_t now_ns) const { return timed_ && now_ns >= stop_ns_; }

  // The server's --max-duration: past it, the test fails. Returns the error, or "".
  std::string past_limit(std::int64_t now_ns) const {
    if (limit_ns_ == 0 || now_ns < limit_ns_) return {};
    return fmt::format("the test ran past this server's --max-duration of {} s",
                       std::chrono::duration<double>(limit_).count());
  }

  void finish(std::int64_t end_ns, std::uint64_t total_bytes, SideResult& result) {
    if (record_) {
      record_->finish(end_ns, total_bytes);
      for (const measure::Interval& i : record_->intervals())
        result.intervals.push_back({i.end_s * 1e6, i.bytes});
    }
  }

 private:
  measure::TransferObserver* observer_;
  std::optional<measure::IntervalRecorder> record_;
  std::optional<measure::IntervalRecorder> live_;
  bool timed_ = false;
  bool on_ = false;
  std::int64_t stop_ns_ = 0;
  std::int64_t limit_ns_ = 0;
  std::chrono::milliseconds limit_{0};
};

// Where a side's measurement window opened: its thread's CPU and system
// calls (read and write as the kernel counts them, sends as the stream does).
struct WindowStart {
  explicit WindowStart(const Stream& stream) : sends(stream.send_calls()) {}
  measure::CpuTimes cpu = measure::thread_cpu_times();
  std::optional<measure::IoCalls> io = measure::thread_io_calls();
  std::uint64_t sends = 0;
};

// Closes a side's measurement window, opened at `start_ns` and `opened`
// and ended at `end_ns`, with `bytes` moved; adds the socket settings.
void close_window(SideResult& result, const Stream& stream, std::uint64_t bytes, std::int64_t start_ns,
                  std::int64_t end_ns, const WindowStart& opened) {
  const measure::CpuTimes cpu = measure::thread_cpu_times() - opened.cpu;
  if (const std::optional<measure::IoCalls> io = measure::io_calls_since(opened.io)) {
    result.read_calls = io->reads;
    result.write_calls = io->writes + (stream.send_calls() - opened.sends);
  }
  result.bytes = bytes;
  result.window_start_ns = start_ns;
  result.elapsed_us = measure::ns_to_us(end_ns - start_ns);
  result.cpu_user_s = cpu.user_s;
  result.cpu_system_s = cpu.system_s;
  const SocketSettings settings = socket_settings(stream.native_handle());
  result.sndbuf_bytes = settings.sndbuf_bytes;
  result.rcvbuf_bytes = settings.rcvbuf_bytes;
  result.mss_bytes = settings.mss_bytes;
  result.congestion = settings.congestion;
}

// "35.9 MB": decimal megabytes, as MB/s are.
std::string megabytes(std::uint64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

std::string failure(const Stream& stream, const std::error_code& ec, const TransferSpec& spec,
                    std::uint64_t done, std::uint64_t total) {
  const bool sending = spec.role == Role::sender;
  // A stall: nothing moved for the whole idle timeout (SO_RCVTIMEO/SO_SNDTIMEO).
  if (ec == TransportErrc::timeout) {
    return fmt::format("no data {}for {:g} s after {}{} {}", sending ? "moved " : "",
                       std::chrono::duration<double>(spec.idle_timeout).count(), megabytes(done),
                       total > 0 ? " of " + megabytes(total) : "", sending ? "sent" : "received");
  }
  if (ec == TransportErrc::too_slow) {
    return fmt::format(
        "the peer moved less than {} a second over {:g} s (this server's --min-rate) after {}{} {}",
        measure::format_bytes(spec.min_rate), std::chrono::duration<double>(spec.idle_timeout).count(),
        megabytes(done), total > 0 ? " of " + megabytes(total) : "", sending ? "sent" : "received");
  }
  const std::string of = total > 0 ? fmt::format("{} of {}", done, total) : fmt::format("{}", done);
  if (ec == TransportErrc::eof) return fmt::format("the peer closed the data connection after {} bytes", of);
  return fmt::format("{} after {} bytes: {}", sending ? "sending failed" : "receiving failed", of,
                     describe(ec, stream.error_detail()));
}

SideResult send_payload(Stream& stream, const TransferSpec& spec) {
  SideResult result;
  result.role = Role::sender;
  std::error_code ec;
  std::byte go{};
  stream.read_exact({&go, 1}, ec);
  if (ec || go != kGoByte) {
    result.error = ec ? fmt::format("no go from the receiver: {}", describe(ec, stream.error_detail()))
                      : "the receiver sent something other than go";
    return result;
  }
  set_nodelay(stream.native_handle(), spec.no_delay);
  // Messages (--msg-size) come from a framing source; a plain stream from one
  // chunk, filled once, or per write from the --verify pattern.
  std::optional<framing::Source> source;
  std::vector<std::byte> chunk;
  std::optional<measure::PayloadPattern> pattern;
  if (spec.msg_size > 0) {
    source.emplace(spec.framing, spec.msg_size, spec.chunk_bytes);
  } else {
    chunk.resize(spec.chunk_bytes);
    if (spec.verify_seed) {
      pattern.emplace(*spec.verify_seed);
    } else {
      measure::fill_plain(chunk);
    }
  }

  const WindowStart opened(stream);
  const std::int64_t start_ns = measure::now_ns();
  Clockwork clock(spec, start_ns);
  bool timed = spec.bytes == 0;
  std::uint64_t total = stream_bytes(spec);  // 0 while timed
  std::uint64_t sent = 0;
  std::string over_limit;
  while (timed || sent < total) {
    const std::uint64_t limit =
        timed ? spec.chunk_bytes : std::min<std::uint64_t>(spec.chunk_bytes, total - sent);
    std::span<const std::byte> piece;
    if (source) {
      piece = source->next(sent, limit);
    } else {
      if (pattern) pattern->fill({chunk.data(), static_cast<std::size_t>(limit)}, sent);
      piece = {chunk.data(), static_cast<std::size_t>(limit)};
    }
    stream.write_all(piece, ec);
    if (ec) break;
    sent += piece.size();
    if (clock.on()) {
      const std::int64_t now = clock.tick(sent);
      if (timed && clock.time_is_up(now)) {
        // Time is up: a message begun is finished, so that the receiver gets whole ones.
        timed = false;
        total = sent + (source ? source->to_message_end(sent) : 0);
      }
      if (!(over_limit = clock.past_limit(now)).empty()) break;
    }
  }
  const std::int64_t end_ns = measure::now_ns();
  close_window(result, stream, sent, start_ns, end_ns, opened);
  clock.finish(end_ns, sent, result);
  if (source) {
    result.messages = sent / framing::stream_bytes(spec.framing, spec.msg_size, 1);
    result.payload_bytes = result.messages * spec.msg_size;
  }
  if (!over_limit.empty()) {
    result.error = fmt::format("{} after {} bytes", over_limit, sent);
    return result;
  }
  if (ec) {
    result.error = failure(stream, ec, spec, sent, total);
    return result;
  }
  stream.shutdown_send(ec);
  if (ec) result.error = fmt::format("cannot end the data stream: {}", describe(ec, stream.error_detail()));
  return result;
}

namespace {

// What the receiver checks of what comes: the framing (whole messages,
// within --max-msg) and, with --verify, each message's size and pattern, or
// each byte of a plain stream.
class PayloadCheck {
 public:
  explicit PayloadCheck(const TransferSpec& spec) : msg_size_(spec.msg_size) {
    if (spec.msg_size > 0) {
      parser_.emplace(spec.framing, spec.msg_size, spec.max_msg);
      check_messages_ = spec.verify_seed.has_value();
    } else if (spec.verify_seed) {
      pattern_.emplace(*spec.verify_seed);
    }
  }

  // The bytes just read, `received` bytes after the first. Returns why the
  // stream must stop (bad framing, a --verify mismatch), or "".
  std::string feed(std::span<const std::byte> data, std::uint64_t received) {
    if (parser_) {
      std::string stop =
          parser_->feed(data, [this](std::span<const std::byte> message) { deliver(message); });
      if (stop.empty() && bad_message_ != UINT64_MAX) {
        stop = fmt::format("message {} differs from the agreed size or pattern", bad_message_);
      }
      return stop;
    }
    if (pattern_) {
      if (const auto bad = pattern_->first_mismatch(data, received))
        return fmt::format("payload mismatch: byte {} differs from the --verify pattern", *bad);
    }
    return {};
  }

  const framing::Parser* parser() const { return parser_ ? &*parser_ : nullptr; }

 private:
  void deliver(std::span<const std::byte> message) {
    if (!check_messages_ || bad_message_ != UINT64_MAX) return;
    bool good = message.size() == msg_size_;
    for (std::size_t k = 0; good && k < message.size(); ++k) {
      good = message[k] == static_cast<std::byte>('a' + k % 26);
    }
    if (!good) bad_message_ = parser_->messages();
  }

  std::uint64_t msg_size_;
  std::optional<framing::Parser> parser_;
  std::optional<measure::PayloadPattern> pattern_;
  bool check_messages_ = false;
  std::uint64_t bad_message_ = UINT64_MAX;
};

// After the receiving loop, how the stream ended (`ec`, after `received` of
// `total` bytes; `timed`: for a duration): "" if as agreed, else why not. A
// counted stream must end right after its last byte, in TLS with close_notify.
std::string ending_error(Stream& stream, std::error_code ec, const TransferSpec& spec, std::uint64_t received,
                         std::uint64_t total, bool timed, const framing::Parser* parser) {
  if (timed) {
    if (ec != TransportErrc::eof) return failure(stream, ec, spec, received, 0);
    if (parser != nullptr && parser->mid_message())
      return fmt::format("the stream ended in the middle of message {}", parser->messages() + 1);
    return {};
  }
  if (ec) return failure(stream, ec, spec, received, total);
  std::byte extra{};
  stream.read_some({&extra, 1}, ec);
  if (!ec) return fmt::format("the sender sent more than the {} bytes agreed", total);
  if (ec != TransportErrc::eof) {
    return fmt::format("the data stream did not end cleanly after the last byte: {}",
                       describe(ec, stream.error_detail()));
  }
  return {};
}

}  // namespace

SideResult receive_payload(Stream& stream, const TransferSpec& spec) {
  SideResult result;
  result.role = Role::receiver;
  std::vector<std::byte> buffer(spec.read_size > 0 ? spec.read_size : spec.chunk_bytes);
  PayloadCheck check(spec);
  std::error_code ec;

  const WindowStart opened(stream);
  const std::int64_t start_ns = measure::now_ns();
  stream.write_all({&kGoByte, 1}, ec);
  if (ec) {
    result.error = fmt::format("cannot send go: {}", describe(ec, stream.error_detail()));
    return result;
  }
  Clockwork clock(spec, start_ns);
  const bool timed = spec.bytes == 0;
  const std::uint64_t total = stream_bytes(spec);
  std::uint64_t received = 0;
  std::int64_t last_byte_ns = start_ns;
  std::string stop_reason;
  while (timed || received < total) {
    // Never ask for more than is due, so that any byte beyond it stays unread
    // and is caught below as a protocol violation.
    const std::size_t want = !timed && total - received < buffer.size()
                                 ? static_cast<std::size_t>(total - received)
                                 : buffer.size();
    const std::size_t n = stream.read_some({buffer.data(), want}, ec);
    if (ec) break;
    stop_reason = check.feed({buffer.data(), n}, received);
    received += n;
    if (!stop_reason.empty()) break;
    if (clock.on()) {
      last_byte_ns = clock.tick(received);
      if (!(stop_reason = clock.past_limit(last_byte_ns)).empty()) break;
    }
  }
  // In duration mode the end of stream is the normal end, and the last byte
  // came with the last read; otherwise the loop ended with it.
  const std::int64_t end_ns = timed ? last_byte_ns : measure::now_ns();
  close_window(result, stream, received, start_ns, end_ns, opened);
  clock.finish(end_ns, received, result);
  if (const framing::Parser* parser = check.parser()) {
    result.messages = parser->messages();
    result.payload_bytes = parser->payload_bytes();
  }
  if (!stop_reason.empty()) {  // bad framing, a --verify mismatch, or past the server's --max-duration
    result.error = fmt::format("{} after {} bytes", stop_reason, received);
    return result;
  }
  result.error = ending_error(stream, ec, spec, received, total, timed, check.parser());
  return result;
}

}  // namespace

TransferSpec transfer_spec(const protocol::TestRequest& request, Role role,
                           std::chrono::milliseconds idle_timeout) {
  TransferSpec spec;
  spec.role = role;
  spec.bytes = request.test.stream.bytes;
  spec.duration = std::chrono::milliseconds(request.test.duration_ms);
  spec.chunk_bytes = request.test.chunk_bytes;
  spec.no_delay = request.test.stream.no_delay;
  spec.idle_timeout = idle_timeout;
  spec.interval = std::chrono::milliseconds(request.test.interval_ms);
  if (request.test.verify) spec.verify_seed = request.verify_seed;
  spec.framing = request.test.stream.framing;
  spec.msg_size = request.test.stream.msg_size;
  spec.max_msg = request.test.stream.max_msg;
  spec.read_size = request.test.stream.read_size;
  return spec;
}

std::uint64_t stream_bytes(const TransferSpec& spec) {
  if (spec.bytes == 0 || spec.msg_size == 0) return spec.bytes;
  const std::uint64_t messages = (spec.bytes + spec.msg_size - 1) / spec.msg_size;
  return framing::stream_bytes(spec.framing, spec.msg_size, messages);
}

SideResult run_transfer(Stream& stream, const TransferSpec& spec) {
  SideResult result;
  if (const std::error_code ec = stream.enter_transfer_phase(spec.idle_timeout, spec.min_rate)) {
    result.role = spec.role;
    result.error = fmt::format("cannot set the idle timeout: {}", ec.message());
  } else {
    result = spec.role == Role::sender ? send_payload(stream, spec) : receive_payload(stream, spec);
  }
  // However the transfer ended: a live view joined over streams waits for each.
  if (spec.observer != nullptr) spec.observer->on_end();
  return result;
}

}  // namespace tlscmp::kinds
