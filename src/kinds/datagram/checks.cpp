// A datagram test's peer checks (see check_peer_datagrams in kinds/datagram/datagram.hpp).

#include <fmt/format.h>
#include <numeric>

#include "kinds/datagram/datagram.hpp"

namespace tlscmp::kinds {

std::string DatagramResult::check(const DatagramResult& m) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < m.senders.size(); ++i) {
    const SenderCount& s = m.senders[i];
    if (s.sender != i) return fmt::format("sender {} comes where sender {} belongs", s.sender, i);
    if (s.last_us < s.first_us) return "a sender's last datagram comes before its first";
    total += s.packets;
  }
  std::uint64_t sum = 0;
  double previous_end = 0;
  for (const IntervalCount& interval : m.intervals) {
    if (interval.end_us < previous_end) return "interval ends out of order";
    previous_end = interval.end_us;
    if (interval.received > spec::kMaxTestBytes - sum) return "interval counts are too large";
    sum += interval.received;
  }
  if (sum > total) return "interval counts add up to more than the senders' packets";
  return {};
}

namespace {

// One sender's datagrams as the peer counted them, against this side's count.
std::string check_datagram_sender(const PeerJudge& judge, const protocol::TestRequest& request,
                                  const SenderCount& mine, const SenderCount& theirs) {
  const bool peer_is_server = judge.peer() == Peer::server;
  const SenderCount& sent = peer_is_server ? mine : theirs;
  const SenderCount& received = peer_is_server ? theirs : mine;
  const std::string at = fmt::format("senders[{}].", theirs.sender);
  if (received.packets > sent.packets) {
    return peer_is_server
               ? judge.disagree(
                     fmt::format("receiving {} datagrams from sender {}", received.packets, theirs.sender),
                     fmt::format("{} sent {}", judge.here(), sent.packets), at + "packets")
               : judge.disagree(
                     fmt::format("sending {} datagrams from sender {}", sent.packets, theirs.sender),
                     fmt::format("{} received {} distinct ones", judge.here(), received.packets),
                     at + "packets");
  }
  if (!bytes_are_pieces(theirs.bytes, theirs.packets, request.test.chunk_bytes)) {
    return judge.disagree(
        fmt::format("{} bytes in {} datagrams from sender {}", theirs.bytes, theirs.packets, theirs.sender),
        fmt::format("every datagram of this test is {} bytes", request.test.chunk_bytes), at + "bytes");
  }
  if (theirs.reordered > theirs.packets) {
    return judge.disagree(fmt::format("{} of {} datagrams from sender {} reordered", theirs.reordered,
                                      theirs.packets, theirs.sender),
                          "a reordered datagram is one received", at + "reordered");
  }
  const std::string span =
      fmt::format("sender {}'s datagrams {} from {:.0f} us to {:.0f} us", theirs.sender,
                  peer_is_server ? "arriving" : "going", theirs.first_us, theirs.last_us);
  if (theirs.first_us > theirs.last_us)
    return judge.disagree(span, "the first came after the last", at + "first_us");
  return judge.check_window(span, theirs.last_us, theirs.last_us, false, at + "last_us");
}

// The receiver's intervals (-i): they add up to what it received, and end within the run.
std::string check_datagram_intervals(const PeerJudge& judge, const DatagramResult& theirs) {
  if (theirs.intervals.empty()) return {};
  std::uint64_t in_intervals = 0;
  for (const IntervalCount& i : theirs.intervals)
    in_intervals += i.received;
  std::uint64_t received = 0;
  for (const SenderCount& s : theirs.senders)
    received += s.packets;
  const double last_end_us = theirs.intervals.back().end_us;
  if (in_intervals == received && last_end_us <= judge.allowed_us()) return {};
  return judge.disagree(
      fmt::format("{} intervals of {} datagrams in all, the last ending at {:.0f} us",
                  theirs.intervals.size(), in_intervals, last_end_us),
      fmt::format("they must add up to the {} it received, within the {:.0f} us the run took on {}", received,
                  judge.wall_us(), judge.here()),
      "intervals");
}

}  // namespace

std::string check_peer_datagrams(const PeerJudge& judge, const protocol::TestRequest& request,
                                 const DatagramResult& mine, const DatagramResult& theirs) {
  for (std::size_t i = 0; i < theirs.senders.size() && i < mine.senders.size(); ++i) {
    if (std::string line = check_datagram_sender(judge, request, mine.senders[i], theirs.senders[i]);
        !line.empty()) {
      return line;
    }
  }
  const bool peer_is_server = judge.peer() == Peer::server;
  if (std::string line =
          judge.check_window(fmt::format("{} datagrams over {:.0f} us",
                                         peer_is_server ? "receiving" : "sending", theirs.elapsed_us),
                             theirs.elapsed_us, theirs.elapsed_us, false, "elapsed_us");
      !line.empty()) {
    return line;
  }
  const std::uint32_t threads = peer_is_server ? 1 : request.test.streams;
  if (std::string line = judge.check_cpu(
          theirs.cpu_user_s, theirs.cpu_system_s, threads,
          peer_is_server ? "on its receiving thread" : fmt::format("on its {} sender threads", threads));
      !line.empty()) {
    return line;
  }
  return peer_is_server ? check_datagram_intervals(judge, theirs) : std::string();
}

}  // namespace tlscmp::kinds
