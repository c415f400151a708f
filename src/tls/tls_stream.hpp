#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "run_facts.hpp"

#include "transport/stream.hpp"

namespace tlscmp::tls {

// What the handshake settled on.
struct SessionInfo {
  std::string version;                      // "TLSv1.3"
  std::string cipher;                       // "TLS_AES_256_GCM_SHA384"
  std::string group;                        // key exchange group, "X25519"
  std::string certificate_key_type;         // the server certificate's key, "ECDSA P-256"
  std::string client_certificate_key_type;  // the client certificate's key (mutual TLS), or ""
  bool resumed = false;                     // an abbreviated handshake, from a saved session
  std::string alpn;                         // the application protocol agreed (ALPN), or ""
  bool ktls_send = false;                   // the kernel encrypts what this side sends
  bool ktls_receive = false;                // the kernel decrypts what this side receives
  std::uint64_t bytes_read = 0;             // TLS bytes read from the socket so far (records, not payload)
  std::uint64_t bytes_written = 0;          // TLS bytes written to the socket so far
  // With count_hellos(): bytes of the ClientHello and ServerHello handshake
  // messages (4-byte message header included, record header not) this side
  // sent or received, a HelloRetryRequest's second round included; else 0.
  std::uint32_t client_hello_bytes = 0;
  std::uint32_t server_hello_bytes = 0;
};

// A saved TLS session, to resume with a later connection (a session ticket
// or ID): a handle on the library's own object, which only the backend that
// made it reads (tls/backend.hpp).
class Session {
 public:
  Session() = default;
  explicit Session(std::shared_ptr<void> handle) : handle_(std::move(handle)) {}
  explicit operator bool() const { return handle_ != nullptr; }
  void* get() const { return handle_.get(); }

 private:
  std::shared_ptr<void> handle_;
};

// Why the peer's certificate was not accepted, if it was not.
enum class VerifyFailure { none, untrusted, name_mismatch, expired, not_yet_valid, other };

// The first certificate of the peer's chain that failed verification, as the
// verify callback saw it, for messages that say what is wrong with it.
struct VerifyDetail {
  long error = 0;          // X509_V_ERR_*; 0: nothing failed
  int depth = 0;           // 0: the peer's own certificate, 1: its issuer, ...
  std::string subject;     // "O=tlscmp, CN=tlscmp server"
  std::string issuer;      // "O=tlscmp, CN=tlscmp CA"
  std::string not_before;  // "2026-11-30 09:51:00Z"
  std::string not_after;
};

// What a client says when the server's certificate failed for `failure`
// (its chain must lead to `trust`, in words); "" for none and for other,
// which each library words itself.
std::string verify_failure_text(VerifyFailure failure, const std::string& trust);

// Whether this TLS library releases idle connections' buffers whatever the
// mode (BoringSSL), so that release_buffers() changes nothing.
bool releases_buffers_always();

// A TLS connection over its stack's transport, as the kinds see it: the
// facts and settings of its session. Each TLS library implements it
// (tls/ssl_stream.hpp for OpenSSL and BoringSSL; stacks/quic/ over QUIC's
// own transport), so that nothing above tls/ and the stacks knows which.
class TlsStream : public Stream {
 public:
  virtual SessionInfo session_info() const = 0;
  virtual VerifyFailure verify_failure() const = 0;
  // Client side: what the server's chain must lead to, in words ("the CA in
  // ca.pem", "the system's trusted CAs"), for verification messages.
  virtual void set_trust_description(std::string text) = 0;
  // Client side, after the handshake: whether the server asked for a client certificate.
  virtual bool certificate_requested() const = 0;
  // Client side, after the handshake and a first read (which takes in TLS 1.3
  // session tickets): the session to resume next time, or an empty one.
  virtual Session session() const = 0;
  // Whether the server gave this connection a session of its own (a ticket,
  // or TLS 1.2's session on a full handshake), not just the one it resumed.
  virtual bool has_new_session() const = 0;
  // Caps the plaintext of each record this side sends (512..16384 bytes).
  virtual void set_max_record_size(std::size_t bytes) = 0;
  // Before handshake(): count the bytes of the hello messages, for
  // session_info(). A message callback, removed when the handshake is done,
  // so that the data path never pays for it.
  virtual void count_hellos() = 0;
  // Cheap facts for a connection per transaction (session_info() reads the
  // certificates too): whether the session was resumed, and how the server
  // found it ("ticket", or "session id" in TLS 1.2); TLS record bytes so far.
  virtual bool resumed() const = 0;
  virtual const char* resumed_by() const = 0;
  virtual std::uint64_t bytes_read() const = 0;
  virtual std::uint64_t bytes_written() const = 0;
  // The read and write buffers go back to the allocator while idle (a
  // connection held open and quiet costs less); some libraries do so
  // always (releases_buffers_always()).
  virtual void release_buffers() = 0;
  // Before the handshake: no read-ahead, the library's default read buffer,
  // as a server of many connections runs (the contexts read ahead 256 KiB
  // for bulk throughput; such a buffer on each of 10,000 connections is
  // what no such server holds).
  virtual void use_library_buffers() = 0;
  // Sends close_notify without waiting for the peer's, and without TCP FIN.
  virtual void send_close_notify(std::error_code& ec) = 0;

  TlsStream* tls() override { return this; }
  const TlsStream* tls() const override { return this; }
  Mode mode() const override { return Mode::tls; }

 protected:
  explicit TlsStream(UniqueFd fd) : Stream(std::move(fd)) {}
};

}  // namespace tlscmp::tls
