#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framing/framing.hpp"

using namespace tlscmp::framing;

namespace {

std::vector<std::byte> bytes(const std::string& text) {
  std::vector<std::byte> out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i)
    out[i] = static_cast<std::byte>(text[i]);
  return out;
}

std::string len4(const std::string& payload) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  return std::string{char(n >> 24), char(n >> 16), char(n >> 8), char(n)} + payload;
}

// Feeds `stream` split at `cut`, collecting what the parser delivers.
std::vector<std::string> parse_split(Parser& parser, const std::vector<std::byte>& stream, std::size_t cut) {
  std::vector<std::string> out;
  auto deliver = [&](std::span<const std::byte> m) {
    out.emplace_back(reinterpret_cast<const char*>(m.data()), m.size());
  };
  REQUIRE(parser.feed(std::span(stream).first(cut), deliver).empty());
  REQUIRE(parser.feed(std::span(stream).subspan(cut), deliver).empty());
  return out;
}

}  // namespace

TEST_CASE("len4: messages split across reads at every byte position arrive whole") {
  const std::vector<std::string> messages{"hello", "", "x", std::string(300, 'q'), "last one"};
  std::string text;
  for (const auto& m : messages)
    text += len4(m);
  const std::vector<std::byte> stream = bytes(text);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    CAPTURE(cut);
    Parser parser(Framing::len4, 0, kMaxMessageBytes);
    CHECK(parse_split(parser, stream, cut) == messages);
    CHECK(parser.messages() == messages.size());
    CHECK(parser.payload_bytes() == 5 + 0 + 1 + 300 + 8);
    CHECK_FALSE(parser.mid_message());
  }
}

TEST_CASE("len4: one byte at a time") {
  const std::string text = len4("abc") + len4("") + len4("defg");
  Parser parser(Framing::len4, 0, kMaxMessageBytes);
  std::vector<std::string> out;
  // Each byte a span of its own into the whole (a span of one stack byte
  // makes GCC 14 warn of the raw path's copy, which never runs here).
  std::vector<std::byte> bytes;
  for (char c : text)
    bytes.push_back(static_cast<std::byte>(c));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    REQUIRE(parser
                .feed(std::span(bytes).subspan(i, 1),
                      [&](std::span<const std::byte> m) {
                        out.emplace_back(reinterpret_cast<const char*>(m.data()), m.size());
                      })
                .empty());
  }
  CHECK(out == std::vector<std::string>{"abc", "", "defg"});
}

TEST_CASE(
    "len4: a length at the cap is taken, one above it is an error naming its offset, never an allocation") {
  Parser at_cap(Framing::len4, 0, 16);
  const std::vector<std::byte> ok = bytes(len4(std::string(16, 'm')));
  std::size_t seen = 0;
  CHECK(at_cap.feed(ok, [&](std::span<const std::byte> m) { seen = m.size(); }).empty());
  CHECK(seen == 16);

  Parser over(Framing::len4, 0, 16);
  const std::vector<std::byte> bad = bytes(len4("abc") + len4(std::string(17, 'm')));
  const std::string error = over.feed(bad, [](std::span<const std::byte>) {});
  CHECK(error.find("length prefix of 17 bytes at stream offset 7") != std::string::npos);
  CHECK(error.find("--max-msg 16") != std::string::npos);

  // A huge announced length with only its header fed: refused, not allocated.
  Parser huge(Framing::len4, 0, kMaxMessageBytes);
  const std::vector<std::byte> header{std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}};
  CHECK_FALSE(huge.feed(header, [](std::span<const std::byte>) {}).empty());
}

TEST_CASE("raw with a message size: the stream is cut into whole messages") {
  const std::vector<std::byte> stream = bytes("aaaabbbbccccdddd");
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    CAPTURE(cut);
    Parser parser(Framing::raw, 4, kMaxMessageBytes);
    CHECK(parse_split(parser, stream, cut) == std::vector<std::string>{"aaaa", "bbbb", "cccc", "dddd"});
  }
  Parser half(Framing::raw, 4, kMaxMessageBytes);
  CHECK(half.feed(std::span(stream).first(6), [](std::span<const std::byte>) {}).empty());
  CHECK(half.mid_message());
  CHECK(half.messages() == 1);
}

TEST_CASE("the source writes the stream the parser expects, for small and large messages") {
  for (const auto& [framing, size] :
       {std::pair{Framing::len4, std::uint64_t{10}}, std::pair{Framing::len4, std::uint64_t{5000}},
        std::pair{Framing::raw, std::uint64_t{7}}, std::pair{Framing::len4, std::uint64_t{0}}}) {
    CAPTURE(to_string(framing));
    CAPTURE(size);
    const Source source(framing, size, 1024);
    const std::uint64_t messages = 50;
    const std::uint64_t total =
        stream_bytes(framing, size, messages) + (size == 0 && framing == Framing::raw ? 0 : 0);
    std::vector<std::byte> stream;
    for (std::uint64_t offset = 0; offset < total;) {
      const auto piece = source.next(offset, total - offset);
      REQUIRE_FALSE(piece.empty());
      stream.insert(stream.end(), piece.begin(), piece.end());
      offset += piece.size();
    }
    Parser parser(framing, size == 0 ? 1 : size, kMaxMessageBytes);
    std::uint64_t bad = 0;
    REQUIRE(parser
                .feed(stream,
                      [&](std::span<const std::byte> m) {
                        if (m.size() != size) ++bad;
                        for (std::size_t k = 0; k < m.size(); ++k) {
                          if (m[k] != static_cast<std::byte>('a' + k % 26)) ++bad;
                        }
                      })
                .empty());
    CHECK(parser.messages() == messages);
    CHECK(bad == 0);
    CHECK(source.to_message_end(0) == 0);
  }
}
