// A handshake test's peer check (see check_peer_handshakes in kinds/handshake/handshake.hpp).

#include <fmt/format.h>

#include "kinds/handshake/handshake.hpp"

namespace tlscmp::kinds {

std::string check_peer_handshakes(const PeerJudge& judge, const SideResult& mine, const SideResult& theirs) {
  if (theirs.bytes == mine.bytes) return {};
  const bool peer_is_server = judge.peer() == Peer::server;
  return judge.disagree(
      fmt::format("{} {} handshake connections", peer_is_server ? "serving" : "making", theirs.bytes),
      fmt::format("{} {} {}", judge.here(), peer_is_server ? "made" : "served", mine.bytes), "bytes");
}

}  // namespace tlscmp::kinds
