#pragma once

// Message framing over a byte stream, the workload of seeds/000: messages of
// a fixed size, either each behind a 4-byte big-endian length (Erlang's
// {packet,4}) or back to back with the application splitting the stream
// itself ({packet,0}). Pure code on byte spans: the data path feeds it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "byte_order.hpp"

namespace tlscmp::framing {

enum class Framing : std::uint8_t {
  raw,   // no headers; with a message size, the receiver cuts the stream itself
  len4,  // each message behind a 4-byte big-endian length
};

inline constexpr std::size_t kHeaderBytes = 4;
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 30;  // 1 GiB

const char* to_string(Framing framing);

// The length in a 4-byte big-endian prefix.
inline std::uint64_t load_length(std::span<const std::byte, kHeaderBytes> prefix) {
  return load_big_u32(prefix.data());
}

// The stream bytes that carry `messages` messages of `message_bytes` each.
inline std::uint64_t stream_bytes(Framing framing, std::uint64_t message_bytes, std::uint64_t messages) {
  return messages * (message_bytes + (framing == Framing::len4 ? kHeaderBytes : 0));
}

// Cuts a byte stream into messages and hands each to `deliver` whole, in one
// contiguous span: straight from the caller's buffer when a message lies
// within it, else from a buffer of the parser's own that grows with the bytes
// of the message that have come (never with what a header announces, so a
// peer that announces a large message and sends little costs little), up to
// the largest message seen. A length prefix above the cap (or, for len4
// with a message size, above that size) is an error naming its stream
// offset, never an allocation.
class Parser {
 public:
  // raw: `message_bytes` is the size to cut at (> 0). len4: headers say, up
  // to `message_bytes` where it is > 0 (a test's messages all have its size).
  Parser(Framing framing, std::uint64_t message_bytes, std::uint64_t max_message_bytes);

  // Feeds the next bytes of the stream. Returns "" or the reason the stream is bad.
  template <typename Deliver>
  std::string feed(std::span<const std::byte> data, Deliver&& deliver);

  std::uint64_t messages() const { return messages_; }
  std::uint64_t payload_bytes() const { return payload_bytes_; }
  // True while a message (or its header) has begun and not ended.
  bool mid_message() const { return header_have_ > 0 || in_body_; }
  // The bytes its own buffer holds: what assembling messages costs in memory.
  std::size_t held_bytes() const { return assembly_.capacity(); }

 private:
  bool start_body(std::uint64_t length, std::string& error);
  // Room for the first `needed` bytes of the message being assembled.
  void grow(std::uint64_t needed);
  // Why a length prefix at stream offset `at` is refused, or "".
  std::string length_problem(std::uint64_t length, std::uint64_t at) const;

  Framing framing_;
  std::uint64_t fixed_bytes_;  // raw: the message size
  std::uint64_t max_bytes_;
  std::uint64_t offset_ = 0;  // stream offset of the next byte fed
  std::uint64_t messages_ = 0;
  std::uint64_t payload_bytes_ = 0;
  std::byte header_[kHeaderBytes]{};
  std::size_t header_have_ = 0;
  bool in_body_ = false;
  std::uint64_t body_bytes_ = 0;  // the message being assembled
  std::uint64_t body_have_ = 0;
  std::vector<std::byte> assembly_;
};

template <typename Deliver>
std::string Parser::feed(std::span<const std::byte> data, Deliver&& deliver) {
  std::string error;
  std::size_t i = 0;
  const std::size_t n = data.size();
  while (i < n) {
    if (!in_body_) {
      if (framing_ == Framing::raw) {
        // Fast path: whole messages straight from the caller's buffer.
        while (n - i >= fixed_bytes_) {
          deliver(data.subspan(i, fixed_bytes_));
          ++messages_;
          payload_bytes_ += fixed_bytes_;
          i += fixed_bytes_;
          offset_ += fixed_bytes_;
        }
        if (i == n) break;
        if (!start_body(fixed_bytes_, error)) return error;
      } else {
        if (header_have_ == 0) {
          // Fast path: header and body both in the caller's buffer.
          while (i + kHeaderBytes <= n) {
            const std::uint64_t length = load_length(data.subspan(i).first<kHeaderBytes>());
            if (std::string problem = length_problem(length, offset_); !problem.empty()) return problem;
            if (n - i - kHeaderBytes < length) break;
            deliver(data.subspan(i + kHeaderBytes, static_cast<std::size_t>(length)));
            ++messages_;
            payload_bytes_ += length;
            i += kHeaderBytes + static_cast<std::size_t>(length);
            offset_ += kHeaderBytes + length;
          }
          if (i == n) break;
        }
        // A header split across reads, or a body that goes on past this buffer.
        while (header_have_ < kHeaderBytes && i < n) {
          header_[header_have_++] = data[i++];
          ++offset_;
        }
        if (header_have_ < kHeaderBytes) break;
        const std::uint64_t length = load_length(std::span<const std::byte, kHeaderBytes>(header_));
        header_have_ = 0;
        if (std::string problem = length_problem(length, offset_ - kHeaderBytes); !problem.empty())
          return problem;
        if (length == 0) {
          deliver(std::span<const std::byte>{});
          ++messages_;
          continue;
        }
        if (!start_body(length, error)) return error;
      }
    }
    // Assemble the body of a message that spans buffers.
    const std::uint64_t take = std::min<std::uint64_t>(body_bytes_ - body_have_, n - i);
    if (take > 0) {  // none when the header was the last of the buffer
      grow(body_have_ + take);
      std::memcpy(assembly_.data() + body_have_, data.data() + i, static_cast<std::size_t>(take));
    }
    body_have_ += take;
    i += static_cast<std::size_t>(take);
    offset_ += take;
    if (body_have_ == body_bytes_) {
      deliver(std::span<const std::byte>(assembly_.data(), static_cast<std::size_t>(body_bytes_)));
      ++messages_;
      payload_bytes_ += body_bytes_;
      in_body_ = false;
    }
  }
  return error;
}

// Produces the sender's stream for messages of a fixed size: the header (for
// len4) and the payload of each message in turn. With no verify seed, every
// payload is the same pattern, so it is built once and writes need no work.
class Source {
 public:
  Source(Framing framing, std::uint64_t message_bytes, std::size_t chunk_bytes);
  // The next piece to write, starting at stream offset `offset`, at most
  // `limit` bytes. Cheap: a span into prepared buffers.
  std::span<const std::byte> next(std::uint64_t offset, std::uint64_t limit) const;
  // Bytes from `offset` to the end of the message it is in (0 at a boundary).
  std::uint64_t to_message_end(std::uint64_t offset) const;

 private:
  std::uint64_t period_;          // stream bytes per message
  std::size_t header_bytes_;      // 4 for len4, 0 for raw
  std::vector<std::byte> whole_;  // period_ <= chunk: as many whole messages as fit a chunk
  std::vector<std::byte> header_;
  std::vector<std::byte> payload_;  // period_ > chunk: a chunk of payload, and 26 more for the phase
};

}  // namespace tlscmp::framing
