// HTTP/3's framing (framing/http3.hpp) between a client's and a server's
// codec in memory, each stream's bytes handed to the other side as a QUIC
// connection would: requests asked on their streams are answered once
// each, with their bodies, multiplexed; what the server must refuse (an
// unknown path or method, oversized headers, bytes that are not HTTP/3)
// ends it with one line. Skipped where the build has no nghttp3 (Debian 12).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framing/http3.hpp"
#include "support/skip.hpp"

using namespace tlscmp::framing;

namespace {

constexpr std::uint64_t kMost = 1 << 20;

// QUIC's stream numbers: a client's bidirectional 0, 4, 8...; its one-way
// 2, 6, 10; the server's one-way 3, 7, 11.
struct Numbers {
  std::int64_t next_request = 0;
  std::int64_t request() { return std::exchange(next_request, next_request + 4); }
};

void bind_both(Http3ClientCodec& client, Http3ServerCodec& server) {
  REQUIRE(client.bind(2, 6, 10).empty());
  REQUIRE(server.bind(3, 7, 11).empty());
}

// Moves each side's pieces to the other until neither has more; the first
// error either side met.
std::string pump(Http3ClientCodec& client, Http3ServerCodec& server, std::vector<HttpAnswer>& answers) {
  for (int round = 0; round < 10000; ++round) {
    bool moved = false;
    for (StreamBytes out = client.output(); out.id >= 0; out = client.output()) {
      const std::vector<std::byte> bytes(out.bytes.begin(), out.bytes.end());
      const StreamBytes piece{out.id, bytes, out.fin};
      client.sent(piece);
      if (std::string failed = server.input(piece); !failed.empty()) return "server: " + failed;
      moved = true;
    }
    for (StreamBytes out = server.output(); out.id >= 0; out = server.output()) {
      const std::vector<std::byte> bytes(out.bytes.begin(), out.bytes.end());
      const StreamBytes piece{out.id, bytes, out.fin};
      server.sent(piece);
      if (std::string failed = client.input(piece, 1000, answers); !failed.empty())
        return "client: " + failed;
      moved = true;
    }
    if (!moved) return {};
  }
  return "no end";
}

// One GET of `path` between a fresh client and server: the first error
// either side met.
std::string one_get(const std::string& path) {
  const auto client = http3_client({3, "localhost:5201", path, 0});
  const auto server = http3_server(kMost);
  bind_both(*client, *server);
  std::vector<HttpAnswer> answers;
  client->ask(0, 0);
  return pump(*client, *server, answers);
}

}  // namespace

TEST_CASE("HTTP/3: every request asked is answered once, with its body, several in flight") {
  if (!has_http3()) return tlscmp::test::skip_unsupported("this build has no nghttp3 1.x (Debian 13 has it)");
  for (std::uint64_t request_bytes : {0ull, 100'000ull}) {
    CAPTURE(request_bytes);
    const auto client = http3_client({3, "localhost:5201", "/4096", request_bytes});
    const auto server = http3_server(kMost);
    bind_both(*client, *server);
    Numbers numbers;
    std::vector<HttpAnswer> answers;
    for (int i = 0; i < 10; ++i)
      client->ask(numbers.request(), i);
    CHECK(client->in_flight() == 10);
    REQUIRE(pump(*client, *server, answers) == "");
    CHECK(answers.size() == 10);
    for (const HttpAnswer& a : answers)
      CHECK(a.body == 4096);
    CHECK(client->in_flight() == 0);
    CHECK(server->answered() == 10);
    CHECK(server->body_received() == 10 * request_bytes);
    CHECK_FALSE(server->mid_request());
  }
}

TEST_CASE("HTTP/3: a server refuses what names no response, and oversized headers, in one line") {
  if (!has_http3()) return tlscmp::test::skip_unsupported("this build has no nghttp3 1.x (Debian 13 has it)");
  SUBCASE("a path that names no size") {
    CHECK(one_get("/index.html")
              .find("server: request 1 asked for GET /index.html, which names no response size") == 0);
  }
  SUBCASE("a body past the cap") {
    CHECK(one_get("/99999999").find("names no response size") != std::string::npos);
  }
  SUBCASE("headers past the cap") {
    const std::string failed = one_get("/4096?" + std::string(20'000, 'a'));
    CHECK(failed.find("server: ") == 0);
    CHECK(failed.find("16 KiB") != std::string::npos);
  }
  SUBCASE("bytes that are not HTTP/3 on a request stream") {
    const auto server = http3_server(kMost);
    REQUIRE(server->bind(3, 7, 11).empty());
    const std::string junk = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    const StreamBytes piece{0, std::as_bytes(std::span(junk.data(), junk.size())), true};
    CHECK(server->input(piece).find("the peer's HTTP/3 is not valid") == 0);
  }
}
