// HTTP's framing (framing/http.hpp) between a client's and a server's
// codec in memory: the requests asked are answered in order, with their
// bodies; HTTP/1.1 pipelines and HTTP/2 multiplexes; what a server must
// refuse (an unknown path or method, oversized headers, not HTTP) is
// answered with its status and ends the connection.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framing/http.hpp"

using namespace tlscmp::framing;

namespace {

constexpr std::uint64_t kMost = 1 << 20;

// Moves what each side has to send to the other until neither has more;
// the client's answers in `answers`, the first error either side met.
std::string pump(HttpClientCodec& client, HttpServerCodec& server, std::vector<HttpAnswer>& answers,
                 std::int64_t now = 1000) {
  for (int round = 0; round < 1000; ++round) {
    bool moved = false;
    for (auto out = client.output(); !out.empty(); out = client.output()) {
      const std::vector<std::byte> bytes(out.begin(), out.end());
      client.sent(out.size());
      if (std::string failed = server.input(bytes); !failed.empty()) return "server: " + failed;
      moved = true;
    }
    for (auto out = server.output(); !out.empty(); out = server.output()) {
      const std::vector<std::byte> bytes(out.begin(), out.end());
      server.sent(out.size());
      if (std::string failed = client.input(bytes, now, answers); !failed.empty()) return "client: " + failed;
      moved = true;
    }
    if (!moved) return {};
  }
  return "no end";
}

std::vector<std::byte> request_bytes_of(const std::string& text) {
  std::vector<std::byte> bytes;
  for (char c : text)
    bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

std::string answer_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

TEST_CASE("HTTP/1.1 and HTTP/2: every request asked is answered once, in order, with its body") {
  for (std::uint32_t version : {1u, 2u}) {
    CAPTURE(version);
    for (std::uint64_t request_bytes : {0ull, 100'000ull}) {
      CAPTURE(request_bytes);
      const auto client = http_client({version, "h:1", "/70000", request_bytes});
      const auto server = http_server(version, kMost, 100);
      std::vector<HttpAnswer> answers;
      for (std::int64_t at = 1; at <= 3; ++at)
        client->ask(at);  // HTTP/1.1: pipelined; HTTP/2: three streams
      CHECK(client->in_flight() == 3);
      CHECK(pump(*client, *server, answers) == "");
      REQUIRE(answers.size() == 3);
      for (std::size_t i = 0; i < answers.size(); ++i) {
        CHECK(answers[i].asked_ns == static_cast<std::int64_t>(i + 1));
        CHECK(answers[i].body == 70'000);
      }
      CHECK(client->in_flight() == 0);
      CHECK(server->answered() == 3);
      CHECK(server->body_received() == 3 * request_bytes);
      CHECK_FALSE(server->mid_request());
    }
  }
}

TEST_CASE("HTTP/2: the client's end (GOAWAY) ends the server's session") {
  const auto client = http2_client({2, "h:1", "/10", 0});
  const auto server = http2_server(kMost, 100);
  std::vector<HttpAnswer> answers;
  client->ask(1);
  CHECK(pump(*client, *server, answers) == "");
  CHECK_FALSE(server->over());
  client->end();
  CHECK(pump(*client, *server, answers) == "");
  CHECK(server->over());
}

TEST_CASE("a server refuses what names no response, and oversized headers, with a status and an end") {
  SUBCASE("HTTP/1.1: an unknown path, a method it does not serve, headers past the cap, not HTTP") {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n", "404 Not Found"},
        {"DELETE /10 HTTP/1.1\r\nHost: x\r\n\r\n", "405 Method Not Allowed"},
        {"GET /10 HTTP/1.1\r\nX: " + std::string(kMaxHttpHeaderBytes, 'a') + "\r\n\r\n", "431 "},
        {"\x16\x03\x01 hello", "400 Bad Request"},
    };
    for (const auto& [request, status] : cases) {
      CAPTURE(status);
      const auto server = http1_server(kMost);
      CHECK_FALSE(server->input(request_bytes_of(request)).empty());
      CHECK(answer_text(server->output()).find("HTTP/1.1 " + status) == 0);
      CHECK(server->over());
      CHECK(server->answered() == 0);
    }
  }
  SUBCASE("HTTP/1.1: a body larger than the server's cap is not asked for") {
    const auto server = http1_server(100);
    CHECK(server->input(request_bytes_of("GET /101 HTTP/1.1\r\nHost: x\r\n\r\n"))
              .find("names no response size") != std::string::npos);
  }
  SUBCASE("HTTP/2: an unknown path is answered 404, and the client names it") {
    const auto client = http2_client({2, "h:1", "/nothing", 0});
    const auto server = http2_server(kMost, 100);
    std::vector<HttpAnswer> answers;
    client->ask(1);
    const std::string failed = pump(*client, *server, answers);
    CHECK(failed.find("server: request 1 asked for GET /nothing") == 0);
  }
  SUBCASE("HTTP/1.1: HEAD is answered with the length and no body; Connection: close ends it") {
    const auto server = http1_server(kMost);
    CHECK(server->input(request_bytes_of("HEAD /5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) == "");
    const std::string answer = answer_text(server->output());
    CHECK(answer.find("Content-Length: 5\r\n") != std::string::npos);
    CHECK(answer.find("Connection: close") != std::string::npos);
    CHECK(answer.substr(answer.size() - 4) == "\r\n\r\n");
    CHECK(server->over());
    CHECK(server->answered() == 1);
  }
}

TEST_CASE("a client names a status other than 200, and bytes it did not ask for") {
  const auto client = http1_client({1, "h:1", "/x", 0});
  std::vector<HttpAnswer> answers;
  CHECK(client->input(request_bytes_of("HTTP/1.1 200 OK\r\n\r\n"), 1, answers) ==
        "the server sent bytes no request asked for");
  client->ask(1);
  CHECK(client->input(request_bytes_of("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"), 2, answers) ==
        "the server answered request 1 (GET /x) with status 404");
  const auto h2 = http2_client({2, "h:1", "/x", 0});
  CHECK(h2->input(request_bytes_of("HTTP/1.1 400 Bad Request\r\n"), 1, answers)
            .find("the server answered in HTTP/1.x") == 0);
}

TEST_CASE("the path names the response's size, up to the cap") {
  CHECK(response_size_of("/4096", kMost) == 4096u);
  CHECK(response_size_of("/4096?x=1", kMost) == 4096u);
  CHECK(response_size_of("/0", kMost) == 0u);
  CHECK_FALSE(response_size_of("/", kMost));
  CHECK_FALSE(response_size_of("/12a", kMost));
  CHECK_FALSE(response_size_of("4096", kMost));
  CHECK_FALSE(response_size_of("/2000000", kMost));
}
