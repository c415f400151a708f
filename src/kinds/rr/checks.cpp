// A request/response test's peer checks (see check_peer_connection in kinds/rr/rr.hpp).

#include <fmt/format.h>

#include "kinds/rr/rr.hpp"

namespace tlscmp::kinds {

std::string check_peer_connection(const PeerJudge& judge, const protocol::TestRequest& request,
                                  const SideResult& mine, const SideResult& theirs) {
  const std::uint32_t part = theirs.stream;
  // The client counts responses taken whole, the server requests answered;
  // each receives `size` bytes a transaction.
  const bool client = judge.peer() == Peer::client;
  const char* theirs_are = client ? "responses" : "requests";
  const char* mine_are = client ? "requests" : "responses";
  if (theirs.messages != mine.messages) {
    return judge.disagree(
        fmt::format("{} {} {}", client ? "taking" : "answering", theirs.messages, theirs_are),
        fmt::format("{} {} {} {}", judge.here(), client ? "answered" : "took", mine.messages, mine_are),
        "messages", part);
  }
  const std::uint64_t size = client ? request.test.rr.response_bytes : request.test.rr.request_bytes;
  if (!bytes_are_pieces(theirs.bytes, theirs.messages, size)) {
    return judge.disagree(
        fmt::format("receiving {} bytes in {} {}", theirs.bytes, theirs.messages, theirs_are),
        fmt::format("{} sent {} {} of {} bytes", judge.here(), mine.messages, theirs_are, size), "bytes",
        part);
  }
  // Open loop, a client's window lasts its schedule (-t) at least.
  const double scheduled_us =
      client && request.test.rr.rate_tps > 0 ? static_cast<double>(request.test.duration_ms) * 1e3 : 0;
  if (std::string line =
          judge.check_window(fmt::format("{} {} {} in {:.0f} us", client ? "taking" : "answering",
                                         theirs.messages, theirs_are, theirs.elapsed_us),
                             theirs.elapsed_us, theirs.offset_us + theirs.elapsed_us, theirs.messages > 0,
                             "elapsed_us", part, scheduled_us);
      !line.empty()) {
    return line;
  }
  return judge.check_cpu(theirs.cpu_user_s, theirs.cpu_system_s, 1, "on one connection's thread", part);
}

}  // namespace tlscmp::kinds
