// libFuzzer target for everything a peer's bytes meet first: the connection
// preamble, the frame length, the control-message decoder and the datagram
// header, a test request's check against its kind, and a kind's result read
// back by its kind. Whatever it is
// fed, decoding and the check either succeed or throw ProtocolError; a message that
// decodes must encode and decode again to the same frame.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "kinds/kind.hpp"
#include "protocol/messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tlscmp::protocol;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  if (bytes.size() >= kPreambleBytes) {
    try {
      (void)decode_preamble(bytes.first<kPreambleBytes>());
    } catch (const ProtocolError&) {
    }
  }
  if (bytes.size() >= kFrameHeaderBytes) {
    try {
      (void)decode_frame_length(bytes.first<kFrameHeaderBytes>());
    } catch (const ProtocolError&) {
    }
  }
  // A datagram's header, as the receiver meets every datagram: decodes or is set apart.
  if (const auto header = decode_datagram_header(bytes)) {
    if (bytes.size() < kDatagramHeaderBytes) std::abort();
  }
  try {
    const Message message = decode(bytes);
    const std::vector<std::byte> frame = encode(message);
    const std::span<const std::byte> body = std::span(frame).subspan(kFrameHeaderBytes);
    const std::vector<std::byte> again = encode(decode(body));
    if (again != frame) std::abort();  // the round trip must be stable
    // A test request is then held to its kind, as the server holds every one.
    if (const auto* request = std::get_if<TestRequest>(&message)) tlscmp::kinds::check_request(*request);
    // A kind's result is read back by its kind's walk, as the other side reads it.
    if (const auto* result = std::get_if<KindResult>(&message)) tlscmp::kinds::check_result(*result);
  } catch (const ProtocolError&) {
  }
  return 0;
}
