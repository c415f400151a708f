// QUIC v1 on the TLS library this build links, where it has QUIC (OpenSSL
// 3.5 or newer: quic.hpp): TLS 1.3 inside QUIC over UDP, to the
// server's port over UDP, each data connection's bytes on QUIC streams.

#include <fmt/format.h>

#include "error.hpp"

#include "stacks/quic/quic_library.hpp"
#include "tls/backend.hpp"

namespace tlscmp::stacks {

const QuicLibrary* quic_library(std::string* why) {
  const tls::Backend& backend = tls::default_backend();
  const auto* quic = static_cast<const QuicLibrary*>(backend.stack_library("quic"));
  if (quic == nullptr) {
    if (why != nullptr) *why = fmt::format("{} has no QUIC of its own", backend.library_version());
    return nullptr;
  }
  return quic->available(why) ? quic : nullptr;
}

namespace {

std::string no_quic() {
  std::string why;
  return quic_library(&why) != nullptr ? std::string() : why;
}

std::string quic_line() {
  const std::string why = no_quic();
  return fmt::format("quic: {}", why.empty() ? "yes" : fmt::format("no ({})", why));
}

// The library's QUIC, or tlscmp::Error saying why there is none.
const QuicLibrary& quic_or_refuse() {
  std::string why;
  const QuicLibrary* quic = quic_library(&why);
  if (quic == nullptr) throw Error(fmt::format("quic: no ({})", why));
  return *quic;
}

std::unique_ptr<Stream> quic_dial(UniqueFd fd, const tls::Context* tls, const Dial& dial) {
  return quic_or_refuse().client_stream(*tls, std::move(fd), dial);
}

ClientContexts quic_client(const tls::ClientOptions& options) {
  tls::ClientOptions quic = options;
  quic.shape = &quic_or_refuse().shape();
  return {tls::Context::for_client(quic), std::nullopt};
}

// QUIC runs TLS 1.3 in user space: the TLS flags that ask for TLS 1.2 or
// the kernel's TLS cannot hold for its runs.
std::string refuse_quic_policy(const spec::TlsPolicy& policy) {
  if (policy.ktls) return "--ktls hands TLS records to the kernel, and QUIC has none";
  if (policy.version == "1.2") return "--tls-version 1.2: QUIC runs TLS 1.3 alone";
  if (!policy.cipher.empty() && policy.cipher.rfind("TLS_", 0) != 0)
    return "--cipher names TLS 1.2 suites, and QUIC runs TLS 1.3 alone (its suites are named TLS_*)";
  return {};
}

// What a test asks of TCP or of TLS records, which QUIC has none of.
std::string refuse_quic_test(const spec::Test& test) {
  if (test.stream.no_delay) return "-N sets TCP_NODELAY, and QUIC has no TCP";
  if (test.stream.msg_size != 0) return "--msg-size and --framing frame TCP and TLS streams alone";
  if (test.sndbuf_bytes != 0 || test.rcvbuf_bytes != 0)
    return "-w sizes a TCP socket's buffers, and the server's QUIC connections share one UDP socket";
  if (test.record_size != 0) return "--record-size caps TLS records, and QUIC sends packets of its own size";
  if (test.crr.close == spec::Close::fin)
    return "--close fin ends TCP connections with a FIN, and a QUIC connection ends with CONNECTION_CLOSE";
  return {};
}

}  // namespace

extern const Stack kQuicStack;
const Stack kQuicStack{
    .mode = Mode::quic,
    .unavailable = no_quic,
    .described = "QUIC v1, TLS 1.3",
    .version_line = quic_line,
    .client_contexts = quic_client,
    .open_socket = open_udp_socket,
    .client_stream = quic_dial,
    .refuse_policy = refuse_quic_policy,
    .refuse_test = refuse_quic_test,
    .server_part = quic_server,
};

}  // namespace tlscmp::stacks
