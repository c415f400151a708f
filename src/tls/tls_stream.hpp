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

namespace detail {
class ListenerWatch;
}
class QuicListener;
class QuicPollSet;

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
class TlsStream final : public Stream,
                        public ConnectionEvents,
                        public std::enable_shared_from_this<TlsStream> {
 public:
  // Takes ownership of `ssl`, already bound to `fd` and set to its role.
  TlsStream(UniqueFd fd, ssl_st* ssl);
  // A QUIC stream of `connection` (tls/quic.hpp), which it keeps open while
  // it lives: its session, certificates and counts are the connection's;
  // `reports_path`: udp_path() gives the connection's datagrams (one stream
  // of each connection does, so that streams add up to connections).
  TlsStream(std::shared_ptr<TlsStream> connection, ssl_st* stream, bool reports_path);
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
  Mode mode() const override { return quic_ ? Mode::quic : Mode::tls; }
  bool readable_within(std::chrono::nanoseconds wait, std::error_code& ec) override;
  // A QUIC connection's streams, each a TlsStream of its own that keeps the
  // connection open. The connection must be owned by a std::shared_ptr.
  // Client, after the handshake: a new bidirectional stream; Error if the
  // library will not open one. Server: the next stream the client opened,
  // waiting up to `wait`; null if none came, with `ended` once the
  // connection is over (closed, or timed out idle).
  std::unique_ptr<TlsStream> open_stream(bool reports_path);
  std::unique_ptr<TlsStream> accept_stream(std::chrono::milliseconds wait, bool& ended);
  // On a QUIC stream: another stream of its connection. Client: a new one
  // (open_stream). Server: the next the client opened, as accept_stream,
  // waiting up to `wait`; null also, at once, when this stream has bytes to
  // read (or its end).
  std::unique_ptr<TlsStream> open_sibling();
  std::unique_ptr<TlsStream> accept_sibling(std::chrono::milliseconds wait, bool& ended);
  // As write_some, on a QUIC stream; once all of `buf` is written, the FIN
  // goes with its last bytes, in the same packet.
  std::size_t write_last(std::span<const std::byte> buf, std::error_code& ec);
  // A QUIC client connection that an event loop drives (ClientOptions::
  // quic_event_loop): whether the library has datagrams for the socket to
  // take (the loop waits for POLLOUT too), and how soon its next timer is
  // due (nullopt: none), when the loop runs its events (timers,
  // retransmissions, acknowledgements).
  bool quic_wants_write() const;
  std::optional<std::chrono::microseconds> quic_timeout() const;
  void handle_quic_events();
  // Bytes written to a QUIC stream that the peer has not acknowledged yet.
  std::uint64_t unacknowledged_bytes() const;
  // A QUIC client connection's datagrams so far (tls/quic.hpp), from its
  // reporting stream; else nullopt.
  std::optional<UdpPath> udp_path() const;
  // A QUIC server's stream: its port's datagrams so far, every connection's
  // on the port (the listener's socket), with the connections it holds now
  // as `port_connections`; else nullopt.
  std::optional<UdpPath> port_path() const;

 private:
  std::size_t write_maybe_last(std::span<const std::byte> buf, bool last, std::error_code& ec);
  // Turns a failed SSL_* call's result into an error code; for WANT_READ and
  // WANT_WRITE, waits and returns {} so that the caller retries.
  std::error_code handle_failure(int ret);
  // Waits for POLLIN or POLLOUT: on the socket, or QUIC's way (SSL_poll).
  std::error_code wait_for(short events);
  // What failed verification (X509_V_ERR_*), in words with names and dates.
  std::string explain_verify_failure(long verify) const;

  // The SSL object of the session: the connection's, for a QUIC stream.
  ssl_st* tls_ssl() const;

  friend class QuicListener;  // its connections watch it (watch_)
  friend class QuicPollSet;   // its waits watch the listener as the stream's would

  ssl_st* ssl_;
  bool quic_;                                     // a QUIC connection or stream (tls/quic.hpp)
  std::shared_ptr<TlsStream> connection_;         // a QUIC stream's connection
  std::shared_ptr<detail::ListenerWatch> watch_;  // a server's QUIC connection's (and its streams')
  bool reports_path_ = false;
  Session latest_session_;  // the newest resumable session the server gave us
  bool certificate_requested_ = false;
  std::uint32_t client_hello_bytes_ = 0;
  std::uint32_t server_hello_bytes_ = 0;
  VerifyDetail verify_detail_;
  std::string trust_;
};

}  // namespace tlscmp::tls
