// GnuTLS's memory pair (tls/memory.hpp): a client and a server session
// whose push and pull functions write to and read from each other's
// buffer in this process, no socket and no system call, as OpenSSL's BIO
// pair joins its two.

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"

namespace tlscmp::tls::gnutls {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One session and the pipes it writes to and reads from.
struct End {
  gnutls_session_t session = nullptr;
  MemoryPipe* in = nullptr;
  MemoryPipe* out = nullptr;
  const char* name = "";
};

ssize_t push(gnutls_transport_ptr_t self, const void* data, std::size_t size) {
  static_cast<End*>(self)->out->write(data, size);
  return static_cast<ssize_t>(size);
}

ssize_t pull(gnutls_transport_ptr_t self, void* data, std::size_t size) {
  End& end = *static_cast<End*>(self);
  const std::size_t n = end.in->read(data, size);
  if (n == 0) {
    gnutls_transport_set_errno(end.session, EAGAIN);
    return -1;
  }
  return static_cast<ssize_t>(n);
}

int pull_timeout(gnutls_transport_ptr_t self, unsigned int) {
  return static_cast<End*>(self)->in->ready() > 0 ? 1 : 0;
}

class GnutlsMemoryPair final : public MemoryPairImpl {
 public:
  GnutlsMemoryPair(const Context& client, const Context& server, std::size_t buffer_bytes,
                   const Session& resume)
      : to_server_(buffer_bytes), to_client_(buffer_bytes) {
    server_ = {new_server_session(server), &to_server_, &to_client_, "server"};
    try {
      ClientSession made = new_client_session(client, "localhost", resume);
      client_ = {made.session, &to_client_, &to_server_, "client"};
      verify_target_ = std::move(made.verify_target);
    } catch (...) {
      gnutls_deinit(server_.session);
      throw;
    }
    for (End* end : {&client_, &server_}) {
      gnutls_transport_set_ptr(end->session, end);
      gnutls_transport_set_push_function(end->session, push);
      gnutls_transport_set_pull_function(end->session, pull);
      gnutls_transport_set_pull_timeout_function(end->session, pull_timeout);
    }
    offered_ticket_ = resume && static_cast<const SavedSession*>(resume.get())->ticket;
  }
  ~GnutlsMemoryPair() override {
    free_client();
    free_server();
  }
  GnutlsMemoryPair(const GnutlsMemoryPair&) = delete;
  GnutlsMemoryPair& operator=(const GnutlsMemoryPair&) = delete;

  // GnuTLS holds no buffers between records to release.
  void use_library_buffers(bool) override {}
  void set_max_record_size(std::size_t bytes) override {
    for (End* end : {&client_, &server_})
      check(static_cast<int>(gnutls_record_set_max_size(end->session, bytes)), "--record-size under GnuTLS");
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
  Session session() const override;
  std::uint64_t client_bytes_written() const override { return to_server_.written(); }
  std::uint64_t server_bytes_written() const override { return to_client_.written(); }
  void free_client() override { free(client_); }
  void free_server() override { free(server_); }

 private:
  static void free(End& end) {
    gnutls_deinit(end.session);
    end.session = nullptr;
  }
  // One side's handshake step: true once it is done.
  static bool step(End& end, double& spent);
  // `writer` writes `data` whole; `reader` reads it all, in reads of up to `sink`'s size.
  static void move(End& writer, End& reader, std::span<const std::byte> data, std::span<std::byte> sink,
                   double& writer_s, double& reader_s, std::uint64_t& reads);

  std::shared_ptr<void> verify_target_;  // what the client's session points to: it goes last
  MemoryPipe to_server_;
  MemoryPipe to_client_;
  End client_;
  End server_;
  bool offered_ticket_ = false;
};

bool GnutlsMemoryPair::step(End& end, double& spent) {
  const Clock::time_point start = Clock::now();
  const int ret = gnutls_handshake(end.session);
  spent += seconds_since(start);
  if (ret == GNUTLS_E_SUCCESS) return true;
  if (ret == GNUTLS_E_AGAIN || ret == GNUTLS_E_INTERRUPTED || gnutls_error_is_fatal(ret) == 0) return false;
  std::string why = gnutls_strerror(ret);
  gnutls_datum_t status{};
  if (ret == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR &&
      gnutls_certificate_verification_status_print(gnutls_session_get_verify_cert_status(end.session),
                                                   GNUTLS_CRT_X509, &status, 0) >= 0) {
    why += fmt::format(" ({})", reinterpret_cast<const char*>(status.data));
    gnutls_free(status.data);
  }
  throw Error(fmt::format("the in-memory handshake failed on the {}'s side: {}", end.name, why));
}

void GnutlsMemoryPair::handshake(SideSeconds& spent) {
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

void GnutlsMemoryPair::move(End& writer, End& reader, std::span<const std::byte> data,
                            std::span<std::byte> sink, double& writer_s, double& reader_s,
                            std::uint64_t& reads) {
  Clock::time_point start = Clock::now();
  for (std::size_t sent = 0; sent < data.size();) {
    const ssize_t n = gnutls_record_send(writer.session, data.data() + sent, data.size() - sent);
    if (n < 0)
      throw Error(fmt::format("the in-memory {} could not write: {}", writer.name,
                              gnutls_strerror(static_cast<int>(n))));
    sent += static_cast<std::size_t>(n);
  }
  writer_s += seconds_since(start);
  std::size_t left = data.size();
  start = Clock::now();
  while (left > 0) {
    const ssize_t n = gnutls_record_recv(reader.session, sink.data(), std::min(sink.size(), left));
    ++reads;
    if (n > 0) {
      left -= static_cast<std::size_t>(n);
    } else if (n == GNUTLS_E_AGAIN && reader.in->ready() > 0) {
      continue;  // a post-handshake message (a TLS 1.3 ticket) went first
    } else if (n == 0 || gnutls_error_is_fatal(static_cast<int>(n)) != 0 || n == GNUTLS_E_AGAIN) {
      reader_s += seconds_since(start);
      throw Error(fmt::format("the in-memory {} could not read: {}", reader.name,
                              n == 0 ? "the peer closed" : gnutls_strerror(static_cast<int>(n))));
    }
  }
  reader_s += seconds_since(start);
}

SessionInfo GnutlsMemoryPair::client_info() const {
  SessionInfo info = session_facts(client_.session, /*server=*/false);
  info.bytes_written = to_server_.written();
  info.bytes_read = to_client_.written();
  return info;
}

Session GnutlsMemoryPair::session() const {
  return saved_session(client_.session, offered_ticket_);
}

}  // namespace

std::unique_ptr<MemoryPairImpl> GnutlsBackend::memory_pair(const Context& client, const Context& server,
                                                           std::size_t buffer_bytes,
                                                           const Session& resume) const {
  return std::make_unique<GnutlsMemoryPair>(client, server, buffer_bytes, resume);
}

}  // namespace tlscmp::tls::gnutls
