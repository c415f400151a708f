#pragma once

// The table of stacks: what carries a test's bytes, one entry a mode (as
// iperf3's struct protocol, or the table of kinds one layer up). What a mode
// is and can do is its row of facts (mode.hpp: datagram or stream, encrypted,
// a TLS handshake, streams on one connection, its baseline); its entry here
// is its code: whether this build has it, its --version line, the contexts a
// client variant of it runs with, how a client opens its data connections,
// the TLS settings it cannot hold, and what a server serves it with (its
// part of the server: the TCP connections it takes, or a listener of its
// own). Only a stack's folder (stacks/NAME/) knows its library; kinds and
// the app ask the table and the facts, never which mode it is.
//
// A new stack: a row in mode.hpp's facts, its folder with its entry
// (`extern const Stack kNAMEStack`), a line in stacks/table.cpp, and its
// docs (docs/development.md, "Adding a stack").

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mode.hpp"
#include "spec/spec.hpp"
#include "spec/tls_policy.hpp"
#include "tls/context.hpp"
#include "tls/dtls.hpp"
#include "tls/identity.hpp"
#include "tls/server_contexts.hpp"
#include "tls/tls_stream.hpp"
#include "transport/deadline.hpp"
#include "transport/stream.hpp"
#include "transport/unique_fd.hpp"

struct sockaddr_storage;

namespace tlscmp::stacks {

// The contexts a client variant runs with: none for a plain stack.
struct ClientContexts {
  std::optional<tls::Context> tls;
  std::optional<tls::DtlsContext> dtls;
};

// Where a client's data connection goes, and how its socket is set up.
struct DataTarget {
  std::string host;
  std::uint16_t port = 0;
  std::string bind_address;  // empty: the kernel's choice
  Deadline connect_by;
  std::uint32_t sndbuf_bytes = 0;  // 0: the kernel's
  std::uint32_t rcvbuf_bytes = 0;
  int control_fd = -1;  // the test's control connection: a UDP stack connects beside it
};

// How a client connection dials the server: the host its certificate is
// checked against, the session it offers to resume, the name it sends
// (SNI) where not the host's.
struct Dial {
  std::string host;
  tls::Session resume;
  std::string server_name;
  // Where the server tells the connection by its first byte (a data or crr
  // connection, not a flow, whose header comes first): the library the
  // server is to shake hands with, named in the clear before the handshake
  // (the context's ClientOptions::server_library); "": the server's default.
  std::string library;
};

// What a server's stacks are made from: its settings, and where it listens.
struct ServerSetup {
  tls::Identity identity;
  spec::TlsPolicy policy;
  std::string client_ca_file;
  bool require_client_cert = false;
  tls::Resumption resumption = tls::Resumption::tickets;
  // The server's contexts for TLS over TCP, one per library (the key types
  // and suites a test asks for are added to them as they come); they
  // outlive every part.
  const tls::ServerContexts* tls = nullptr;
  // The server's TCP port and address (a stack with a listener of its own
  // binds the same over UDP); `dual_stack`: an IPv6 socket that serves IPv4 too.
  std::string address;
  std::uint16_t port = 0;
  bool dual_stack = false;
  // How long a connection that names its TLS library may take to name it.
  std::chrono::milliseconds preamble_timeout{2'000};
};

// A stack's own listener, beside the server's TCP port (QUIC's, on the same
// port over UDP): a thread of the server's takes its connections, each
// counted under the caps as a TCP connection is, and serves the streams that
// each connection's client opens.
class Listener {
 public:
  virtual ~Listener() = default;
  // Waits up to `wait` for a new connection: it (its handshake perhaps not
  // yet done) and its peer's address in `peer` where the library names it
  // (AF_UNSPEC where not); null if none came.
  virtual std::unique_ptr<Stream> accept(std::chrono::milliseconds wait, sockaddr_storage& peer) = 0;
  // The caps' source of every peer the library does not name ("quic").
  virtual const char* unnamed_source() const = 0;
  // Whether the library names its connections' peers.
  virtual bool names_peers() const = 0;
};

// Streams waited on together by one thread (a --flows loop), where their
// library waits its own way (QUIC's streams of the server's listener).
class StreamPollSet {
 public:
  virtual ~StreamPollSet() = default;
  // From now on waits for `events` (POLLIN, POLLOUT) on `stream` under
  // `tag`; 0: not at all.
  virtual void set(std::uint32_t tag, Stream& stream, short events) = 0;
  // Waits up to `limit` for any of them: the tags of those ready, valid
  // until the next call.
  virtual const std::vector<std::uint32_t>& wait(std::chrono::microseconds limit) = 0;
};

// A stack's part of a server, made once at its start: what it serves with,
// the TCP connections it takes by their first byte, or a listener of its own.
class ServerPart {
 public:
  virtual ~ServerPart() = default;
  // Why the server cannot serve this stack's tests on the TLS library named
  // `library` ("": its default), or "" where it can.
  virtual std::string refusal(std::string_view library) const {
    (void)library;
    return {};
  }
  // A TCP connection on the server's port whose first byte is `first`: the
  // stream it is as this stack's (its handshake not yet run), or null if it
  // is not this stack's.
  virtual std::unique_ptr<Stream> take(UniqueFd& fd, std::byte first) {
    (void)fd;
    (void)first;
    return nullptr;
  }
  // A TCP connection known to be this stack's (a flow, whose header came in
  // the clear): its stream on the TLS library named `library` ("": the
  // server's default), its handshake not yet run; null (`fd` left as it
  // was) for plain TCP. Throws tlscmp::Error for a library it lacks.
  virtual std::unique_ptr<Stream> wrap(UniqueFd& fd, std::string_view library) const {
    (void)fd;
    (void)library;
    return nullptr;
  }
  // Its own listeners (each served by a thread of the server's), or none.
  virtual std::vector<Listener*> listeners() { return {}; }
  // The context its datagram sessions shake hands with (DTLS) on the
  // library named `library` ("": the default), made on first use, or null.
  // Throws tlscmp::Error for a library it lacks (refusal says why first).
  virtual const tls::DtlsContext* datagram_context(std::string_view library) const {
    (void)library;
    return nullptr;
  }
  // The datagrams of its own port so far (QUIC's listeners: every
  // connection's, every test's), with the connections on it now; none
  // where it has no port of its own.
  virtual std::optional<UdpPath> port_path() const { return std::nullopt; }
  // A poll set for its listener's streams, where a loop cannot wait on
  // their sockets (QUIC's share the listener's); null elsewhere.
  virtual std::unique_ptr<StreamPollSet> poll_set() const { return nullptr; }
};

struct Stack {
  Mode mode = Mode::tcp;
  // Why this build cannot run it ("" where it can): "needs OpenSSL 3.5 or
  // newer; this build has OpenSSL 3.0.19 ...". Null: always.
  std::string (*unavailable)() = nullptr;
  // What it is, beside its name in --version's list of transports ("TLS
  // 1.2, 1.3"); null: its name alone.
  const char* described = nullptr;
  // Its own line of --version ("quic: yes", "DTLS: no (...)"); null: none.
  std::string (*version_line)() = nullptr;
  // Client: the contexts a variant of it runs with, from the client's TLS
  // options. Null: none (a plain stack). Throws tlscmp::Error.
  ClientContexts (*client_contexts)(const tls::ClientOptions& options) = nullptr;
  // Client: a data connection's socket, connected. Throws tlscmp::Error.
  UniqueFd (*open_socket)(const DataTarget& target) = nullptr;
  // Client: the stream a connected socket is as this stack's, its
  // handshake (Stream::handshake) not yet run; `tls` is the variant's
  // context. Null: plain TCP.
  std::unique_ptr<Stream> (*client_stream)(UniqueFd fd, const tls::Context* tls, const Dial& dial) = nullptr;
  // Client: the TLS settings it cannot hold, in one line that says why, or
  // "" (null: it holds them all).
  std::string (*refuse_policy)(const spec::TlsPolicy& policy) = nullptr;
  // Client: why a stack that runs on each library (ModeFacts::per_library)
  // cannot run on `library`, or "". Null: every library runs it.
  std::string (*refuse_library)(const tls::Backend& library) = nullptr;
  // Both sides: the fields of a test it cannot hold (-N, --record-size ...),
  // why in one line, or "" (null: it holds them all).
  std::string (*refuse_test)(const spec::Test& test) = nullptr;
  // Server: its part, made once at the server's start (it logs, with
  // `log`, what it leaves out). Null: none.
  std::unique_ptr<ServerPart> (*server_part)(const ServerSetup& setup,
                                             const std::function<void(const std::string&)>& log) = nullptr;
};

// Every stack, in the order of the table (stacks/table.cpp).
std::span<const Stack* const> all_stacks();
const Stack& stack_of(Mode mode);

// Why this build cannot run `mode`, or "".
std::string unavailable(Mode mode);

// A connected socket as `mode`'s stream (plain TCP where its stack has no
// stream of its own), its handshake not yet run.
std::unique_ptr<Stream> client_stream(Mode mode, UniqueFd fd, const tls::Context* tls, const Dial& dial);

// Every stack's part of a server, by mode (null where a stack has none).
class ServerParts {
 public:
  ServerParts(const ServerSetup& setup, const std::function<void(const std::string&)>& log);
  ServerPart* of(Mode mode) const;
  // Why the server cannot serve `mode`'s tests on the library named
  // `library` ("": its default), or "".
  std::string refusal(Mode mode, std::string_view library = {}) const;
  // A TCP connection by its first byte: the stream of the stack that
  // claims it, or plain TCP.
  std::unique_ptr<Stream> take(UniqueFd fd, std::byte first) const;
  // The stacks with a listener of their own.
  std::vector<std::pair<Mode, Listener*>> listeners() const;

 private:
  std::vector<std::pair<Mode, std::unique_ptr<ServerPart>>> parts_;
};

// One word of --mode's list: a stack's name, or a pair by its name ("both":
// tcp,tls; "both-udp": udp,dtls); empty if it names none.
std::vector<Mode> modes_of_word(const std::string& word);
// The words --mode takes, for a message: "tcp, tls, udp, dtls or quic".
std::string mode_words();

// The TCP connections and the socket set-up every stream stack over TCP
// shares: connected to `target` by its deadline, Nagle off for the small
// set-up messages, the buffers asked for.
UniqueFd open_tcp_socket(const DataTarget& target);
// A UDP socket connected to the server's address as the control connection
// reached it, at `target`'s port.
UniqueFd open_udp_socket(const DataTarget& target);

}  // namespace tlscmp::stacks
