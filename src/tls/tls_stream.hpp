#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "run_facts.hpp"

#include "transport/stream.hpp"

struct ssl_st;
struct ssl_session_st;

namespace tlscmp::tls {

// What the handshake settled on.
struct SessionInfo {
  std::string version;                      // "TLSv1.3"
  std::string cipher;                       // "TLS_AES_256_GCM_SHA384"
  std::string group;                        // key exchange group, "X25519"
  std::string certificate_key_type;         // the server certificate's key, "ECDSA P-256"
  std::string client_certificate_key_type;  // the client certificate's key (mutual TLS), or ""
  bool resumed = false;                     // an abbreviated handshake, from a saved session
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

// A saved TLS session, to resume with a later connection (a session ticket or ID).
class Session {
 public:
  Session() = default;
  explicit operator bool() const { return session_ != nullptr; }
  ssl_session_st* get() const { return session_.get(); }
  static Session adopt(ssl_session_st* session);  // takes one reference

 private:
  std::shared_ptr<ssl_session_st> session_;
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

// Whether this TLS library releases idle connections' buffers whatever the
// mode (BoringSSL), so that release_buffers() changes nothing.
bool releases_buffers_always();

// What a connection's TLS callbacks report to the object that owns it (the
// SSL's app data): a TlsStream, or a side of a MemoryPair. The contexts'
// callbacks know this interface alone.
class ConnectionEvents {
 public:
  // The client context's new-session callback: a resumable session arrived.
  virtual void keep_session(Session session) = 0;
  // The client context's certificate callback: the server asked for a client certificate.
  virtual void note_certificate_request() = 0;
  // The client context's verify callback: the first failure is kept.
  virtual void note_verify_failure(VerifyDetail detail) = 0;
  // count_hellos()'s message callback: a handshake message of `type` and `bytes` went by.
  virtual void note_handshake_message(unsigned type, std::size_t bytes) = 0;

 protected:
  ~ConnectionEvents() = default;
};

// TLS over a TCP socket. OpenSSL reads and writes the socket directly (a
// socket BIO): no memory BIO pair, no extra copy, as in the bare ceiling loop.
// A stack that runs its own transport under the library's TLS (QUIC:
// stacks/quic/) derives from it: how it waits, and which SSL object holds
// the session, are its own.
class TlsStream : public Stream, public ConnectionEvents {
 public:
  // Takes ownership of `ssl`, already bound to `fd` and set to its role.
  TlsStream(UniqueFd fd, ssl_st* ssl);
  ~TlsStream() override;

  // Runs the handshake within the deadline set by set_deadline().
  // On TransportErrc::tls_failure, error_detail() names the cause.
  std::error_code handshake() override;
  SessionInfo session_info() const;
  VerifyFailure verify_failure() const;
  void note_verify_failure(VerifyDetail detail) override {
    if (verify_detail_.error == 0) verify_detail_ = std::move(detail);
  }
  // Client side: what the server's chain must lead to, in words ("the CA in
  // ca.pem", "the system's trusted CAs"), for verification messages.
  void set_trust_description(std::string text) { trust_ = std::move(text); }
  // Client side, after the handshake: whether the server asked for a client certificate.
  bool certificate_requested() const;
  // Client side, after the handshake and a first read (which takes in TLS 1.3
  // session tickets): the session to resume next time, or an empty one.
  Session session() const;
  // Whether the server gave this connection a session of its own (a ticket,
  // or TLS 1.2's session on a full handshake), not just the one it resumed.
  bool has_new_session() const { return static_cast<bool>(latest_session_); }
  void keep_session(Session session) override { latest_session_ = std::move(session); }
  void note_certificate_request() override { certificate_requested_ = true; }
  // Caps the plaintext of each record this side sends (512..16384 bytes).
  void set_max_record_size(std::size_t bytes);
  // Before handshake(): count the bytes of the hello messages, for
  // session_info(). A message callback, removed when the handshake is done,
  // so that the data path never pays for it.
  void count_hellos();
  void note_handshake_message(unsigned type, std::size_t bytes) override;

  // Cheap facts for a connection per transaction (session_info() reads the
  // certificates too): whether the session was resumed, and how the server
  // found it ("ticket", or "session id" in TLS 1.2); TLS record bytes so far.
  bool resumed() const;
  const char* resumed_by() const;
  std::uint64_t bytes_read() const;
  std::uint64_t bytes_written() const;
  // SSL_MODE_RELEASE_BUFFERS: the read and write buffers go back to the
  // allocator while idle (a connection held open and quiet costs less).
  // BoringSSL does so always (releases_buffers_always()).
  void release_buffers();
  // Before the handshake: no read-ahead, the library's default read buffer,
  // as a server of many connections runs (the contexts read ahead 256 KiB
  // for bulk throughput; such a buffer on each of 10,000 connections is
  // what no such server holds).
  void use_library_buffers();
  // Sends close_notify without waiting for the peer's, and without TCP FIN.
  void send_close_notify(std::error_code& ec);

  std::size_t read_some(std::span<std::byte> buf, std::error_code& ec) override;
  std::size_t write_some(std::span<const std::byte> buf, std::error_code& ec) override;
  void shutdown_send(std::error_code& ec) override;
  bool has_buffered() const override;
  TlsStream* tls() override { return this; }
  const TlsStream* tls() const override { return this; }
  Mode mode() const override { return Mode::tls; }

 protected:
  ssl_st* ssl() const { return ssl_; }
  // Frees the SSL object before the stream ends, for a derived stream that
  // must let go of what the object held in order (QUIC: its listener's watch).
  void free_ssl();
  // Turns a failed SSL_* call's result into an error code; for WANT_READ and
  // WANT_WRITE, waits and returns {} so that the caller retries.
  std::error_code handle_failure(int ret);
  // A read or write: `call` (SSL_read, SSL_write or the like, returning
  // bytes moved or a failure) until it moves bytes or fails for good; the
  // bytes count as progress against the minimum rate.
  template <typename Call>
  std::size_t retry_io(Call call, std::error_code& ec) {
    for (;;) {
      const std::size_t n = moved(call(), ec);
      if (n > 0 || ec) return n;
    }
  }
  // Waits for POLLIN or POLLOUT: on the socket (QUIC: its library's way).
  virtual std::error_code wait_for(short events);
  // The SSL object of the session (QUIC: a stream's connection's).
  virtual ssl_st* tls_ssl() const { return ssl_; }

 private:
  // A call's result `n`: the bytes moved; or 0, with `ec` set where it
  // failed for good (clear where it waited and the call should go again).
  std::size_t moved(int n, std::error_code& ec);
  // What failed verification (X509_V_ERR_*), in words with names and dates.
  std::string explain_verify_failure(long verify) const;

  ssl_st* ssl_;
  Session latest_session_;  // the newest resumable session the server gave us
  bool certificate_requested_ = false;
  std::uint32_t client_hello_bytes_ = 0;
  std::uint32_t server_hello_bytes_ = 0;
  VerifyDetail verify_detail_;
  std::string trust_;
};

}  // namespace tlscmp::tls
