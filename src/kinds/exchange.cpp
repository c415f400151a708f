#include "kinds/exchange.hpp"

#include <poll.h>
#include <sys/prctl.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <deque>

#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/payload.hpp"
#include "transport/errors.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {
namespace {

constexpr std::size_t kMaxPiece = kMaxMessagePiece;

// Writes whole requests or responses: plain bytes, or with --verify the
// pattern at each byte's offset in its direction.
class MessageWriter {
 public:
  MessageWriter(std::uint64_t message_bytes, std::optional<std::uint64_t> seed)
      : bytes_(message_bytes), buffer_(std::min<std::uint64_t>(message_bytes, kMaxPiece)) {
    if (seed) {
      pattern_.emplace(*seed);
    } else {
      measure::fill_plain(buffer_);
    }
  }

  // Message `index` (0-based) of this direction.
  void write(Stream& stream, std::uint64_t index, std::error_code& ec) {
    for (std::uint64_t done = 0; done < bytes_;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), bytes_ - done));
      if (pattern_) pattern_->fill({buffer_.data(), n}, index * bytes_ + done);
      stream.write_all({buffer_.data(), n}, ec);
      if (ec) return;
      done += n;
    }
  }

 private:
  std::uint64_t bytes_;
  std::vector<std::byte> buffer_;
  std::optional<measure::PayloadPattern> pattern_;
};

// Checks received bytes against the --verify pattern, if there is one:
// returns the stream offset of the first wrong byte.
std::optional<std::uint64_t> mismatch(const std::optional<measure::PayloadPattern>& pattern,
                                      std::span<const std::byte> data, std::uint64_t offset) {
  if (!pattern) return std::nullopt;
  return pattern->first_mismatch(data, offset);
}

// What one side of a connection writes, and the --verify pattern it checks
// what comes in against (none without --verify): the client writes requests
// and reads responses, the server the reverse.
struct Traffic {
  MessageWriter out;
  std::optional<measure::PayloadPattern> in;
};

Traffic traffic(bool client, std::uint64_t request_bytes, std::uint64_t response_bytes,
                std::optional<std::uint64_t> verify_seed, std::uint32_t connection) {
  const auto seed = [&](bool requests) -> std::optional<std::uint64_t> {
    if (!verify_seed) return std::nullopt;
    return requests ? rr_request_seed(*verify_seed, connection) : rr_response_seed(*verify_seed, connection);
  };
  Traffic t{MessageWriter(client ? request_bytes : response_bytes, seed(client)), std::nullopt};
  if (const auto in = seed(!client)) t.in.emplace(*in);
  return t;
}

// One side's part on a connection: `part` runs in the transfer phase, and
// the result gets the calling thread's CPU time over it.
template <typename Part>
RrSideResult on_connection(Stream& stream, std::chrono::milliseconds idle_timeout, std::uint64_t min_rate,
                           Part part) {
  RrSideResult result;
  if (const std::error_code ec = stream.enter_transfer_phase(idle_timeout, min_rate)) {
    result.error = fmt::format("cannot set the idle timeout: {}", ec.message());
    return result;
  }
  const measure::CpuTimes cpu_start = measure::thread_cpu_times();
  part(result);
  const measure::CpuTimes cpu = measure::thread_cpu_times() - cpu_start;
  result.cpu_user_s = cpu.user_s;
  result.cpu_system_s = cpu.system_s;
  return result;
}

// Where a connection's transactions go: with --stream-per-tx over a stack
// with streams, a stream each (`holder`: Stream::stream_per_transaction);
// else the connection.
Stream& transactions_on(Stream& connection, bool stream_per_tx, const TransactionShape& shape,
                        std::unique_ptr<Stream>& holder) {
  if (!stream_per_tx || !facts(connection.mode()).streams) return connection;
  holder = connection.stream_per_transaction(shape);
  return holder ? *holder : connection;
}

// A transaction, on the boards that want it: the -i one and the live view's
// (which may be the same).
void record(const RrClientSpec& spec, std::int64_t now_ns, double us) {
  if (spec.intervals != nullptr) spec.intervals->record(spec.connection, now_ns, us);
  if (spec.live != nullptr && spec.live != spec.intervals) spec.live->record(spec.connection, now_ns, us);
}

// A transport failure in transaction `n` (1-based), in one line.
std::string failure(const Stream& stream, const std::error_code& ec, const char* doing, std::uint64_t n,
                    std::chrono::milliseconds idle, const char* peer) {
  if (ec == TransportErrc::timeout) {
    return fmt::format("nothing moved for {:g} s while {} in transaction {}",
                       std::chrono::duration<double>(idle).count(), doing, n);
  }
  if (ec == TransportErrc::too_slow) {
    return fmt::format(
        "the {} moved too little while {} in transaction {}: below this server's --min-rate over {:g} s",
        peer, doing, n, std::chrono::duration<double>(idle).count());
  }
  if (ec == TransportErrc::eof) {
    return fmt::format("the {} closed the connection while {} in transaction {}", peer, doing, n);
  }
  // A connection cut without a clean end: the peer's process may have stopped.
  const bool cut = ec == TransportErrc::truncated || ec == TransportErrc::reset;
  return fmt::format("{} in transaction {} failed: {}{}", doing, n, describe(ec, stream.error_detail()),
                     cut ? fmt::format(" (did the {} stop?)", peer) : "");
}

// The client's end: its close, then the server's; nothing may come between.
void finish_client(Stream& stream, RrSideResult& result) {
  std::error_code ec;
  stream.shutdown_send(ec);
  if (ec) {
    result.error = fmt::format("cannot end the connection: {}", describe(ec, stream.error_detail()));
    return;
  }
  std::byte extra{};
  stream.read_some({&extra, 1}, ec);
  if (!ec) {
    result.error = fmt::format(
        "the server sent more than the responses to the {} transactions: a response is longer "
        "than agreed",
        result.transactions);
  } else if (ec != TransportErrc::eof) {
    result.error = fmt::format("the connection did not end cleanly after the last response: {}",
                               describe(ec, stream.error_detail()));
  }
}

void closed_loop(Stream& stream, const RrClientSpec& spec, RrSideResult& result) {
  auto [requests, responses] =
      traffic(/*client=*/true, spec.request_bytes, spec.response_bytes, spec.verify_seed, spec.connection);
  // One byte more than a response's rest is asked for, so that a longer response shows.
  std::vector<std::byte> in(std::min<std::uint64_t>(spec.response_bytes, kMaxPiece) + 1);
  std::int64_t now = measure::now_ns();
  result.start_ns = now;
  std::uint64_t k = 0;
  std::error_code ec;
  while (spec.transactions > 0 ? k < spec.transactions : now < spec.stop_ns) {
    const std::int64_t sent_ns = now;
    requests.write(stream, k, ec);
    if (ec) {
      result.error = failure(stream, ec, "sending the request", k + 1, spec.idle_timeout, "server");
      break;
    }
    for (std::uint64_t got = 0; got < spec.response_bytes;) {
      const std::uint64_t left = spec.response_bytes - got;
      const auto ask = static_cast<std::size_t>(left < in.size() ? left + 1 : in.size());
      const std::size_t n = stream.read_some({in.data(), ask}, ec);
      if (ec) {
        result.error = failure(stream, ec, "awaiting the response", k + 1, spec.idle_timeout, "server");
        break;
      }
      if (n > left) {
        result.error =
            fmt::format("the response to transaction {} is longer than {} bytes", k + 1, spec.response_bytes);
        break;
      }
      if (const auto bad = mismatch(responses, {in.data(), n}, k * spec.response_bytes + got)) {
        result.error =
            fmt::format("the response to transaction {} differs from the --verify pattern at its byte {}",
                        k + 1, *bad - k * spec.response_bytes);
        break;
      }
      got += n;
      result.bytes_received += n;
    }
    if (!result.error.empty()) break;
    now = measure::now_ns();
    const double us = measure::ns_to_us(now - sent_ns);
    result.latency.add(us);
    record(spec, now, us);
    ++k;
  }
  result.transactions = k;
  result.end_ns = now;
}

// Waits until `stream` has bytes to read or `until_ns` comes. True: readable.
bool wait_readable(Stream& stream, std::int64_t until_ns, std::error_code& ec) {
  if (stream.has_buffered()) return true;
  return stream.readable_within(std::chrono::nanoseconds(until_ns - measure::now_ns()), ec);
}

void open_loop(Stream& stream, const RrClientSpec& spec, RrSideResult& result) {
  auto [requests, responses] =
      traffic(/*client=*/true, spec.request_bytes, spec.response_bytes, spec.verify_seed, spec.connection);
  std::vector<std::byte> in(
      std::min<std::uint64_t>(std::max<std::uint64_t>(spec.response_bytes, 64 * 1024), kMaxPiece));
  // The thread sleeps until each request is due: with the default timer
  // slack (50 us) the kernel may wake it that much late, and the lateness
  // would count as latency. 1 ns asks for wake-ups on time.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const double period_ns = 1e9 / spec.rate_tps;
  std::deque<std::int64_t> scheduled;  // the send times of the requests awaiting their responses
  std::uint64_t sent = 0;
  std::int64_t next_ns = spec.start_ns;
  result.start_ns = spec.start_ns;
  std::int64_t now = measure::now_ns();
  std::error_code ec;
  for (;;) {
    const bool sending = next_ns < spec.stop_ns;
    if (!sending && scheduled.empty()) break;
    // Responses first, whenever they are there; then any request that is due.
    // Once every request has gone, the read waits (up to the idle timeout).
    const bool readable = !sending || wait_readable(stream, next_ns, ec);
    if (ec) {
      result.error =
          failure(stream, ec, "awaiting a response", result.transactions + 1, spec.idle_timeout, "server");
      break;
    }
    if (readable) {
      const std::size_t n = stream.read_some(in, ec);
      if (ec) {
        result.error = failure(stream, ec, "awaiting the response", result.transactions + 1,
                               spec.idle_timeout, "server");
        break;
      }
      if (const auto bad = mismatch(responses, {in.data(), n}, result.bytes_received)) {
        result.error =
            fmt::format("the response to transaction {} differs from the --verify pattern at its byte {}",
                        *bad / spec.response_bytes + 1, *bad % spec.response_bytes);
        break;
      }
      result.bytes_received += n;
      if (result.bytes_received > sent * spec.response_bytes) {
        result.error = fmt::format(
            "a response is longer than {} bytes: the server sent more than the responses to the {} requests "
            "sent so far, by transaction {}",
            spec.response_bytes, sent, sent);
        break;
      }
      now = measure::now_ns();
      while (result.bytes_received >= (result.transactions + 1) * spec.response_bytes) {
        const double us = measure::ns_to_us(now - scheduled.front());
        scheduled.pop_front();
        result.latency.add(us);
        record(spec, now, us);
        ++result.transactions;
      }
    }
    now = measure::now_ns();
    if (sending && now >= next_ns) {
      requests.write(stream, sent, ec);
      if (ec) {
        result.error = failure(stream, ec, "sending the request", sent + 1, spec.idle_timeout, "server");
        break;
      }
      scheduled.push_back(next_ns);
      ++sent;
      // On the schedule's grid from its start: late sends do not move it.
      next_ns = spec.start_ns + static_cast<std::int64_t>(static_cast<double>(sent) * period_ns);
    }
  }
  // The run lasts its schedule at least: a run of a few transactions is not
  // a rate of thousands because its one response came quickly.
  result.end_ns = std::max(now, spec.stop_ns);
}

}  // namespace

void write_message(Stream& stream, std::uint64_t bytes, std::chrono::milliseconds idle, std::error_code& ec) {
  static const std::vector<std::byte> zeros(kMaxMessagePiece);
  while (bytes > 0 && !ec) {
    const std::size_t piece = std::min<std::uint64_t>(bytes, zeros.size());
    stream.set_deadline(Deadline::after(idle));
    stream.write_all({zeros.data(), piece}, ec);
    bytes -= piece;
  }
}

void read_message(Stream& stream, std::uint64_t bytes, std::span<std::byte> scratch,
                  std::chrono::milliseconds idle, std::error_code& ec) {
  while (bytes > 0 && !ec) {
    const std::size_t piece = std::min<std::uint64_t>(bytes, scratch.size());
    stream.set_deadline(Deadline::after(idle));  // per piece: a big message may take long in all
    stream.read_exact(scratch.first(piece), ec);
    bytes -= piece;
  }
}

RrIntervalBoard::RrIntervalBoard(std::int64_t go_ns, std::chrono::milliseconds period,
                                 std::uint32_t connections)
    : go_ns_(go_ns), period_ns_(std::chrono::nanoseconds(period).count()) {
  for (std::uint32_t i = 0; i < connections; ++i)
    slots_.push_back(std::make_unique<Slot>());
}

std::size_t RrIntervalBoard::index(std::int64_t now_ns) const {
  const std::int64_t i = std::max<std::int64_t>(0, (now_ns - go_ns_) / period_ns_);
  return static_cast<std::size_t>(std::min<std::int64_t>(i, protocol::kMaxIntervals - 1));
}

void RrIntervalBoard::settle(Slot& slot, std::size_t up_to) {
  if (slot.current > up_to || slot.latencies.count() == 0) return;
  const std::lock_guard lock(mutex_);
  if (latencies_.size() <= slot.current) latencies_.resize(slot.current + 1);
  latencies_[slot.current] += slot.latencies;
  total_ += slot.latencies.count();
  slot.latencies.clear();
}

void RrIntervalBoard::record(std::uint32_t connection, std::int64_t now_ns, double us) {
  Slot& slot = *slots_[connection];
  const std::size_t i = index(now_ns);
  const std::lock_guard lock(slot.mutex);
  if (i != slot.current) {
    settle(slot, slot.current);
    slot.current = i;
  }
  slot.latencies.add(us);
}

measure::TransactionTick RrIntervalBoard::tick(std::size_t index) {
  for (const auto& slot : slots_) {
    const std::lock_guard lock(slot->mutex);
    settle(*slot, index);
  }
  const std::lock_guard lock(mutex_);
  measure::TransactionTick tick;
  tick.start_s = static_cast<double>(index) * static_cast<double>(period_ns_) / 1e9;
  tick.end_s = static_cast<double>(index + 1) * static_cast<double>(period_ns_) / 1e9;
  if (index < latencies_.size()) {
    tick.transactions = latencies_[index].count();
    tick.p99_us = latencies_[index].quantile(0.99);
  }
  tick.total = total_;
  return tick;
}

std::vector<measure::RrInterval> RrIntervalBoard::intervals(std::int64_t end_ns) {
  for (const auto& slot : slots_) {
    const std::lock_guard lock(slot->mutex);
    settle(*slot, SIZE_MAX);
  }
  const std::lock_guard lock(mutex_);
  std::vector<measure::RrInterval> out;
  const std::size_t last = std::max(index(end_ns), latencies_.empty() ? 0 : latencies_.size() - 1);
  const double period_s = static_cast<double>(period_ns_) / 1e9;
  const double end_s = static_cast<double>(end_ns - go_ns_) / 1e9;
  // The responses to the last requests come just after a boundary: a sliver
  // of an interval that short would show a rate of nothing much. It joins
  // the interval before it, as iperf3 folds its last short interval in.
  const bool fold = last > 0 && end_s - static_cast<double>(last) * period_s < period_s / 10;
  for (std::size_t i = 0; i <= last; ++i) {
    const bool last_kept = i + 1 == last && fold;
    measure::LatencyHistogram latencies;
    if (i < latencies_.size()) latencies += latencies_[i];
    if (last_kept && last < latencies_.size()) latencies += latencies_[last];
    measure::RrInterval interval;
    interval.start_s = static_cast<double>(i) * period_s;
    interval.end_s =
        i == last || last_kept ? std::max(interval.start_s, end_s) : static_cast<double>(i + 1) * period_s;
    interval.transactions = latencies.count();
    interval.p99_us = latencies.quantile(0.99);
    out.push_back(interval);
    if (last_kept) break;
  }
  return out;
}

RrSideResult run_rr_client(Stream& connection, const RrClientSpec& spec) {
  std::unique_ptr<Stream> per_tx;
  Stream& stream = transactions_on(
      connection, spec.stream_per_tx,
      {true, spec.request_bytes, spec.response_bytes, spec.idle_timeout, /*min_rate=*/0}, per_tx);
  RrSideResult result = on_connection(stream, spec.idle_timeout, 0, [&](RrSideResult& r) {
    if (spec.rate_tps > 0) {
      open_loop(stream, spec, r);
    } else {
      closed_loop(stream, spec, r);
    }
    if (r.error.empty()) finish_client(stream, r);
  });
  if (per_tx) result.transaction_streams = per_tx->streams_opened();
  return result;
}

namespace {

// The server's side of one connection: a response to each whole request,
// until the client's clean end.
void serve_requests(Stream& stream, const RrServerSpec& spec, RrSideResult& result) {
  auto [responses, requests] =
      traffic(/*client=*/false, spec.request_bytes, spec.response_bytes, spec.verify_seed, spec.connection);
  // Closed loop, a read asks for one byte more than the request's rest, so
  // that a request sent before the last response shows; open loop, requests
  // may come back to back, and a read takes what is there.
  const std::uint64_t piece = std::min<std::uint64_t>(spec.request_bytes, kMaxPiece);
  std::vector<std::byte> in(spec.closed_loop ? piece + 1 : std::max<std::uint64_t>(piece, 64 * 1024));
  const std::int64_t start_ns = measure::now_ns();
  const std::int64_t limit_ns =
      spec.max_duration.count() > 0
          ? start_ns + std::chrono::nanoseconds(spec.max_duration + spec.max_duration_grace).count()
          : 0;
  result.start_ns = start_ns;
  std::uint64_t& answered = result.transactions;
  std::error_code ec;
  for (;;) {
    const std::uint64_t left = (answered + 1) * spec.request_bytes - result.bytes_received;
    const auto ask = static_cast<std::size_t>(spec.closed_loop && left < in.size() ? left + 1 : in.size());
    const std::size_t n = stream.read_some({in.data(), ask}, ec);
    if (ec == TransportErrc::eof && left == spec.request_bytes) break;  // the client's clean end
    if (ec) {
      result.error = failure(stream, ec, "awaiting the request", answered + 1, spec.idle_timeout, "client");
      break;
    }
    if (spec.closed_loop && n > left) {
      result.error = fmt::format(
          "the request of transaction {} is longer than {} bytes, or the next came before "
          "its response",
          answered + 1, spec.request_bytes);
      break;
    }
    if (const auto bad = mismatch(requests, {in.data(), n}, result.bytes_received)) {
      result.error =
          fmt::format("the request of transaction {} differs from the --verify pattern at its byte {}",
                      *bad / spec.request_bytes + 1, *bad % spec.request_bytes);
      break;
    }
    result.bytes_received += n;
    while (result.bytes_received >= (answered + 1) * spec.request_bytes) {
      responses.write(stream, answered, ec);
      if (ec) break;
      ++answered;
      // The pause before the next request is the client's schedule (--rate),
      // not a trickle: the minimum rate counts from here.
      stream.restart_rate_window();
    }
    if (ec) {
      result.error = failure(stream, ec, "sending the response", answered + 1, spec.idle_timeout, "client");
      break;
    }
    if (limit_ns != 0 && measure::now_ns() >= limit_ns) {
      result.error =
          fmt::format("the test ran past this server's --max-duration of {:g} s, after {} transactions",
                      std::chrono::duration<double>(spec.max_duration).count(), answered);
      break;
    }
  }
  result.end_ns = measure::now_ns();
  if (result.error.empty()) {
    ec.clear();  // the client's clean end
    stream.shutdown_send(ec);
    if (ec) result.error = fmt::format("cannot end the connection: {}", describe(ec, stream.error_detail()));
  }
}

}  // namespace

RrSideResult run_rr_server(Stream& connection, const RrServerSpec& spec) {
  std::unique_ptr<Stream> per_tx;
  Stream& stream = transactions_on(
      connection, spec.stream_per_tx,
      {false, spec.request_bytes, spec.response_bytes, spec.idle_timeout, spec.min_rate}, per_tx);
  RrSideResult result = on_connection(stream, spec.idle_timeout, spec.min_rate,
                                      [&](RrSideResult& r) { serve_requests(stream, spec, r); });
  if (per_tx) result.transaction_streams = per_tx->streams_opened();
  return result;
}

void take_facts(std::vector<RrSideResult>& results, std::vector<RunFacts> facts) {
  for (std::size_t i = 0; i < results.size() && i < facts.size(); ++i) {
    results[i].facts = std::move(facts[i]);
    results[i].facts.transaction_streams = results[i].transaction_streams;
  }
}

SideResult to_side_result(const RrSideResult& result, Role role, std::uint32_t connection,
                          std::int64_t earliest_ns) {
  SideResult side;
  side.role = role;
  side.stream = connection;
  side.messages = result.transactions;
  side.bytes = result.bytes_received;
  side.elapsed_us = measure::ns_to_us(result.end_ns - result.start_ns);
  side.offset_us = measure::ns_to_us(result.start_ns - earliest_ns);
  side.cpu_user_s = result.cpu_user_s;
  side.cpu_system_s = result.cpu_system_s;
  side.facts = result.facts;
  side.error = result.error;
  return side;
}

// Distinct, unrelated patterns per connection and direction (the pattern's
// words come from seed + word index, so neighbouring seeds would overlap).
std::uint64_t rr_request_seed(std::uint64_t seed, std::uint32_t connection) {
  return seed ^ (0x9e3779b97f4a7c15ull * (2ull * connection + 1));
}
std::uint64_t rr_response_seed(std::uint64_t seed, std::uint32_t connection) {
  return seed ^ (0x9e3779b97f4a7c15ull * (2ull * connection + 2));
}

}  // namespace tlscmp::kinds
