// What a wolfSSL connection's handshake settled on, and the session a
// client keeps to resume.

#include <fmt/format.h>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

// The key of the certificate the peer sent first (its own).
std::string peer_key(WOLFSSL* ssl) {
  WOLFSSL_X509_CHAIN* chain = wolfSSL_get_peer_chain(ssl);
  if (chain == nullptr || wolfSSL_get_chain_count(chain) == 0) return {};
  const unsigned char* der = wolfSSL_get_chain_cert(chain, 0);
  X509 leaf(wolfSSL_X509_d2i(nullptr, der, wolfSSL_get_chain_length(chain, 0)));
  return leaf ? key_description(leaf.get()) : std::string();
}

}  // namespace

SessionInfo session_facts(WOLFSSL* ssl, bool server) {
  SessionInfo info;
  info.version = wolfSSL_get_version(ssl);
  info.cipher = suite_name(wolfSSL_get_cipher_name(ssl));
  info.group = group_name(wolfSSL_get_curve_name(ssl));
  const std::string peer = peer_key(ssl);
  WOLFSSL_X509* ours = wolfSSL_get_certificate(ssl);  // the connection's own: not to free
  const std::string own = ours != nullptr ? key_description(ours) : std::string();
  info.certificate_key_type = server ? own : peer;
  info.client_certificate_key_type = server ? peer : own;
  info.resumed = wolfSSL_session_reused(ssl) != 0;
  char* alpn = nullptr;
  word16 alpn_bytes = 0;
  if (wolfSSL_ALPN_GetProtocol(ssl, &alpn, &alpn_bytes) == WOLFSSL_SUCCESS && alpn != nullptr)
    info.alpn.assign(alpn, alpn_bytes);
  return info;
}

Session saved_session(WOLFSSL* ssl, bool offered_ticket) {
  WOLFSSL_SESSION* got = wolfSSL_get1_session(ssl);
  if (got == nullptr) return {};
  auto held = std::make_shared<SavedSession>();
  held->session = std::shared_ptr<WOLFSSL_SESSION>(got, wolfSSL_SESSION_free);
  held->ticket = wolfSSL_SESSION_has_ticket(got) != 0 || (wolfSSL_session_reused(ssl) != 0 && offered_ticket);
  // TLS 1.3 resumes by ticket alone: none came yet.
  if (wolfSSL_version(ssl) == TLS1_3_VERSION && !held->ticket) return {};
  return Session(std::move(held));
}

}  // namespace tlscmp::tls::wolfssl
