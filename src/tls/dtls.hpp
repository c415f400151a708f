#pragma once

// DTLS 1.2 for datagram tests: the handshake over a UDP socket, with the
// server's stateless cookie exchange (HelloVerifyRequest, RFC 6347 4.2.1),
// then one datagram in, one record out. After the handshake each session
// works on memory, so that the caller batches the socket I/O itself
// (sendmmsg, recvmmsg) and the library only seals and opens records.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "measure/clock.hpp"
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

  // The times, from the client's clock: its first ClientHello at `start_ns`,
  // the HelloVerifyRequest at `cookie_ns` (0: none came), the end at `end_ns`.
  void set_times(std::int64_t start_ns, std::int64_t cookie_ns, std::int64_t end_ns) {
    cookie_exchanged = cookie_ns != 0;
    cookie_us = cookie_ns != 0 ? measure::ns_to_us(cookie_ns - start_ns) : 0;
    handshake_us = measure::ns_to_us(end_ns - start_ns);
  }
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
  // The most plaintext seal takes in one datagram (a library's own limit).
  virtual std::size_t largest_plaintext() const { return std::size_t{16384}; }
  // One received datagram in, its plaintext in `out`: the plaintext's size;
  // nullopt when it held no authentic record (garbage, a replay, a
  // handshake retransmission, which is answered on the socket). Throws
  // tlscmp::Error when the session fails (an alert from the peer).
  virtual std::optional<std::size_t> open(std::span<const std::byte> datagram, std::span<std::byte> out) = 0;
};

// What a library's DTLS context does (DtlsContext's, below).
class DtlsContextImpl {
 public:
  explicit DtlsContextImpl(const Backend& backend) : backend_(&backend) {}
  virtual ~DtlsContextImpl() = default;
  const Backend& backend() const { return *backend_; }
  virtual std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                               DtlsHandshake& handshake) const = 0;
  virtual std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const = 0;

 private:
  const Backend* backend_;  // the library that made it
};

// A DTLS 1.2 context. Throws tlscmp::Error when the configuration cannot be used.
class DtlsContext {
 public:
  // False when `library` (null: the default one) cannot run DTLS tests;
  // `why` then says why, naming the library.
  static bool available(std::string& why, const Backend* library = nullptr);
  // By `library` (null: the default one).
  static DtlsContext for_server(const Identity& identity, const Backend* library = nullptr);
  // Trust as for TLS: --ca, the embedded server's CA, --insecure or the
  // system's store; made by the options' library, asking the server for
  // ClientOptions::server_library.
  static DtlsContext for_client(const ClientOptions& config);
  explicit DtlsContext(std::shared_ptr<const DtlsContextImpl> impl)
      : made_(std::make_shared<const Made>(Made{std::move(impl), {}})) {}

  // The library whose context this is.
  const Backend& backend() const { return made_->impl->backend(); }
  // Client: ClientOptions::server_library ("": the server's default).
  const std::string& server_library() const { return made_->server_library; }

  // The client's handshake on `fd`, a UDP socket connected to the server;
  // `host` is checked against the server's certificate.
  std::unique_ptr<DtlsSession> connect(int fd, const std::string& host, Deadline deadline,
                                       DtlsHandshake& handshake) const {
    return made_->impl->connect(fd, host, deadline, handshake);
  }
  // The server's side on `fd`, a bound, unconnected UDP socket: answers
  // ClientHellos with a cookie until one comes back with it, connects the
  // socket to that client and completes the handshake.
  std::unique_ptr<DtlsSession> accept(int fd, Deadline deadline) const {
    return made_->impl->accept(fd, deadline);
  }

 private:
  // One member, shared: GCC 12 and 14 warn (maybe-uninitialized, wrongly)
  // where an optional<DtlsContext> of several members is made empty.
  struct Made {
    std::shared_ptr<const DtlsContextImpl> impl;
    std::string server_library;
  };
  std::shared_ptr<const Made> made_;
};

// DTLS 1.2's record and handshake headers (RFC 6347 4.1, 4.2.2), for the
// backends that watch their datagrams themselves.
inline constexpr std::size_t kDtlsRecordHeaderBytes = 13;
inline constexpr std::size_t kDtlsHandshakeHeaderBytes = 12;

inline constexpr std::byte kDtlsClientHello{1};
inline constexpr std::byte kDtlsServerHello{2};
inline constexpr std::byte kDtlsHelloVerifyRequest{3};

// Whether a datagram is a handshake record (22) whose first message, in the
// clear, is of `type`.
inline bool starts_with_handshake_message(std::span<const std::byte> datagram, std::byte type) {
  return datagram.size() > kDtlsRecordHeaderBytes + kDtlsHandshakeHeaderBytes &&
         datagram[0] == std::byte{22} && datagram[kDtlsRecordHeaderBytes] == type;
}

// Whether a datagram is the server's HelloVerifyRequest (its cookie).
inline bool is_hello_verify_request(std::span<const std::byte> datagram) {
  return starts_with_handshake_message(datagram, kDtlsHelloVerifyRequest);
}

}  // namespace tlscmp::tls
