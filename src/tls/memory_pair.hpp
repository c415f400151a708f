#pragma once

// Two TLS connections of this build joined in memory (a BIO pair) and
// driven in one thread: the library's own cost, with no socket and no
// system call. `tlscmp speed` measures with it, and a bulk run splits TLS's
// extra CPU with it (tls/speed.hpp).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tls/context.hpp"
#include "tls/ssl_stream.hpp"

struct bio_st;

namespace tlscmp::tls {

// Seconds each side spent in its TLS library calls, added up.
struct SideSeconds {
  double client = 0;
  double server = 0;
};

class MemoryPair {
 public:
  // A client of `client` (checking the server's certificate for
  // "localhost", as a run checks its host) and a server of `server`, with
  // `buffer_bytes` of memory each way: a whole write of the largest chunk
  // the pair will move must fit (buffer_for()). With `resume`, the client
  // offers that session. Throws tlscmp::Error.
  MemoryPair(const Context& client, const Context& server, std::size_t buffer_bytes,
             const Session& resume = {});
  ~MemoryPair();
  MemoryPair(const MemoryPair&) = delete;
  MemoryPair& operator=(const MemoryPair&) = delete;

  // The buffer a pair needs to take a write of `chunk_bytes` in records of
  // `record_bytes` (0: 16 KiB) whole, and the handshake's flights.
  static std::size_t buffer_for(std::size_t chunk_bytes, std::size_t record_bytes);

  // Before the handshake: each side as a server of many connections runs
  // (TlsStream::use_library_buffers), and with `release`, each side's idle
  // buffers handed back (TlsStream::release_buffers).
  void use_library_buffers(bool release);
  // Caps each side's records' plaintext (512..16384 bytes).
  void set_max_record_size(std::size_t bytes);

  // The handshake to its end, then one byte from the server to the client,
  // with which the client takes in TLS 1.3 session tickets. Each side's time in its calls is added to
  // `spent`. Throws tlscmp::Error naming the side and the library's reason.
  void handshake(SideSeconds& spent);
  // The client writes `data` in one SSL_write; the server reads it all, in
  // reads of up to `sink`'s size. Each side's time is added to `spent`, and
  // the server's read calls to `reads`.
  void transfer(std::span<const std::byte> data, std::span<std::byte> sink, SideSeconds& spent,
                std::uint64_t& reads);

  // One transaction: the client writes `request` in one SSL_write and the
  // server reads it whole, then the server writes `response` and the client
  // reads it whole, in reads of up to `sink`'s size. Each side's time is
  // added to `spent`. The pair's buffer must take the larger whole.
  void exchange(std::span<const std::byte> request, std::span<const std::byte> response,
                std::span<std::byte> sink, SideSeconds& spent);

  // What the handshake settled on, as the client sees it.
  SessionInfo client_info() const;
  // The client's session to resume next time (after handshake()).
  Session session() const { return events_.session; }
  // TLS bytes each side has written so far: records and their headers.
  std::uint64_t client_bytes_written() const;
  std::uint64_t server_bytes_written() const;

  // Frees one side's connection (its BIO half stays until the pair goes),
  // for a reading of what the connection alone held; the other side is
  // then not to be driven again.
  void free_client();
  void free_server();

 private:
  // The client's callbacks (the context's): its newest session.
  struct Events final : ConnectionEvents {
    Session session;
    void keep_session(Session s) override { session = std::move(s); }
    void note_certificate_request() override {}
    void note_verify_failure(VerifyDetail) override {}
    void note_handshake_message(unsigned, std::size_t) override {}
  };
  Events events_;
  ssl_st* client_ = nullptr;
  ssl_st* server_ = nullptr;
  bio_st* client_bio_ = nullptr;  // the pair's halves, held past their connections (free_client)
  bio_st* server_bio_ = nullptr;
};

}  // namespace tlscmp::tls
