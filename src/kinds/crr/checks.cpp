// A crr test's peer checks (see check_peer_count in kinds/crr/crr.hpp).

#include <fmt/format.h>

#include "kinds/crr/crr.hpp"

namespace tlscmp::kinds {
namespace {

// "10 connections (9 completed, 1 failed)"
std::string crr_tally(std::uint64_t done, std::uint64_t failed, const char* done_word) {
  return fmt::format("{} connections ({} {}, {} failed)", done + failed, done, done_word, failed);
}

// The counts of completed, failed and resumed connections, both sides'.
std::string check_crr_counts(const PeerJudge& judge, const SideResult& client, const SideResult& server) {
  const bool peer_is_server = judge.peer() == Peer::server;
  const char* here = judge.here();
  if (client.connections > server.connections) {
    return peer_is_server
               ? judge.disagree(fmt::format("serving {} connections", server.connections),
                                fmt::format("{} completed {}", here, client.connections), "connections")
               : judge.disagree(fmt::format("completing {} connections", client.connections),
                                fmt::format("{} served only {}", here, server.connections), "connections");
  }
  if (server.connections + server.failed > client.connections + client.failed) {
    const std::string served = crr_tally(server.connections, server.failed, "served");
    const std::string tried = crr_tally(client.connections, client.failed, "completed");
    return peer_is_server
               ? judge.disagree(fmt::format("{} for this test", served),
                                fmt::format("{} tried only {}", here, tried), "connections + failed")
               : judge.disagree(fmt::format("trying {}", tried),
                                fmt::format("{} took {} for this test", here, served),
                                "connections + failed");
  }
  if (client.resumed > server.resumed) {
    return peer_is_server
               ? judge.disagree(fmt::format("resuming {} sessions", server.resumed),
                                fmt::format("{} resumed {}", here, client.resumed), "resumed")
               : judge.disagree(fmt::format("resuming {} sessions", client.resumed),
                                fmt::format("{} resumed only {}", here, server.resumed), "resumed");
  }
  return {};
}

// Over TCP with no failures: each request (preamble and cookie included)
// and each response exactly once. TLS counts records, handshakes and all,
// and kTLS on the server leaves them uncounted: no exact figure there.
std::string check_crr_bytes(const PeerJudge& judge, const protocol::TestRequest& request,
                            const SideResult& client, const SideResult& server) {
  if (is_encrypted(request.mode) || client.failed > 0 || server.failed > 0) return {};
  const std::uint64_t count = client.connections;
  const std::uint64_t request_wire =
      protocol::kPreambleBytes + protocol::kCookieBytes + request.test.rr.request_bytes;
  if (judge.peer() == Peer::client) {
    if (bytes_are_pieces(client.bytes, count, request.test.rr.response_bytes)) return {};
    return judge.disagree(fmt::format("receiving {} bytes", client.bytes),
                          fmt::format("{} sent {} responses of {} bytes", judge.here(), server.connections,
                                      request.test.rr.response_bytes),
                          "bytes");
  }
  if (!bytes_are_pieces(server.bytes, count, request_wire)) {
    return judge.disagree(fmt::format("receiving {} bytes", server.bytes),
                          fmt::format("{} sent {} requests of {} bytes, preamble and cookie included",
                                      judge.here(), count, request_wire),
                          "bytes");
  }
  if (!bytes_are_pieces(server.wire_bytes_sent, count, request.test.rr.response_bytes)) {
    return judge.disagree(fmt::format("sending {} bytes", server.wire_bytes_sent),
                          fmt::format("{} received {} responses of {} bytes", judge.here(), count,
                                      request.test.rr.response_bytes),
                          "wire_bytes_sent");
  }
  return {};
}

}  // namespace

std::string check_peer_count(const PeerJudge& judge, const protocol::TestRequest& request,
                             const SideResult& mine, const SideResult& theirs) {
  const bool peer_is_server = judge.peer() == Peer::server;
  const SideResult& client = peer_is_server ? mine : theirs;
  const SideResult& server = peer_is_server ? theirs : mine;
  if (std::string line = check_crr_counts(judge, client, server); !line.empty()) return line;
  if (std::string line = check_crr_bytes(judge, request, client, server); !line.empty()) return line;
  if (std::string line = judge.check_window(
          fmt::format("{} {} connections in {:.0f} us", peer_is_server ? "serving" : "completing",
                      theirs.connections, theirs.elapsed_us),
          theirs.elapsed_us, theirs.elapsed_us, theirs.connections > 0, "elapsed_us");
      !line.empty()) {
    return line;
  }
  if (peer_is_server) return {};
  return judge.check_cpu(theirs.cpu_user_s, theirs.cpu_system_s, request.test.streams,
                         "on its connectors' threads");
}

}  // namespace tlscmp::kinds
