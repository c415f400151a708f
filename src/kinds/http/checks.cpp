// An HTTP test's peer checks (see check_http_peer in kinds/http/http.hpp).

#include <fmt/format.h>

#include "kinds/http/http.hpp"

namespace tlscmp::kinds {

std::string check_http_peer(const PeerJudge& judge, const protocol::TestRequest& request,
                            const SideResult& mine, const SideResult& theirs) {
  const std::uint32_t part = theirs.stream;
  const bool client = judge.peer() == Peer::client;
  const char* theirs_are = client ? "responses" : "requests";
  if (theirs.messages != mine.messages) {
    return judge.disagree(
        fmt::format("{} {} {}", client ? "taking" : "answering", theirs.messages, theirs_are),
        fmt::format("{} {} {} requests", judge.here(), client ? "answered" : "made", mine.messages),
        "messages", part);
  }
  // Each side counts the bodies it received: the requests' or the responses'.
  const std::uint64_t size = client ? request.test.rr.response_bytes : request.test.rr.request_bytes;
  if (theirs.bytes != theirs.messages * size) {
    return judge.disagree(
        fmt::format("receiving {} bytes of body in {} {}", theirs.bytes, theirs.messages, theirs_are),
        fmt::format("{} sent {} bodies of {} bytes", judge.here(), mine.messages, size), "bytes", part);
  }
  if (std::string line =
          judge.check_window(fmt::format("{} {} {} in {:.0f} us", client ? "taking" : "answering",
                                         theirs.messages, theirs_are, theirs.elapsed_us),
                             theirs.elapsed_us, theirs.offset_us + theirs.elapsed_us, theirs.messages > 0,
                             "elapsed_us", part, 0);
      !line.empty())
    return line;
  return judge.check_cpu(theirs.cpu_user_s, theirs.cpu_system_s, 1, "on one connection's thread", part);
}

}  // namespace tlscmp::kinds

namespace tlscmp::kinds {

std::string check_http_count(const PeerJudge& judge, const protocol::TestRequest& request,
                             const SideResult& mine, const SideResult& theirs) {
  const bool client = judge.peer() == Peer::client;
  // Connections, resumed ones and requests: each side counted the same ones.
  struct Count {
    const char* field;  // the result's field
    const char* noun;   // what it counts, in the line
    std::uint64_t peer;
    std::uint64_t here;
    const char* verb;
  };
  const Count counts[] = {
      {"connections", "connections", theirs.connections, mine.connections, client ? "opening" : "serving"},
      {"resumed", "resumed", theirs.resumed, mine.resumed, "resuming"},
      {"messages", "requests", theirs.messages, mine.messages, client ? "taking responses to" : "answering"},
  };
  for (const Count& c : counts) {
    if (c.peer != c.here)
      return judge.disagree(fmt::format("{} {} {}", c.verb, c.peer, c.noun),
                            fmt::format("{} counted {}", judge.here(), c.here), c.field);
  }
  const std::uint64_t size = client ? request.test.rr.response_bytes : request.test.rr.request_bytes;
  if (!bytes_are_pieces(theirs.bytes, theirs.messages, size))
    return judge.disagree(fmt::format("receiving {} bytes of body in {} {}", theirs.bytes, theirs.messages,
                                      client ? "responses" : "requests"),
                          fmt::format("bodies of {} bytes", size), "bytes");
  if (std::string line =
          judge.check_window(fmt::format("{} {} connections in {:.0f} us", client ? "opening" : "serving",
                                         theirs.connections, theirs.elapsed_us),
                             theirs.elapsed_us, theirs.elapsed_us, theirs.connections > 0, "elapsed_us");
      !line.empty())
    return line;
  if (!client) return {};  // the server's connections ran on its accepting threads, however many
  return judge.check_cpu(theirs.cpu_user_s, theirs.cpu_system_s, request.test.streams,
                         "on its connectors' threads");
}

}  // namespace tlscmp::kinds
