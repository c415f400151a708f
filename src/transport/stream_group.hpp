#pragma once

// A connection's streams by number, for a protocol that spreads one
// exchange over several (HTTP/3: a request a bidirectional stream, control
// and QPACK streams beside them): QUIC's, as its stack offers them
// (Stream::stream_group). The stream the group was made from (the test's
// preamble came on it) is one of them, `base_id()`: its bytes and end are
// read as any other's, so that a peer's end of the test is seen there.

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <system_error>

namespace tlscmp {

class StreamGroup {
 public:
  virtual ~StreamGroup() = default;
  // The stream the group was made from.
  virtual std::int64_t base_id() const = 0;
  // A new stream of this side's, bidirectional or one-way: its number.
  // Throws tlscmp::Error if the library opens none.
  virtual std::int64_t open(bool bidirectional) = 0;
  // Writes all of `bytes` to stream `id`, and its end after them with
  // `fin`, waiting up to `idle` at a time while its flow control holds
  // them; ec on failure (TransportErrc::timeout: nothing moved in `idle`).
  virtual void write(std::int64_t id, std::span<const std::byte> bytes, bool fin,
                     std::chrono::milliseconds idle, std::error_code& ec) = 0;
  // Waits up to `limit` for bytes or an end on any stream, the peer's new
  // streams included: true if there are.
  virtual bool readable_within(std::chrono::nanoseconds limit, std::error_code& ec) = 0;
  // Each piece that has come, without waiting: a stream's bytes, `fin`
  // with (or after) its last. ec: the connection's end (eof where the peer
  // closed it without an error) or a stream's reset.
  using Take = std::function<void(std::int64_t id, std::span<const std::byte> bytes, bool fin)>;
  virtual void read(const Take& take, std::error_code& ec) = 0;
  // Why the last call failed, in the library's words ("" where it says nothing).
  virtual const std::string& error_detail() const = 0;
};

}  // namespace tlscmp
