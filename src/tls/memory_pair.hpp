#pragma once

// The OpenSSL family's memory pair (tls/memory.hpp): two SSL objects joined
// by a BIO pair. Library-bound: only the files built with the library
// include it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tls/context.hpp"
#include "tls/memory.hpp"
#include "tls/ssl_stream.hpp"

struct bio_st;

namespace tlscmp::tls {

class MemoryPair final : public MemoryPairImpl {
 public:
  // `buffer_bytes` of memory each way: a whole write of the largest chunk
  // the pair will move must fit (memory_buffer_for()). With `resume`, the
  // client offers that session. Throws tlscmp::Error.
  MemoryPair(const Context& client, const Context& server, std::size_t buffer_bytes,
             const Session& resume = {});
  ~MemoryPair() override;
  MemoryPair(const MemoryPair&) = delete;
  MemoryPair& operator=(const MemoryPair&) = delete;

  // MemoryPairImpl (tls/memory.hpp says what each is).
  void use_library_buffers(bool release) override;
  void set_max_record_size(std::size_t bytes) override;
  void handshake(SideSeconds& spent) override;
  void transfer(std::span<const std::byte> data, std::span<std::byte> sink, SideSeconds& spent,
                std::uint64_t& reads) override;
  void exchange(std::span<const std::byte> request, std::span<const std::byte> response,
                std::span<std::byte> sink, SideSeconds& spent) override;
  SessionInfo client_info() const override;
  Session session() const override { return events_.session; }
  std::uint64_t client_bytes_written() const override;
  std::uint64_t server_bytes_written() const override;
  void free_client() override;
  void free_server() override;

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
