// wolfSSL's memory pair (tls/memory.hpp): a client and a server connection
// whose I/O callbacks write to and read from each other's buffer in this
// process, no socket and no system call, as OpenSSL's BIO pair joins its two.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <vector>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One connection and the pipes it writes to and reads from.
struct End {
  WOLFSSL* ssl = nullptr;
  MemoryPipe* in = nullptr;
  MemoryPipe* out = nullptr;
  const char* name = "";
  bool server = false;
};

int push(WOLFSSL*, char* data, int size, void* self) {
  static_cast<End*>(self)->out->write(data, static_cast<std::size_t>(size));
  return size;
}

int pull(WOLFSSL*, char* data, int size, void* self) {
  const std::size_t n = static_cast<End*>(self)->in->read(data, static_cast<std::size_t>(size));
  return n == 0 ? WOLFSSL_CBIO_ERR_WANT_READ : static_cast<int>(n);
}

class WolfsslMemoryPair final : public MemoryPairImpl {
 public:
  WolfsslMemoryPair(const Context& client, const Context& server, std::size_t buffer_bytes,
                    const Session& resume)
      : to_server_(buffer_bytes), to_client_(buffer_bytes) {
    server_ = {new_server_ssl(server), &to_server_, &to_client_, "server", true};
    try {
      client_ = {new_client_ssl(client, "localhost", resume), &to_client_, &to_server_, "client", false};
    } catch (...) {
      wolfSSL_free(server_.ssl);
      throw;
    }
    for (End* end : {&client_, &server_}) {
      wolfSSL_SSLSetIORecv(end->ssl, pull);
      wolfSSL_SSLSetIOSend(end->ssl, push);
      wolfSSL_SetIOReadCtx(end->ssl, end);
      wolfSSL_SetIOWriteCtx(end->ssl, end);
    }
    offered_ticket_ = resume && static_cast<const SavedSession*>(resume.get())->ticket;
  }
  ~WolfsslMemoryPair() override {
    free_client();
    free_server();
  }
  WolfsslMemoryPair(const WolfsslMemoryPair&) = delete;
  WolfsslMemoryPair& operator=(const WolfsslMemoryPair&) = delete;

  // wolfSSL gives its large buffers back as it goes.
  void use_library_buffers(bool) override {}
  void set_max_record_size(std::size_t bytes) override {
    throw Error(
        fmt::format("--record-size {}: wolfSSL has no cap of its own on its records' size; leave "
                    "--record-size out for wolfssl",
                    bytes));
  }
  void handshake(SideSeconds& spent) override;
  void transfer(std::span<const std::byte> data, std::span<std::byte> sink, SideSeconds& spent,
                std::uint64_t& reads) override {
    move(client_, server_, data, sink, spent.client, spent.server, reads);
  }
  void exchange(std::span<const std::byte> request, std::span<const std::byte> response,
                std::span<std::byte> sink, SideSeconds& spent) override {
    std::uint64_t reads = 0;
    move(client_, server_, request, sink, spent.client, spent.server, reads);
    move(server_, client_, response, sink, spent.server, spent.client, reads);
  }
  SessionInfo client_info() const override;
  Session session() const override { return saved_session(client_.ssl, offered_ticket_); }
  std::uint64_t client_bytes_written() const override { return to_server_.written(); }
  std::uint64_t server_bytes_written() const override { return to_client_.written(); }
  void free_client() override { free(client_); }
  void free_server() override { free(server_); }

 private:
  static void free(End& end) {
    wolfSSL_free(end.ssl);
    end.ssl = nullptr;
  }
  // One side's handshake step: true once it is done.
  static bool step(End& end, double& spent);
  // `writer` writes `data` whole; `reader` reads it all, in reads of up to `sink`'s size.
  static void move(End& writer, End& reader, std::span<const std::byte> data, std::span<std::byte> sink,
                   double& writer_s, double& reader_s, std::uint64_t& reads);

  MemoryPipe to_server_;
  MemoryPipe to_client_;
  End client_;
  End server_;
  bool offered_ticket_ = false;
};

bool WolfsslMemoryPair::step(End& end, double& spent) {
  const Clock::time_point start = Clock::now();
  const int ret = end.server ? wolfSSL_accept(end.ssl) : wolfSSL_connect(end.ssl);
  spent += seconds_since(start);
  if (ret == WOLFSSL_SUCCESS) return true;
  const int error = wolfSSL_get_error(end.ssl, ret);
  if (error == WOLFSSL_ERROR_WANT_READ || error == WOLFSSL_ERROR_WANT_WRITE) return false;
  throw Error(fmt::format("the in-memory handshake failed on the {}'s side: {}", end.name, reason(error)));
}

void WolfsslMemoryPair::handshake(SideSeconds& spent) {
  on_this_thread();
  bool client_done = false;
  bool server_done = false;
  for (int i = 0; i < 64 && !(client_done && server_done); ++i) {
    if (!client_done) client_done = step(client_, spent.client);
    if (!server_done) server_done = step(server_, spent.server);
  }
  if (!(client_done && server_done)) throw Error("the in-memory handshake did not finish");
  // One byte from the server, which the client reads: with it come the TLS 1.3 session tickets.
  const std::byte byte[1] = {std::byte{'R'}};
  std::byte got[1];
  std::uint64_t reads = 0;
  move(server_, client_, byte, got, spent.server, spent.client, reads);
}

void WolfsslMemoryPair::move(End& writer, End& reader, std::span<const std::byte> data,
                             std::span<std::byte> sink, double& writer_s, double& reader_s,
                             std::uint64_t& reads) {
  Clock::time_point start = Clock::now();
  for (std::size_t sent = 0; sent < data.size();) {
    const int size = static_cast<int>(std::min<std::size_t>(data.size() - sent, INT_MAX / 2));
    const int n = wolfSSL_write(writer.ssl, data.data() + sent, size);
    if (n <= 0)
      throw Error(fmt::format("the in-memory {} could not write: {}", writer.name,
                              reason(wolfSSL_get_error(writer.ssl, n))));
    sent += static_cast<std::size_t>(n);
  }
  writer_s += seconds_since(start);
  std::size_t left = data.size();
  start = Clock::now();
  while (left > 0) {
    const int n = wolfSSL_read(reader.ssl, sink.data(), static_cast<int>(std::min(sink.size(), left)));
    ++reads;
    if (n > 0) {
      left -= static_cast<std::size_t>(n);
      continue;
    }
    const int error = wolfSSL_get_error(reader.ssl, n);
    if (error == WOLFSSL_ERROR_WANT_READ && reader.in->ready() > 0)
      continue;  // a post-handshake message (a TLS 1.3 ticket) went first
    reader_s += seconds_since(start);
    throw Error(fmt::format("the in-memory {} could not read: {}", reader.name, reason(error)));
  }
  reader_s += seconds_since(start);
}

SessionInfo WolfsslMemoryPair::client_info() const {
  SessionInfo info = session_facts(client_.ssl, /*server=*/false);
  info.bytes_written = to_server_.written();
  info.bytes_read = to_client_.written();
  return info;
}

}  // namespace

std::unique_ptr<MemoryPairImpl> WolfsslBackend::memory_pair(const Context& client, const Context& server,
                                                            std::size_t buffer_bytes,
                                                            const Session& resume) const {
  return std::make_unique<WolfsslMemoryPair>(client, server, buffer_bytes, resume);
}

}  // namespace tlscmp::tls::wolfssl
