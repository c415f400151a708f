// The handshake kind's statistics (kinds/handshake/results.hpp).

#include <algorithm>

#include "kinds/handshake/results.hpp"

namespace tlscmp::kinds {

void HandshakeSamples::add(const HandshakeSamples& more) {
  for (auto [mine, theirs] :
       {std::pair{&handshake_us, &more.handshake_us}, std::pair{&tls_us, &more.tls_us},
        std::pair{&bytes_received, &more.bytes_received}, std::pair{&bytes_sent, &more.bytes_sent},
        std::pair{&client_hello_bytes, &more.client_hello_bytes},
        std::pair{&server_hello_bytes, &more.server_hello_bytes}}) {
    mine->insert(mine->end(), theirs->begin(), theirs->end());
  }
  resumed += more.resumed;
}

HandshakeStats HandshakeSamples::summarize() const {
  return {measure::summarize(handshake_us),
          measure::summarize(tls_us),
          measure::summarize(bytes_received),
          measure::summarize(bytes_sent),
          resumed,
          measure::summarize(client_hello_bytes),
          measure::summarize(server_hello_bytes)};
}

const HandshakeResults* group_baseline(const std::vector<GroupHandshakes>& groups,
                                       const std::string& library) {
  for (const GroupHandshakes& g : groups) {
    if (g.group == "X25519" && g.library == library && g.results) return &*g.results;
  }
  return nullptr;
}

GroupRatios group_ratios(const HandshakeResults& group, const HandshakeResults& x25519) {
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0; };
  return {ratio(group.full.per_second(), x25519.full.per_second()),
          ratio(group.resumed.per_second(), x25519.resumed.per_second()),
          ratio(group.full.tls_us.median, x25519.full.tls_us.median),
          ratio(group.resumed.tls_us.median, x25519.resumed.tls_us.median),
          ratio(group.full.client_hello_bytes.median, x25519.full.client_hello_bytes.median),
          ratio(group.full.server_hello_bytes.median, x25519.full.server_hello_bytes.median)};
}

}  // namespace tlscmp::kinds
