#pragma once

// DTLS 1.2 for datagram tests: the handshake over a UDP socket, with the
// server's stateless cookie exchange (HelloVerifyRequest, RFC 6347 4.2.1),
// then one datagram in, one record out. After the handshake each session
// works on memory, so that the caller batches the socket I/O itself
// (sendmmsg, recvmmsg) and the library only seals and opens records.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "tls/context.hpp"
#include "transport/deadline.hpp"

struct ssl_st;
struct ssl_ctx_st;
struct bio_st;

namespace tlscmp::tls {

// What the client's handshake took, on its clock.
struct DtlsHandshake {
  bool cookie_exchanged = false;  // the server answered the first ClientHello with a cookie
  double cookie_us = 0;           // first ClientHello to the HelloVerifyRequest
  double handshake_us = 0;        // first ClientHello to the handshake's end, cookie exchange included
  std::string version;            // "DTLSv1.2"
  std::string cipher;             // "ECDHE-ECDSA-AES256-GCM-SHA384"
  std::string group;              // key exchange group, "X25519"
};

class DtlsSession {
 public:
  // The most a record adds to its plaintext (header, explicit nonce, tag or MAC and padding).
  static constexpr std::size_t kMaxOverhead = 256;

  ~DtlsSession();
  DtlsSession(const DtlsSession&) = delete;
  DtlsSession& operator=(const DtlsSession&) = delete;

  // One plaintext datagram in, one record out in `out`: its size. Throws tlscmp::Error.
  std::size_t seal(std::span<const std::byte> plain, std::span<std::byte> out);
  // One received datagram in, its plaintext in `out`: the plaintext's size;
  // nullopt when it held no authentic record (garbage, a replay, a
  // handshake retransmission, which is answered on the socket). Throws
  // tlscmp::Error when the session fails (an alert from the peer).
  std::optional<std::size_t> open(std::span<const std::byte> datagram, std::span<std::byte> out);

 private:
  friend class DtlsContext;
  DtlsSession(ssl_st* ssl, int fd) : ssl_(ssl), fd_(fd) {}
  void use_memory();  // after the handshake
  void flush();       // sends what the library wrote (handshake retransmissions)

  ssl_st* ssl_;
  int fd_;  // the UDP socket, owned by the caller
  bio_st* in_ = nullptr;
  bio_st* out_ = nullptr;
};

// A DTLS 1.2 context. Throws tlscmp::Error when the configuration cannot be used.
class DtlsContext {
 public:
  // False when this build cannot run DTLS tests; `why` then says why.
  static bool available(std::string& why);
  static DtlsContext for_server(const Identity& identity);
  // Trust as for TLS: --ca, the embedded server's CA, --insecure or the system's store.
  static DtlsContext for_client(const ClientOptions& config);

  // The client's handshake on `fd`, a UDP socket connected to the server;
  // `host` is checked against the server's certificate.
  std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                       DtlsHandshake& handshake) const;
  // The server's side on `fd`, a bound, unconnected UDP socket: answers
  // ClientHellos with a cookie until one comes back with it, connects the
  // socket to that client and completes the handshake.
  std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const;

 private:
  explicit DtlsContext(std::shared_ptr<ssl_ctx_st> ctx) : ctx_(std::move(ctx)) {}
  std::shared_ptr<ssl_ctx_st> ctx_;
};

}  // namespace tlscmp::tls
