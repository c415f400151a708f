#pragma once

// Two TLS connections of one backend joined in memory and driven in one
// thread: the library's own cost, with no socket and no system call. Each
// backend makes its pairs (Backend::memory_pair: OpenSSL's over a BIO
// pair, tls/memory_pair.hpp; GnuTLS's over push and pull functions); the
// measures of tls/speed.hpp are the core's, over any backend's pair.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "tls/tls_stream.hpp"

namespace tlscmp::tls {

// The bytes one side of a memory pair wrote that the other has not read
// yet, for a backend whose pair joins its two through callbacks of its own
// (GnuTLS's push and pull, wolfSSL's I/O callbacks).
class MemoryPipe {
 public:
  explicit MemoryPipe(std::size_t capacity) { bytes_.reserve(capacity); }
  void write(const void* data, std::size_t size) {
    const auto* from = static_cast<const unsigned char*>(data);
    bytes_.insert(bytes_.end(), from, from + size);
    written_ += size;
  }
  // Up to `size` bytes into `data`: how many; 0 where none wait.
  std::size_t read(void* data, std::size_t size) {
    const std::size_t n = std::min(ready(), size);
    std::memcpy(data, bytes_.data() + taken_, n);
    taken_ += n;
    if (taken_ == bytes_.size()) {
      bytes_.clear();  // keeps its capacity: no allocation once warm
      taken_ = 0;
    }
    return n;
  }
  std::size_t ready() const { return bytes_.size() - taken_; }
  // All the side ever wrote.
  std::uint64_t written() const { return written_; }

 private:
  std::vector<unsigned char> bytes_;
  std::size_t taken_ = 0;
  std::uint64_t written_ = 0;
};

// Seconds each side spent in its TLS library calls, added up.
struct SideSeconds {
  double client = 0;
  double server = 0;
};

// The buffer a pair needs to take a write of `chunk_bytes` in records of
// `record_bytes` (0: 16 KiB) whole, and the handshake's flights.
std::size_t memory_buffer_for(std::size_t chunk_bytes, std::size_t record_bytes);

// A client (checking the server's certificate for "localhost", as a run
// checks its host) and a server, joined in memory. Its calls throw
// tlscmp::Error naming the side and the library's reason.
class MemoryPairImpl {
 public:
  virtual ~MemoryPairImpl() = default;
  // Before the handshake: each side as a server of many connections runs
  // (TlsStream::use_library_buffers), and with `release`, each side's idle
  // buffers handed back (TlsStream::release_buffers).
  virtual void use_library_buffers(bool release) = 0;
  // Caps each side's records' plaintext (512..16384 bytes).
  virtual void set_max_record_size(std::size_t bytes) = 0;
  // The handshake to its end, then one byte from the server to the client,
  // with which the client takes in TLS 1.3 session tickets. Each side's
  // time in its calls is added to `spent`.
  virtual void handshake(SideSeconds& spent) = 0;
  // The client writes `data` in one call; the server reads it all, in reads
  // of up to `sink`'s size. Each side's time is added to `spent`, and the
  // server's read calls to `reads`.
  virtual void transfer(std::span<const std::byte> data, std::span<std::byte> sink, SideSeconds& spent,
                        std::uint64_t& reads) = 0;
  // One transaction: the request from the client read whole by the server,
  // then the response back, in reads of up to `sink`'s size.
  virtual void exchange(std::span<const std::byte> request, std::span<const std::byte> response,
                        std::span<std::byte> sink, SideSeconds& spent) = 0;
  // What the handshake settled on, as the client sees it.
  virtual SessionInfo client_info() const = 0;
  // The client's session to resume next time (after handshake()).
  virtual Session session() const = 0;
  // TLS bytes each side has written so far: records and their headers.
  virtual std::uint64_t client_bytes_written() const = 0;
  virtual std::uint64_t server_bytes_written() const = 0;
  // Frees one side's connection, for a reading of what it alone held; the
  // other side is then not to be driven again.
  virtual void free_client() = 0;
  virtual void free_server() = 0;
};

}  // namespace tlscmp::tls
