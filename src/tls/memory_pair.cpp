#include "tls/memory_pair.hpp"

#include <openssl/bio.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <string_view>

#include "tls/ossl_ptr.hpp"
#include "tls/ssl_backend.hpp"
#include "tls/ssl_context.hpp"

namespace tlscmp::tls {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int clamp_int(std::size_t n) {
  return n > INT_MAX ? INT_MAX : static_cast<int>(n);
}

// One side's handshake step: true once it is done; false where it waits for
// the other side. Throws naming `side` and the library's reason.
bool step_handshake(SSL* ssl, const char* side, double& spent) {
  const Clock::time_point start = Clock::now();
  const int ret = SSL_do_handshake(ssl);
  spent += seconds_since(start);
  if (ret == 1) return true;
  const int err = SSL_get_error(ssl, ret);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return false;
  throw_tls_error(std::string("the in-memory handshake failed on the ") + side + "'s side");
}

}  // namespace

MemoryPair::MemoryPair(const Context& client, const Context& server, std::size_t buffer_bytes,
                       const Session& resume) {
  server_ = ssl::ssl_context(server).new_server_ssl();
  try {
    client_ = ssl::ssl_context(client).new_client_ssl("localhost", resume, {});
  } catch (...) {
    SSL_free(server_);
    throw;
  }
  SSL_set_app_data(client_, static_cast<ConnectionEvents*>(&events_));
  BIO* client_bio = nullptr;
  BIO* server_bio = nullptr;
  if (BIO_new_bio_pair(&client_bio, buffer_bytes, &server_bio, buffer_bytes) != 1) {
    SSL_free(client_);
    SSL_free(server_);
    throw_tls_error("cannot join two TLS connections in memory");
  }
  // Each connection holds its half, and the pair one more reference, so
  // that a connection freed alone (free_client) leaves its half behind.
  BIO_up_ref(client_bio);
  BIO_up_ref(server_bio);
  SSL_set_bio(client_, client_bio, client_bio);
  SSL_set_bio(server_, server_bio, server_bio);
  client_bio_ = client_bio;
  server_bio_ = server_bio;
}

MemoryPair::~MemoryPair() {
  free_client();
  free_server();
  BIO_free(client_bio_);
  BIO_free(server_bio_);
}

void MemoryPair::free_client() {
  // close_notify first: OpenSSL takes a session whose connection ended
  // without one for a failed connection's, never to be resumed.
  if (client_ != nullptr && SSL_is_init_finished(client_)) SSL_shutdown(client_);
  SSL_free(client_);
  client_ = nullptr;
}

void MemoryPair::free_server() {
  if (server_ != nullptr && SSL_is_init_finished(server_)) SSL_shutdown(server_);
  SSL_free(server_);
  server_ = nullptr;
}

void MemoryPair::use_library_buffers(bool release) {
  for (SSL* ssl : {client_, server_}) {
    compat::use_library_buffers(ssl);
    if (release) SSL_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
  }
}

void MemoryPair::set_max_record_size(std::size_t bytes) {
  compat::set_max_send_fragment(client_, bytes);
  compat::set_max_send_fragment(server_, bytes);
}

void MemoryPair::handshake(SideSeconds& spent) {
  bool client_done = false;
  bool server_done = false;
  // Each round trip moves at least one flight; a handshake that needs more
  // than this many steps is stuck.
  for (int step = 0; step < 64 && !(client_done && server_done); ++step) {
    if (!client_done) client_done = step_handshake(client_, "client", spent.client);
    if (!server_done) server_done = step_handshake(server_, "server", spent.server);
  }
  if (!(client_done && server_done)) throw Error("the in-memory handshake did not finish");
  // One byte from the server, which the client reads: BoringSSL sends its
  // TLS 1.3 session tickets with a server's first data (OpenSSL with its
  // last flight), and the client takes them in as it reads.
  const std::byte byte[1] = {std::byte{'R'}};
  Clock::time_point start = Clock::now();
  const int wrote = SSL_write(server_, byte, 1);
  spent.server += seconds_since(start);
  if (wrote != 1) throw_tls_error("the in-memory server could not write after the handshake");
  std::byte got[1];
  start = Clock::now();
  const int read = SSL_read(client_, got, 1);
  spent.client += seconds_since(start);
  if (read != 1) throw_tls_error("the in-memory client could not read after the handshake");
}

namespace {

// `writer` writes `data` in one SSL_write; `reader` reads it all, in reads
// of up to `sink`'s size. Each one's time is added to its seconds, the
// reader's read calls to `reads`. `who` names the writer in errors.
void move_through(SSL* writer, SSL* reader, std::span<const std::byte> data, std::span<std::byte> sink,
                  double& writer_s, double& reader_s, std::uint64_t& reads, const char* who) {
  const char* whom = who == std::string_view("client") ? "server" : "client";
  Clock::time_point start = Clock::now();
  const int wrote = SSL_write(writer, data.data(), clamp_int(data.size()));
  writer_s += seconds_since(start);
  if (wrote != clamp_int(data.size()))
    throw_tls_error(std::string("the in-memory ") + who + " could not write its chunk whole");
  std::size_t left = data.size();
  start = Clock::now();
  while (left > 0) {
    const int got = SSL_read(reader, sink.data(), clamp_int(std::min(sink.size(), left)));
    ++reads;
    if (got <= 0) {
      reader_s += seconds_since(start);
      throw_tls_error(std::string("the in-memory ") + whom + " could not read the chunk");
    }
    left -= static_cast<std::size_t>(got);
  }
  reader_s += seconds_since(start);
}

}  // namespace

void MemoryPair::transfer(std::span<const std::byte> data, std::span<std::byte> sink, SideSeconds& spent,
                          std::uint64_t& reads) {
  move_through(client_, server_, data, sink, spent.client, spent.server, reads, "client");
}

void MemoryPair::exchange(std::span<const std::byte> request, std::span<const std::byte> response,
                          std::span<std::byte> sink, SideSeconds& spent) {
  std::uint64_t reads = 0;
  move_through(client_, server_, request, sink, spent.client, spent.server, reads, "client");
  move_through(server_, client_, response, sink, spent.server, spent.client, reads, "server");
}

SessionInfo MemoryPair::client_info() const {
  SessionInfo info;
  info.version = SSL_get_version(client_);
  if (const SSL_CIPHER* cipher = SSL_get_current_cipher(client_)) info.cipher = SSL_CIPHER_get_name(cipher);
  info.group = compat::negotiated_group(client_);
  info.certificate_key_type = compat::certificate_key_type(compat::peer_certificate(client_).get());
  info.resumed = SSL_session_reused(client_) != 0;
  info.bytes_read = BIO_number_read(SSL_get_rbio(client_));
  info.bytes_written = BIO_number_written(SSL_get_wbio(client_));
  return info;
}

std::uint64_t MemoryPair::client_bytes_written() const {
  return BIO_number_written(client_bio_);
}

std::uint64_t MemoryPair::server_bytes_written() const {
  return BIO_number_written(server_bio_);
}

std::unique_ptr<MemoryPairImpl> ssl::SslBackend::memory_pair(const Context& client, const Context& server,
                                                             std::size_t buffer_bytes,
                                                             const Session& resume) const {
  return std::make_unique<MemoryPair>(client, server, buffer_bytes, resume);
}

}  // namespace tlscmp::tls
