// The sending end of a datagram test (see kinds/datagram/datagram.hpp).

#include <poll.h>

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "endpoint.hpp"
#include "kinds/data_threads.hpp"
#include "kinds/datagram/datagram.hpp"
#include "measure/clock.hpp"
#include "measure/cpu.hpp"
#include "measure/host.hpp"
#include "protocol/datagram.hpp"
#include "session/control.hpp"
#include "session/interrupt.hpp"
#include "transport/datagram.hpp"
#include "transport/socket.hpp"

namespace tlscmp::kinds {

using session::ClientConfig;
using session::InterruptWatch;
using session::receive;
using session::send_message;
using session::start_test;
using session::Timeouts;
namespace {

constexpr std::chrono::milliseconds kBlockedWait{10};  // a full send buffer: wait this long, then retry

// One sender: its socket and, in dtls tests, its session.
struct Sender {
  UniqueFd fd;
  std::unique_ptr<tls::DtlsSession> session;
  tls::DtlsHandshake handshake;
  // What it did, read once its thread has ended.
  std::uint64_t sent = 0;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
  measure::CpuTimes cpu;
  std::string error;
};

struct SendPlan {
  std::uint32_t size = 0;     // bytes per datagram
  std::uint64_t packets = 0;  // per sender; 0: until `duration`
  std::chrono::milliseconds duration{0};
  std::uint64_t rate_bps = 0;  // 0: as fast as it can
  bool gso = false;            // --gso
  protocol::DatagramTag tag{};
};

[[noreturn]] void send_failed(const std::error_code& ec, std::uint32_t size, bool gso) {
  if (gso && (ec.value() == EMSGSIZE || ec.value() == EINVAL || ec.value() == EIO)) {
    throw Error(
        fmt::format("--gso: the kernel refused a segmented send of {}-byte datagrams ({}); segments "
                    "cannot be fragmented, so each must fit the path's MTU whole: use a smaller -l, "
                    "or leave out --gso",
                    size, ec.message()));
  }
  if (ec.value() == EMSGSIZE) {
    throw Error(
        fmt::format("datagrams of {} bytes are above the path's maximum (EMSGSIZE); use a smaller -l", size));
  }
  if (ec.value() == ECONNREFUSED)
    throw Error("the server's UDP port refused datagrams (ICMP port unreachable)");
  throw Error(fmt::format("cannot send datagrams: {}", ec.message()));
}

// A sender's batch of up to kDatagramBatch datagrams, ready for sendmmsg:
// each datagram's header and zero padding (udp), or its sealed record (dtls).
class Batch {
 public:
  Batch(const SendPlan& plan, std::uint32_t index, tls::DtlsSession* session)
      : session_(session),
        gso_(plan.gso),
        headers_(kDatagramBatch),
        zeros_(plan.size - protocol::kDatagramHeaderBytes),
        plain_(plan.size),
        record_room_(plan.size + tls::DtlsSession::kMaxOverhead),
        records_(session != nullptr ? kDatagramBatch * record_room_ : 0),
        iov_(2 * kDatagramBatch),
        messages_(kDatagramBatch),
        gso_messages_(plan.gso ? kDatagramBatch : 0) {
    const protocol::DatagramHeader header{static_cast<std::uint8_t>(index), plan.tag, 0};
    protocol::encode_datagram_header(header, plain_header());
    for (std::size_t k = 0; k < kDatagramBatch; ++k) {
      protocol::encode_datagram_header(header, headers_[k]);
      messages_[k] = {};
      messages_[k].msg_hdr.msg_iov = &iov_[2 * k];
      if (session_ != nullptr) {
        messages_[k].msg_hdr.msg_iovlen = 1;
        iov_[2 * k + 1] = {nullptr, 0};
      } else {
        iov_[2 * k] = {headers_[k].data(), headers_[k].size()};
        iov_[2 * k + 1] = {zeros_.data(), zeros_.size()};
        messages_[k].msg_hdr.msg_iovlen = zeros_.empty() ? 1 : 2;
      }
    }
  }

  // Numbers datagrams `sequence` on (sealing each, for dtls), `n` of them,
  // and returns their messages: one each, or with --gso one per segmented buffer.
  std::span<mmsghdr> fill(std::uint64_t sequence, std::uint64_t n, int fd) {
    for (std::uint64_t k = 0; k < n; ++k) {
      const auto number = static_cast<std::uint32_t>(sequence + k);  // wraps, as the receiver expects
      if (session_ != nullptr) {
        protocol::set_datagram_sequence(plain_header(), number);
        std::byte* slot = records_.data() + k * record_room_;
        const std::size_t length = session_->seal(plain_, {slot, record_room_});
        iov_[2 * k] = {slot, length};
      } else {
        protocol::set_datagram_sequence(headers_[k], number);
      }
    }
    if (gso_) return segmented(static_cast<std::size_t>(n), fd);
    return {messages_.data(), static_cast<std::size_t>(n)};
  }

  // Datagrams a message carries: 1, or with --gso the segments per buffer.
  std::size_t per_message() const { return gso_ ? gso_segments_ : 1; }

 private:
  std::span<std::byte, protocol::kDatagramHeaderBytes> plain_header() {
    return std::span<std::byte, protocol::kDatagramHeaderBytes>(plain_.data(),
                                                                protocol::kDatagramHeaderBytes);
  }

  // --gso: each message carries up to gso_segments_ datagrams, back to back
  // in `iov_`, two entries each (the second empty where there is nothing to add).
  std::span<mmsghdr> segmented(std::size_t n, int fd) {
    const std::size_t wire = iov_[0].iov_len + iov_[1].iov_len;
    if (gso_segments_ == 0) {  // at the first batch, once the datagrams' size on the wire is known
      enable_udp_segmentation(fd, static_cast<std::uint16_t>(wire));
      gso_segments_ = std::clamp<std::size_t>(protocol::kMaxUdpDatagramBytes / wire, 1, kMaxGsoSegments);
    }
    std::size_t m = 0;
    for (std::size_t first = 0; first < n; first += gso_segments_, ++m) {
      const std::size_t count = std::min<std::size_t>(gso_segments_, n - first);
      for (std::size_t k = first; k < first + count; ++k) {
        // The kernel cuts at every `wire` bytes: every datagram must be that long.
        if (iov_[2 * k].iov_len + iov_[2 * k + 1].iov_len != wire)
          throw Error("--gso: DTLS records of unequal size cannot be segmented");
      }
      gso_messages_[m] = {};
      gso_messages_[m].msg_hdr.msg_iov = &iov_[2 * first];
      gso_messages_[m].msg_hdr.msg_iovlen = 2 * count;
    }
    return {gso_messages_.data(), m};
  }

  tls::DtlsSession* session_;
  bool gso_;
  std::vector<std::array<std::byte, protocol::kDatagramHeaderBytes>> headers_;
  std::vector<std::byte> zeros_;
  std::vector<std::byte> plain_;  // dtls: one datagram's plaintext, sealed into `records_`
  std::size_t record_room_;
  std::vector<std::byte> records_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> messages_;
  std::vector<mmsghdr> gso_messages_;
  std::size_t gso_segments_ = 0;
};

// Sends as the plan says, in batches of up to kDatagramBatch, paced by the
// rate if there is one: each batch takes only the datagrams due by then.
void send_all(Sender& sender, std::uint32_t index, const SendPlan& plan, const InterruptWatch& interrupt) {
  Batch batch(plan, index, sender.session.get());
  const double ns_per_datagram =
      plan.rate_bps > 0 ? static_cast<double>(plan.size) * 8 * 1e9 / static_cast<double>(plan.rate_bps) : 0;
  // With -b: the datagrams a sender on pace lets come due before it sends,
  // up to a batch and at most 1 ms of them, so the pace holds within 1 ms
  // (or one datagram, if that takes longer).
  const std::uint64_t burst =
      ns_per_datagram > 0
          ? std::clamp<std::uint64_t>(static_cast<std::uint64_t>(1e6 / ns_per_datagram), 1, kDatagramBatch)
          : 1;
  const measure::CpuTimes cpu_before = measure::thread_cpu_times();
  const std::int64_t start = measure::now_ns();
  const std::int64_t end = plan.duration.count() > 0
                               ? start + static_cast<std::int64_t>(plan.duration.count()) * 1'000'000
                               : std::numeric_limits<std::int64_t>::max();
  sender.first_ns = start;
  std::uint64_t sequence = 0;
  while ((plan.packets == 0 || sequence < plan.packets) && !interrupt.interrupted()) {
    const std::int64_t now = measure::now_ns();
    if (now >= end) break;
    std::uint64_t n = kDatagramBatch;
    if (plan.packets > 0) n = std::min(n, plan.packets - sequence);
    if (ns_per_datagram > 0) {
      // On pace, wait until a burst is due: a sleep costs tens of
      // microseconds (timer slack), more than a datagram takes at high rates.
      const std::uint64_t wait_for = plan.packets > 0 ? std::min(burst, plan.packets - sequence) : burst;
      const auto due =
          start + static_cast<std::int64_t>(static_cast<double>(sequence + wait_for - 1) * ns_per_datagram);
      if (now < due) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(due, end) - now));
        continue;
      }
      const auto owed = static_cast<std::uint64_t>(static_cast<double>(now - start) / ns_per_datagram) + 1;
      n = std::min(n, owed > sequence ? owed - sequence : 1);
    }
    const std::span<mmsghdr> messages = batch.fill(sequence, n, sender.fd.get());
    std::error_code ec;
    const std::size_t messages_sent = send_datagrams(sender.fd.get(), messages, ec);
    sequence += std::min<std::uint64_t>(n, messages_sent * batch.per_message());
    if (ec) {
      if (ec.value() != EAGAIN && ec.value() != EWOULDBLOCK && ec.value() != ENOBUFS)
        send_failed(ec, plan.size, plan.gso);
      (void)wait_fd(sender.fd.get(), POLLOUT, Deadline::after(kBlockedWait));
    }
  }
  sender.last_ns = measure::now_ns();
  sender.sent = sequence;
  sender.cpu = measure::thread_cpu_times() - cpu_before;
}

// The hint that goes with a failed DTLS handshake.
std::string dtls_hint(const std::string& reason, const std::string& host) {
  // OpenSSL's words, then those every other library's failure is put in (tls::verify_failure_text).
  if (reason.find("unable to get local issuer") != std::string::npos ||
      reason.find("self-signed") != std::string::npos || reason.find("self signed") != std::string::npos ||
      reason.find("chain does not lead to") != std::string::npos) {
    return " (trust the server's CA with --ca FILE, or skip verification with --insecure)";
  }
  if (reason.find("mismatch") != std::string::npos ||
      reason.find("does not name the host") != std::string::npos) {
    return fmt::format(" (the server's certificate does not name '{}'; see tlscmp certs --host)", host);
  }
  return {};
}

// DTLS: each sender's handshake, and the run's handshake figures (the mean over senders).
void shake_hands(const ClientConfig& config, const tls::DtlsContext& dtls, const protocol::TestAccept& accept,
                 std::vector<Sender>& senders, DatagramRun& run) {
  const Timeouts& timeouts = config.timeouts;
  for (std::uint32_t i = 0; i < senders.size(); ++i) {
    Sender& s = senders[i];
    try {
      s.session = dtls.connect(s.fd.get(), config.host,
                               Deadline::after(timeouts.connect + timeouts.handshake), s.handshake);
    } catch (const Error& e) {
      throw Error(fmt::format("{} sender {}: {}{}", host_port(config.host, accept.udp_ports[i]), i, e.what(),
                              dtls_hint(e.what(), config.host)));
    }
    if (const std::size_t most = s.session->largest_plaintext(); config.test.chunk_bytes > most) {
      throw Error(fmt::format("-l {}: {} seals at most {} bytes in one DTLS datagram; give -l {} or less",
                              config.test.chunk_bytes, dtls.backend().library_version(), most, most));
    }
    run.handshake_us += s.handshake.handshake_us / static_cast<double>(senders.size());
    run.cookie_us += s.handshake.cookie_us / static_cast<double>(senders.size());
    run.cookie_exchanged = s.handshake.cookie_exchanged;
  }
  run.tls.version = senders.front().handshake.version;
  run.tls.cipher = senders.front().handshake.cipher;
  run.tls.group = senders.front().handshake.group;
}

// The senders' count, as the server is told it: each sender's datagrams and
// window from the first sender's start, CPU added up, the first error.
DatagramResult senders_count(const std::vector<Sender>& senders, const std::vector<RunFacts>& facts,
                             std::uint32_t datagram_bytes, int sndbuf_bytes) {
  DatagramResult mine;
  mine.facts = measure::merge_facts(facts);
  mine.role = Role::sender;
  std::int64_t go = senders.front().first_ns;
  for (const Sender& s : senders)
    go = std::min(go, s.first_ns);
  std::int64_t last = go;
  for (std::uint32_t i = 0; i < senders.size(); ++i) {
    const Sender& s = senders[i];
    SenderCount c;
    c.sender = i;
    c.packets = s.sent;
    c.bytes = s.sent * datagram_bytes;
    c.first_us = measure::ns_to_us(s.first_ns - go);
    c.last_us = measure::ns_to_us(s.last_ns - go);
    last = std::max(last, s.last_ns);
    mine.senders.push_back(c);
    mine.cpu_user_s += s.cpu.user_s;
    mine.cpu_system_s += s.cpu.system_s;
    if (mine.error.empty() && !s.error.empty()) mine.error = fmt::format("sender {}: {}", i, s.error);
  }
  mine.elapsed_us = measure::ns_to_us(last - go);
  mine.sndbuf_bytes = sndbuf_bytes;
  return mine;
}

// Both sides' counts, sender by sender and in all, into the run.
void add_counts(const DatagramResult& mine, const DatagramResult& theirs, std::uint32_t datagram_bytes,
                DatagramRun& run) {
  for (std::uint32_t i = 0; i < mine.senders.size(); ++i) {
    const SenderCount& sent = mine.senders[i];
    const SenderCount& received = theirs.senders[i];
    DatagramSender r;
    r.index = i;
    r.sent = sent.packets;
    r.received = received.packets;
    r.reordered = received.reordered;
    r.duplicates = received.duplicates;
    r.bytes_sent = sent.bytes;
    r.bytes_received = received.bytes;
    r.sender_us = sent.last_us - sent.first_us;
    r.receiver_us = received.last_us - received.first_us;
    run.senders.push_back(r);
    run.total.sent += r.sent;
    run.total.received += r.received;
    run.total.reordered += r.reordered;
    run.total.duplicates += r.duplicates;
    run.total.bytes_sent += r.bytes_sent;
    run.total.bytes_received += r.bytes_received;
  }
  run.total.sender_us = mine.elapsed_us;
  run.total.receiver_us = theirs.elapsed_us;
  run.foreign = theirs.foreign;
  run.kernel_drops = theirs.kernel_drops;
  run.rcvbuf_errors = theirs.rcvbuf_errors;
  double start_s = 0;
  for (const IntervalCount& i : theirs.intervals) {
    const double end_s = i.end_us / 1e6;
    run.intervals.push_back({start_s, end_s, i.received, i.expected, i.received * datagram_bytes});
    start_s = end_s;
  }
  run.client.facts = mine.facts;
  run.server.facts = theirs.facts;
  run.client.window_us = mine.elapsed_us;
  run.client.cpu_user_s = mine.cpu_user_s;
  run.client.cpu_system_s = mine.cpu_system_s;
  run.client.sndbuf_bytes = mine.sndbuf_bytes;
  run.server.window_us = theirs.elapsed_us;
  run.server.cpu_user_s = theirs.cpu_user_s;
  run.server.cpu_system_s = theirs.cpu_system_s;
  run.server.rcvbuf_bytes = theirs.rcvbuf_bytes;
}

}  // namespace

DatagramRun run_datagram_test(const ClientConfig& config, Mode mode, const tls::DtlsContext* dtls,
                              InterruptWatch& interrupt, measure::Environment& environment) {
  const RunClock clock;  // the run on this side, for judging the server's figures
  const Timeouts& timeouts = config.timeouts;
  TcpStream control(
      connect_tcp(config.host, config.port, Deadline::after(timeouts.connect), config.bind_address));
  const InterruptWatch::Guard control_guard(interrupt, control.native_handle());
  protocol::TestRequest request = session::test_request(config, mode, nullptr);
  if (dtls != nullptr) request.tls_library = dtls->server_library();  // "": the server's default
  const protocol::TestAccept accept = start_test(control, request, timeouts, environment);
  const std::size_t ports = is_encrypted(mode) ? request.test.streams : 1;  // DTLS: a session a sender
  if (accept.udp_ports.size() != ports)
    throw protocol::ProtocolError("the server's UDP ports do not match the senders");

  SendPlan plan;
  plan.size = request.test.chunk_bytes;
  plan.packets = request.test.datagram.packets;
  plan.duration = std::chrono::milliseconds(request.test.duration_ms);
  plan.rate_bps = request.test.datagram.rate_bps;
  plan.gso = config.test.datagram.gso;
  std::copy_n(accept.cookie.begin(), plan.tag.size(), plan.tag.begin());

  DatagramRun run;
  run.mode = mode;
  std::vector<Sender> senders(request.test.streams);
  int sndbuf_bytes = 0;
  for (std::uint32_t i = 0; i < senders.size(); ++i) {
    senders[i].fd = connect_udp_beside(control.native_handle(), accept.udp_ports[is_encrypted(mode) ? i : 0]);
    sndbuf_bytes = set_send_buffer(senders[i].fd.get(), config.test.sndbuf_bytes);
  }
  if (is_encrypted(mode)) shake_hands(config, *dtls, accept, senders, run);
  control.set_deadline(Deadline::after(timeouts.connect + timeouts.handshake));
  (void)receive<protocol::Ready>(control, "the receiver's ready");

  std::vector<int> fds;
  for (const Sender& s : senders)
    fds.push_back(s.fd.get());
  const std::vector<RunFacts> facts = run_data_threads(fds, config.client_cpu, [&](std::size_t i) {
    try {
      send_all(senders[i], static_cast<std::uint32_t>(i), plan, interrupt);
    } catch (const std::exception& e) {
      senders[i].error = e.what();
      senders[i].last_ns = measure::now_ns();
    }
  });

  const DatagramResult mine = senders_count(senders, facts, config.test.chunk_bytes, sndbuf_bytes);
  control.set_deadline(Deadline::after(timeouts.control));
  send_message(control, mine, "the senders' count");
  if (!mine.error.empty()) throw Error(fmt::format("{} (the client, sending)", mine.error));

  control.set_deadline(Deadline::after(timeouts.control + kDrainLimit));
  const auto theirs = receive<DatagramResult>(control, "the receiver's count");
  const double wall_us = clock.elapsed_us();
  session::await_close(control, timeouts.control);
  if (theirs.role != Role::receiver || theirs.senders.size() != senders.size()) {
    throw protocol::ProtocolError("the receiver's count does not match the senders");
  }
  if (!theirs.error.empty()) {
    throw Error(fmt::format("{} (the server, receiving)", theirs.error));
  }
  if (const std::string line = check_peer_datagrams(PeerJudge(Peer::server, wall_us), request, mine, theirs);
      !line.empty()) {
    throw Error(line);
  }
  add_counts(mine, theirs, request.test.chunk_bytes, run);
  return run;
}

}  // namespace tlscmp::kinds
