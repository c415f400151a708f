#pragma once

// The TLS stream of the OpenSSL family (OpenSSL, BoringSSL): tls::TlsStream
// over an SSL object. Library-bound: only tls/ and the stacks built with
// the library (tlscmp_tls_sources) include it.

#include <cstdint>
#include <string>

#include "tls/tls_stream.hpp"

struct ssl_st;
struct ssl_session_st;

namespace tlscmp::tls {

// A Session holding `session` (one reference taken over); empty for null.
Session adopt_session(ssl_session_st* session);

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
class SslStream : public TlsStream, public ConnectionEvents {
 public:
  // Takes ownership of `ssl`, already bound to `fd` and set to its role.
  SslStream(UniqueFd fd, ssl_st* ssl);
  ~SslStream() override;

  // Runs the handshake within the deadline set by set_deadline().
  // On TransportErrc::tls_failure, error_detail() names the cause.
  std::error_code handshake() override;

  // TlsStream (tls/tls_stream.hpp says what each is).
  SessionInfo session_info() const override;
  VerifyFailure verify_failure() const override;
  void set_trust_description(std::string text) override { trust_ = std::move(text); }
  bool certificate_requested() const override;
  Session session() const override;
  bool has_new_session() const override { return static_cast<bool>(latest_session_); }
  void set_max_record_size(std::size_t bytes) override;
  void count_hellos() override;
  bool resumed() const override;
  const char* resumed_by() const override;
  std::uint64_t bytes_read() const override;
  std::uint64_t bytes_written() const override;
  // SSL_MODE_RELEASE_BUFFERS (BoringSSL releases them always).
  void release_buffers() override;
  void use_library_buffers() override;
  void send_close_notify(std::error_code& ec) override;

  // ConnectionEvents: what the contexts' callbacks report.
  void note_verify_failure(VerifyDetail detail) override {
    if (verify_detail_.error == 0) verify_detail_ = std::move(detail);
  }
  void keep_session(Session session) override { latest_session_ = std::move(session); }
  void note_certificate_request() override { certificate_requested_ = true; }
  void note_handshake_message(unsigned type, std::size_t bytes) override;

  std::size_t read_some(std::span<std::byte> buf, std::error_code& ec) override;
  std::size_t write_some(std::span<const std::byte> buf, std::error_code& ec) override;
  void shutdown_send(std::error_code& ec) override;
  bool has_buffered() const override;

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
