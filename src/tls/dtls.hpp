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

// A DTLS session after its handshake (its backend's).
class DtlsSession {
 public:
  // The most a record adds to its plaintext (header, explicit nonce, tag or MAC and padding).
  static constexpr std::size_t kMaxOverhead = 256;

  DtlsSession() = default;
  virtual ~DtlsSession() = default;
  DtlsSession(const DtlsSession&) = delete;
  DtlsSession& operator=(const DtlsSession&) = delete;

  // One plaintext datagram in, one record out in `out`: its size. Throws tlscmp::Error.
  virtual std::size_t seal(std::span<const std::byte> plain, std::span<std::byte> out) = 0;
  // One received datagram in, its plaintext in `out`: the plaintext's size;
  // nullopt when it held no authentic record (garbage, a replay, a
  // handshake retransmission, which is answered on the socket). Throws
  // tlscmp::Error when the session fails (an alert from the peer).
  virtual std::optional<std::size_t> open(std::span<const std::byte> datagram, std::span<std::byte> out) = 0;
};

// What a library's DTLS context does (DtlsContext's, below).
class DtlsContextImpl {
 public:
  virtual ~DtlsContextImpl() = default;
  virtual std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                               DtlsHandshake& handshake) const = 0;
  virtual std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const = 0;
};

// A DTLS 1.2 context. Throws tlscmp::Error when the configuration cannot be used.
class DtlsContext {
 public:
  // False when the default library cannot run DTLS tests; `why` then says why.
  static bool available(std::string& why);
  // By `library` (null: the default one).
  static DtlsContext for_server(const Identity& identity, const Backend* library = nullptr);
  // Trust as for TLS: --ca, the embedded server's CA, --insecure or the
  // system's store; made by the options' library.
  static DtlsContext for_client(const ClientOptions& config);
  explicit DtlsContext(std::shared_ptr<const DtlsContextImpl> impl) : impl_(std::move(impl)) {}

  // The client's handshake on `fd`, a UDP socket connected to the server;
  // `host` is checked against the server's certificate.
  std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                       DtlsHandshake& handshake) const {
    return impl_->connect(fd, host, deadline, handshake);
  }
  // The server's side on `fd`, a bound, unconnected UDP socket: answers
  // ClientHellos with a cookie until one comes back with it, connects the
  // socket to that client and completes the handshake.
  std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const { return impl_->accept(fd, deadline); }

 private:
  std::shared_ptr<const DtlsContextImpl> impl_;
};

}  // namespace tlscmp::tls
