#include "framing/framing.hpp"

#include <algorithm>

namespace tlscmp::framing {
namespace {

// The payload pattern: byte k of a message is 'a' + k mod 26.
std::byte payload_byte(std::uint64_t k) {
  return static_cast<std::byte>('a' + k % 26);
}

}  // namespace

const char* to_string(Framing framing) {
  return framing == Framing::len4 ? "len4" : "raw";
}

Parser::Parser(Framing framing, std::uint64_t message_bytes, std::uint64_t max_message_bytes)
    : framing_(framing), fixed_bytes_(message_bytes), max_bytes_(max_message_bytes) {}

void Parser::grow(std::uint64_t needed) {
  // Geometric, so that a long message is copied O(1) times a byte, but never
  // past the message: memory follows the bytes that came, not those announced.
  if (assembly_.size() >= needed) return;
  const std::uint64_t doubled = std::max<std::uint64_t>(2 * assembly_.size(), 64 * 1024);
  assembly_.resize(static_cast<std::size_t>(std::min(body_bytes_, std::max(needed, doubled))));
}

bool Parser::start_body(std::uint64_t length, std::string& error) {
  if (length > max_bytes_) {
    error =
        "a message of " + std::to_string(length) + " bytes is above --max-msg " + std::to_string(max_bytes_);
    return false;
  }
  in_body_ = true;
  body_bytes_ = length;
  body_have_ = 0;
  return true;
}

std::string Parser::length_problem(std::uint64_t length, std::uint64_t at) const {
  if (length > max_bytes_) {
    return "a length prefix of " + std::to_string(length) + " bytes at stream offset " + std::to_string(at) +
           " is above --max-msg " + std::to_string(max_bytes_);
  }
  if (fixed_bytes_ > 0 && length > fixed_bytes_) {
    return "a length prefix of " + std::to_string(length) + " bytes at stream offset " + std::to_string(at) +
           " is above the test's message size, " + std::to_string(fixed_bytes_) + " bytes";
  }
  return {};
}

Source::Source(Framing framing, std::uint64_t message_bytes, std::size_t chunk_bytes)
    : period_(message_bytes + (framing == Framing::len4 ? kHeaderBytes : 0)),
      header_bytes_(framing == Framing::len4 ? kHeaderBytes : 0) {
  header_.resize(kHeaderBytes);
  store_big_u32(header_.data(), static_cast<std::uint32_t>(message_bytes));
  if (period_ <= chunk_bytes) {
    const std::size_t fit = chunk_bytes / static_cast<std::size_t>(period_);
    whole_.reserve(fit * static_cast<std::size_t>(period_));
    for (std::size_t m = 0; m < fit; ++m) {
      whole_.insert(whole_.end(), header_.begin(),
                    header_.begin() + static_cast<std::ptrdiff_t>(header_bytes_));
      for (std::uint64_t k = 0; k < message_bytes; ++k)
        whole_.push_back(payload_byte(k));
    }
  } else {
    payload_.resize(chunk_bytes + 26);
    for (std::size_t k = 0; k < payload_.size(); ++k)
      payload_[k] = payload_byte(k);
  }
}

std::uint64_t Source::to_message_end(std::uint64_t offset) const {
  return (period_ - offset % period_) % period_;
}

std::span<const std::byte> Source::next(std::uint64_t offset, std::uint64_t limit) const {
  const std::uint64_t in_message = offset % period_;
  if (!whole_.empty()) {
    // Writes start at a message boundary and carry whole messages, except the
    // last one of a run, cut by `limit`.
    const std::uint64_t n = std::min<std::uint64_t>(whole_.size() - in_message, limit);
    return {whole_.data() + in_message, static_cast<std::size_t>(n)};
  }
  if (in_message < header_bytes_) {
    const std::uint64_t n = std::min<std::uint64_t>(header_bytes_ - in_message, limit);
    return {header_.data() + in_message, static_cast<std::size_t>(n)};
  }
  const std::uint64_t k = in_message - header_bytes_;  // offset within the payload
  const std::uint64_t n = std::min<std::uint64_t>({payload_.size() - 26, period_ - in_message, limit});
  return {payload_.data() + k % 26, static_cast<std::size_t>(n)};
}

}  // namespace tlscmp::framing
