// A stream test's peer checks (see check_peer_stream in kinds/stream/stream.hpp).

#include <fmt/format.h>

#include "kinds/stream/stream.hpp"

namespace tlscmp::kinds {

std::string check_peer_stream(const PeerJudge& judge, const SideResult& mine, const SideResult& theirs) {
  const std::uint32_t part = theirs.stream;
  const bool sending = theirs.role == Role::sender;
  const char* their_verb = sending ? "sending" : "receiving";
  const std::string seen_verb = fmt::format("{} {}", judge.here(), sending ? "received" : "sent");
  const std::string claim =
      fmt::format("{} {} bytes in {:.0f} us", their_verb, theirs.bytes, theirs.elapsed_us);
  if (theirs.bytes != mine.bytes)
    return judge.disagree(claim, fmt::format("{} {}", seen_verb, mine.bytes), "bytes", part);
  if (theirs.messages != mine.messages) {
    return judge.disagree(fmt::format("{} {} messages", their_verb, theirs.messages),
                          fmt::format("{} {}", seen_verb, mine.messages), "messages", part);
  }
  if (theirs.payload_bytes != mine.payload_bytes) {
    return judge.disagree(
        fmt::format("{} {} payload bytes in its messages", their_verb, theirs.payload_bytes),
        fmt::format("{} {}", seen_verb, mine.payload_bytes), "payload_bytes", part);
  }
  if (std::string line = judge.check_window(claim, theirs.elapsed_us, theirs.offset_us + theirs.elapsed_us,
                                            theirs.bytes > 0, "elapsed_us", part);
      !line.empty()) {
    return line;
  }
  if (std::string line =
          judge.check_cpu(theirs.cpu_user_s, theirs.cpu_system_s, 1, "on one data thread", part);
      !line.empty()) {
    return line;
  }
  return check_intervals(judge, theirs);
}

}  // namespace tlscmp::kinds
