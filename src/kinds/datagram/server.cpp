// The receiving end of a datagram test (see kinds/datagram/datagram.hpp).

#include <poll.h>
#include <sys/random.h>

#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "kinds/data_threads.hpp"
#include "kinds/datagram/datagram.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/sequence.hpp"
#include "protocol/datagram.hpp"
#include "session/control.hpp"
#include "transport/datagram.hpp"

namespace tlscmp::kinds {

using session::receive;
using session::send_message;
using session::ServerConfig;
using session::Timeouts;
namespace {

// One port the receiver listens on, with its DTLS session in dtls tests.
struct ReceivingSocket {
  UniqueFd fd;
  std::uint16_t port = 0;
  std::unique_ptr<tls::DtlsSession> session;
  std::uint32_t kernel_drops = 0;  // SO_RXQ_OVFL, as the last datagram carried it
};

struct SenderTally {
  measure::SequenceTracker sequence;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
};

// Datagrams per recvmmsg: kDatagramBatch, fewer for big datagrams, so that a
// test's receive buffers stay near 1 MiB.
std::size_t batch_size(const protocol::TestRequest& request) {
  constexpr std::size_t kBufferBytes = 1 << 20;
  return std::clamp<std::size_t>(kBufferBytes / request.test.chunk_bytes, 8, kDatagramBatch);
}

// Counts what arrives, per sender, and what does not belong.
class Receiver {
 public:
  Receiver(const protocol::TestRequest& request, const protocol::DatagramTag& tag,
           std::vector<ReceivingSocket>& sockets)
      : request_(request),
        tag_(tag),
        sockets_(sockets),
        senders_(request.test.streams),
        batch_(batch_size(request),
               request.test.chunk_bytes + (is_encrypted(request.mode) ? tls::DtlsSession::kMaxOverhead : 0)),
        plain_(protocol::kMaxDtlsDatagramBytes) {}

  // Takes one batch from every socket: true if any datagram came.
  bool take_batches() {
    bool any = false;
    for (std::size_t s = 0; s < sockets_.size(); ++s) {
      const std::size_t n = batch_.receive(sockets_[s].fd.get());
      if (n == 0) continue;
      any = true;
      const std::int64_t now = measure::now_ns();
      last_batch_ns_ = now;
      for (std::size_t i = 0; i < n; ++i)
        take(s, i, now);
      if (batch_.drops()) sockets_[s].kernel_drops = *batch_.drops();
    }
    return any;
  }

  // When the last batch came (the clock read that stamped it).
  std::int64_t last_batch_ns() const { return last_batch_ns_; }

  std::uint64_t received() const {
    std::uint64_t total = 0;
    for (const SenderTally& t : senders_)
      total += t.sequence.received();
    return total;
  }

  // With -i: closes the interval that ends now, if one is due. Intervals count
  // from `start_ns` on a nominal grid; each closes when the loop gets there.
  void tick(std::int64_t start_ns, std::int64_t now_ns) {
    if (request_.test.interval_ms == 0) return;
    const std::int64_t period_ns = static_cast<std::int64_t>(request_.test.interval_ms) * 1'000'000;
    if (next_boundary_ns_ == 0) next_boundary_ns_ = start_ns + period_ns;
    if (now_ns < next_boundary_ns_) return;
    close_interval(start_ns, now_ns);
    while (next_boundary_ns_ <= now_ns)
      next_boundary_ns_ += period_ns;
  }

  // With -i: the last, shorter interval ends at the last datagram, and quiet
  // intervals after it (the drain) are left out.
  void finish_intervals(std::int64_t start_ns) {
    if (request_.test.interval_ms == 0) return;
    std::int64_t last_ns = 0;
    for (const SenderTally& t : senders_)
      last_ns = std::max(last_ns, t.last_ns);
    if (received() > counted_received_) close_interval(start_ns, std::max(last_ns, closed_ns_));
    const double last_us = last_ns == 0 ? 0 : measure::ns_to_us(last_ns - start_ns);
    while (!intervals_.empty() && intervals_.back().received == 0 && intervals_.back().expected == 0 &&
           (intervals_.size() == 1 || intervals_[intervals_.size() - 2].end_us >= last_us)) {
      intervals_.pop_back();
    }
  }

  DatagramResult result(std::int64_t start_ns) const {
    DatagramResult r;
    r.role = Role::receiver;
    std::int64_t first = 0;
    std::int64_t last = 0;
    for (std::uint32_t i = 0; i < senders_.size(); ++i) {
      const SenderTally& t = senders_[i];
      SenderCount c;
      c.sender = i;
      c.packets = t.sequence.received();
      c.bytes = c.packets * request_.test.chunk_bytes;
      c.reordered = t.sequence.reordered();
      c.duplicates = t.sequence.duplicates();
      if (c.packets > 0) {
        c.first_us = measure::ns_to_us(t.first_ns - start_ns);
        c.last_us = measure::ns_to_us(t.last_ns - start_ns);
        first = first == 0 ? t.first_ns : std::min(first, t.first_ns);
        last = std::max(last, t.last_ns);
      }
      r.senders.push_back(c);
    }
    r.elapsed_us = first == 0 ? 0 : measure::ns_to_us(last - first);
    r.intervals = intervals_;
    r.foreign = foreign_;
    for (const ReceivingSocket& s : sockets_) {
      // The socket's own count, which includes drops after the last datagram taken.
      r.kernel_drops += std::max<std::uint64_t>(s.kernel_drops, udp_socket_drops(s.fd.get()).value_or(0));
    }
    return r;
  }

 private:
  void close_interval(std::int64_t start_ns, std::int64_t now_ns) {
    std::uint64_t received = 0;
    std::uint64_t expected = 0;
    for (const SenderTally& t : senders_) {
      received += t.sequence.received();
      expected += t.sequence.span();
    }
    IntervalCount interval{measure::ns_to_us(now_ns - start_ns), received - counted_received_,
                           expected - counted_expected_};
    counted_received_ = received;
    counted_expected_ = expected;
    closed_ns_ = now_ns;
    if (intervals_.size() < protocol::kMaxIntervals) {
      intervals_.push_back(interval);
    } else {  // past the cap, the last kept interval grows
      intervals_.back().end_us = interval.end_us;
      intervals_.back().received += interval.received;
      intervals_.back().expected += interval.expected;
    }
  }

  void take(std::size_t socket, std::size_t i, std::int64_t now) {
    if (batch_.truncated(i)) {
      ++foreign_;
      return;
    }
    std::span<const std::byte> plain = batch_.datagram(i);
    if (sockets_[socket].session) {
      const auto n = sockets_[socket].session->open(plain, plain_);
      if (!n) {
        ++foreign_;
        return;
      }
      plain = {plain_.data(), *n};
    }
    const auto header = protocol::decode_datagram_header(plain);
    if (plain.size() != request_.test.chunk_bytes || !header || header->tag != tag_ ||
        header->sender >= senders_.size() || (is_encrypted(request_.mode) && header->sender != socket)) {
      ++foreign_;
      return;
    }
    SenderTally& t = senders_[header->sender];
    t.sequence.receive(header->sequence);
    if (t.first_ns == 0) t.first_ns = now;
    t.last_ns = now;
  }

  const protocol::TestRequest& request_;
  protocol::DatagramTag tag_;
  std::vector<ReceivingSocket>& sockets_;
  std::vector<SenderTally> senders_;
  DatagramBatch batch_;
  std::vector<std::byte> plain_;  // a DTLS record's plaintext
  std::uint64_t foreign_ = 0;
  std::int64_t last_batch_ns_ = 0;
  // -i: the intervals closed so far, and the counts at the last close.
  std::vector<IntervalCount> intervals_;
  std::int64_t next_boundary_ns_ = 0;
  std::int64_t closed_ns_ = 0;
  std::uint64_t counted_received_ = 0;
  std::uint64_t counted_expected_ = 0;
};

protocol::Cookie random_cookie() {
  protocol::Cookie cookie{};
  if (::getrandom(cookie.data(), cookie.size(), 0) != static_cast<ssize_t>(cookie.size())) {
    throw Error("cannot draw a random test tag");
  }
  return cookie;
}

// The senders' count from the client: one entry per sender, from its senders.
DatagramResult receive_count(Stream& control, const protocol::TestRequest& request,
                             const Timeouts& timeouts) {
  control.set_deadline(Deadline::after(timeouts.control));
  auto sent = receive<DatagramResult>(control, "the senders' count");
  if (sent.role != Role::sender || sent.senders.size() != request.test.streams) {
    throw protocol::ProtocolError("the senders' count does not match the test");
  }
  if (!sent.error.empty()) throw Error(fmt::format("the client's senders failed: {}", sent.error));
  return sent;
}

std::string describe_test(const protocol::TestRequest& request, const DatagramResult& sent,
                          const DatagramResult& received) {
  if (!received.error.empty())
    return fmt::format("{} datagram test failed: {}", to_string(request.mode), received.error);
  std::uint64_t total_sent = 0;
  std::uint64_t total_received = 0;
  for (std::size_t i = 0; i < sent.senders.size(); ++i) {
    total_sent += sent.senders[i].packets;
    total_received += received.senders[i].packets;
  }
  const double lost = total_sent > total_received ? static_cast<double>(total_sent - total_received) : 0;
  return fmt::format(
      "{} {} B datagrams, {} sender{}: {} of {} received ({:.2f}% lost), {:.0f}/s, {} foreign, {} dropped by "
      "the "
      "kernel",
      to_string(request.mode), request.test.chunk_bytes, request.test.streams,
      request.test.streams == 1 ? "" : "s", total_received, total_sent,
      total_sent > 0 ? 100 * lost / static_cast<double>(total_sent) : 0.0,
      received.elapsed_us > 0 ? static_cast<double>(total_received) / (received.elapsed_us / 1e6) : 0.0,
      received.foreign, received.kernel_drops);
}

// Takes datagrams until the client's count has come and what it counts has
// too (or the quiet after it says the rest is lost); fails on a silent
// client or one past --max-duration. Returns the client's count.
DatagramResult receive_until_counted(Stream& control, const protocol::TestRequest& request,
                                     const ServerConfig& config, const std::vector<ReceivingSocket>& sockets,
                                     Receiver& receiver, std::int64_t start_ns) {
  const Timeouts& timeouts = config.timeouts;
  std::vector<pollfd> fds;
  for (const ReceivingSocket& s : sockets)
    fds.push_back({s.fd.get(), POLLIN, 0});
  fds.push_back({control.native_handle(), POLLIN, 0});
  const auto ns = [](std::chrono::milliseconds ms) {
    return static_cast<std::int64_t>(ms.count()) * 1'000'000;
  };
  const std::int64_t limit_ns = start_ns + ns(config.max_duration) + ns(timeouts.idle);
  std::optional<DatagramResult> sent;
  std::uint64_t due = 0;  // datagrams the senders say they sent
  std::int64_t last_activity_ns = start_ns;
  std::int64_t count_came_ns = 0;
  for (;;) {
    bool any = false;
    for (int spin = 0; spin < 1024 && receiver.take_batches(); ++spin) {
      any = true;
      receiver.tick(start_ns, receiver.last_batch_ns());  // a flood keeps this loop busy for long
    }
    const std::int64_t now = measure::now_ns();
    if (any) last_activity_ns = now;
    receiver.tick(start_ns, now);
    if (sent) {
      if (receiver.received() >= due || now - last_activity_ns >= ns(kDrainQuiet) ||
          now - count_came_ns >= ns(kDrainLimit)) {
        return *sent;
      }
    } else if (now - last_activity_ns >= ns(timeouts.idle)) {
      throw Error(fmt::format("{} test: no datagram and no word from the client for {} s",
                              to_string(request.mode), std::chrono::duration<double>(timeouts.idle).count()));
    } else if (now >= limit_ns) {
      throw Error(
          fmt::format("{} test: still sending after the server's --max-duration", to_string(request.mode)));
    }
    for (pollfd& p : fds)
      p.revents = 0;
    const int ready = ::poll(fds.data(), fds.size(), any ? 0 : 50);
    if (ready > 0 && fds.back().revents != 0 && !sent) {
      sent = receive_count(control, request, timeouts);
      for (const SenderCount& c : sent->senders)
        due += c.packets;
      count_came_ns = measure::now_ns();
      last_activity_ns = count_came_ns;  // datagrams may still be on their way
    }
  }
}

}  // namespace

std::string serve_datagram_test(Stream& control, const protocol::TestRequest& request,
                                session::ServerSide& side) {
  const RunClock clock;  // the run on this side, for judging the client's figures
  const ServerConfig& config = side.config();
  const Timeouts& timeouts = config.timeouts;
  const stacks::ServerPart* part = side.stack_part(request.mode);
  const tls::DtlsContext* dtls =
      part != nullptr && is_encrypted(request.mode) ? part->datagram_context(request.tls_library) : nullptr;
  protocol::TestAccept accept = side.acceptance({});
  const bool is_dtls = is_encrypted(request.mode);  // a DTLS session a sender, each on a port of its own
  if (is_dtls && dtls == nullptr) throw Error("no DTLS context");
  // One port for every udp sender, as the seed's receiver had; one per dtls sender, each a session.
  std::vector<ReceivingSocket> sockets(is_dtls ? request.test.streams : 1);
  int rcvbuf_bytes = 0;
  for (ReceivingSocket& s : sockets) {
    s.fd = bind_udp_beside(control.native_handle(), s.port);
    rcvbuf_bytes = set_receive_buffer(s.fd.get(), request.test.rcvbuf_bytes);
    enable_drop_counter(s.fd.get());
    accept.udp_ports.push_back(s.port);
  }
  accept.cookie = random_cookie();
  protocol::DatagramTag tag{};
  std::copy_n(accept.cookie.begin(), tag.size(), tag.begin());
  control.set_deadline(Deadline::after(timeouts.control));
  send_message(control, accept, "the test acceptance");
  if (is_dtls) {
    for (ReceivingSocket& s : sockets)
      s.session = dtls->accept(s.fd.get(), Deadline::after(timeouts.connect + timeouts.handshake));
  }

  Receiver receiver(request, tag, sockets);
  const auto errors_before = udp_receive_buffer_errors();
  const measure::CpuTimes cpu_before = measure::thread_cpu_times();
  const std::int64_t start_ns = measure::now_ns();
  control.set_deadline(Deadline::after(timeouts.control));
  send_message(control, protocol::Ready{}, "ready");

  std::optional<DatagramResult> sent;
  // The receiving loop on this thread: pinned with -A, and watched.
  const std::vector<RunFacts> facts = run_data_threads({-1}, request.server_cpu, [&](std::size_t) {
    sent = receive_until_counted(control, request, config, sockets, receiver, start_ns);
  });

  receiver.finish_intervals(start_ns);
  DatagramResult result = receiver.result(start_ns);
  result.facts = facts.front();
  const measure::CpuTimes cpu = measure::thread_cpu_times() - cpu_before;
  result.cpu_user_s = cpu.user_s;
  result.cpu_system_s = cpu.system_s;
  result.rcvbuf_bytes = rcvbuf_bytes;
  const auto errors_after = udp_receive_buffer_errors();
  if (errors_before && errors_after) result.rcvbuf_errors = *errors_after - *errors_before;
  // The senders' count, judged here: a disagreement fails the test on both sides.
  result.error = check_peer_datagrams(PeerJudge(Peer::client, clock.elapsed_us()), request, result, *sent);
  control.set_deadline(Deadline::after(timeouts.control));
  send_message(control, result, "the receiver's count");
  side.record(result, *sent);
  return describe_test(request, *sent, result);
}

}  // namespace tlscmp::kinds
