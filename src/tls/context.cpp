#include "tls/context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>

#include "error.hpp"
#include "tls/context_setup.hpp"
#include "tls/ossl_ptr.hpp"
#include "tls/ssl_backend.hpp"
#include "tls/ssl_compat.hpp"
#include "tls/ssl_context.hpp"
#include "tls/ssl_stream.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls {
namespace detail {

std::shared_ptr<SSL_CTX> new_context(const SSL_METHOD* method, int min_version, int max_version) {
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(method), SSL_CTX_free);
  if (!ctx) throw_tls_error("cannot create a TLS context");
  compat::set_version_range(ctx.get(), min_version, max_version);
  return ctx;
}

void use_identity(SSL_CTX* ctx, const Identity& identity) {
  BioPtr certs = memory_bio(identity.certificate_chain_pem);
  X509Ptr leaf(PEM_read_bio_X509(certs.get(), nullptr, no_passphrase, nullptr));
  if (!leaf || SSL_CTX_use_certificate(ctx, leaf.get()) != 1) throw_tls_error("cannot use the certificate");
  // Any further certificates in the chain are intermediates sent with the leaf.
  while (X509* extra = PEM_read_bio_X509(certs.get(), nullptr, no_passphrase, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
      X509_free(extra);
      throw_tls_error("cannot use the certificate chain");
    }
  }
  ERR_clear_error();  // the end of the PEM stream is reported as an error
  BioPtr key_bio = memory_bio(identity.private_key_pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr));
  if (!key || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) throw_tls_error("cannot use the private key");
  if (SSL_CTX_check_private_key(ctx) != 1) throw_tls_error("the private key does not match the certificate");
}

void trust_pem(SSL_CTX* ctx, const std::string& pem) {
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  BioPtr bio = memory_bio(pem);
  int added = 0;
  while (X509Ptr cert{PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr)}) {
    if (X509_STORE_add_cert(store, cert.get()) != 1) throw_tls_error("cannot trust the given CA");
    ++added;
  }
  ERR_clear_error();
  if (added == 0) throw Error("the given CA holds no PEM certificate");
}

void trust_file(SSL_CTX* ctx, const std::string& file, const char* what) {
  if (::access(file.c_str(), R_OK) != 0) {
    throw Error(fmt::format("cannot read {} '{}': {}", what, file, std::strerror(errno)));
  }
  if (SSL_CTX_load_verify_locations(ctx, file.c_str(), nullptr) != 1) {
    throw_tls_error(fmt::format("{} '{}' holds no usable PEM certificate", what, file));
  }
}

// The verify callback of a client context: changes no verdict, but hands the
// first certificate that failed, with its names and dates, to its stream.
int record_verify_failure(int ok, X509_STORE_CTX* store) {
  if (ok == 1) return ok;
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* stream = ssl != nullptr ? static_cast<ConnectionEvents*>(SSL_get_app_data(ssl)) : nullptr;
  X509* cert = X509_STORE_CTX_get_current_cert(store);
  if (stream == nullptr || cert == nullptr) return ok;
  stream->note_verify_failure(
      {X509_STORE_CTX_get_error(store), X509_STORE_CTX_get_error_depth(store),
       compat::name_text(X509_get_subject_name(cert)), compat::name_text(X509_get_issuer_name(cert)),
       compat::time_text(X509_get0_notBefore(cert)), compat::time_text(X509_get0_notAfter(cert))});
  return ok;
}

void set_client_trust(SSL_CTX* ctx, const ClientOptions& config) {
  if (config.insecure) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, record_verify_failure);
  if (!config.ca_file.empty()) {
    trust_file(ctx, config.ca_file, "CA file");
  } else if (!config.ca_pem.empty()) {
    trust_pem(ctx, config.ca_pem);
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    throw_tls_error("cannot load the system's trusted certificates");
  }
}

}  // namespace detail
namespace {

using detail::new_context;
using detail::trust_file;
using detail::use_identity;

void set_cipher(SSL_CTX* ctx, const Policy& policy) {
  const std::string& cipher = policy.cipher;
  if (cipher.empty()) return;
  // TLS 1.3 suites are named TLS_*; anything else is an OpenSSL TLS 1.2 cipher
  // list, which only TLS 1.2 can use.
  if (cipher.rfind("TLS_", 0) == 0) {
    if (policy.version == "1.2") throw Error(fmt::format("'{}' is a TLS 1.3 suite, not for TLS 1.2", cipher));
    compat::set_tls13_suites(ctx, cipher);
    compat::set_version_range(ctx, TLS1_3_VERSION, compat::max_version(ctx));
  } else {
    if (policy.version == "1.3") {
      throw Error(fmt::format("'{}' is a TLS 1.2 cipher list; TLS 1.3 suites are named TLS_*", cipher));
    }
    if (SSL_CTX_set_cipher_list(ctx, cipher.c_str()) != 1) {
      ERR_clear_error();
      throw Error(fmt::format("unknown TLS 1.2 cipher '{}'", cipher));
    }
    compat::set_version_range(ctx, compat::min_version(ctx), TLS1_2_VERSION);
  }
}

// Names the groups in `list` that this library lacks, and those it has.
std::string unknown_groups_message(const std::string& list) {
  std::string unknown;
  std::istringstream names(list);
  for (std::string name; std::getline(names, name, ':');) {
    if (!compat::has_group(name.c_str())) unknown += (unknown.empty() ? "" : ", ") + name;
  }
  std::string have;
  for (const std::string& group : ssl::ssl_backend().available_groups())
    have += (have.empty() ? "" : ", ") + group;
  return fmt::format("--groups {}: {} has no key exchange group named {}; it has {}", list,
                     compat::library_version(), unknown.empty() ? list : unknown, have);
}

void apply_policy(SSL_CTX* ctx, const Policy& policy) {
  if (policy.version == "1.2" || policy.version == "1.3") {
    const int version = policy.version == "1.2" ? TLS1_2_VERSION : TLS1_3_VERSION;
    compat::set_version_range(ctx, version, version);
  } else if (!policy.version.empty()) {
    throw Error(fmt::format("unknown TLS version '{}': use 1.2 or 1.3", policy.version));
  }
  set_cipher(ctx, policy);
  if (!policy.groups.empty() && !compat::set_groups(ctx, policy.groups)) {
    ERR_clear_error();
    throw Error(unknown_groups_message(policy.groups));
  }
  if (policy.ktls) compat::enable_ktls(ctx);
}

const char* version_name(int version) {
  switch (version) {
    case TLS1_2_VERSION:
      return "TLSv1.2";
    case TLS1_3_VERSION:
      return "TLSv1.3";
    default:
      return "?";
  }
}

// A server names its suites, its own defaults or not; a client without
// --cipher offers its library's, a long list that says little.
Offer describe_offer(SSL_CTX* ctx, const Policy& policy, bool server) {
  const int low = compat::min_version(ctx);
  const int high = compat::max_version(ctx);
  Offer offer;
  offer.versions =
      low == high ? version_name(low) : fmt::format("{} {}", version_name(low), version_name(high));
  if (policy.cipher.empty() && !server) {
    offer.ciphers = "library default";
  } else {
    for (const std::string& name : compat::cipher_names(ctx)) {
      const bool tls13 = name.rfind("TLS_", 0) == 0;
      if ((tls13 && high < TLS1_3_VERSION) || (!tls13 && low > TLS1_2_VERSION)) continue;
      offer.ciphers += (offer.ciphers.empty() ? "" : ":") + name;
    }
  }
  offer.groups = policy.groups.empty() ? "library default" : policy.groups;
  return offer;
}

bool is_tls13_suite(const std::string& name) {
  return name.rfind("TLS_", 0) == 0;
}

// The suites a --cipher setting names, as a server of this library takes
// them; none where it cannot (an unknown name, a TLS 1.3 suite under BoringSSL).
std::vector<std::string> suites_of(const std::string& cipher) {
  const std::shared_ptr<SSL_CTX> scratch(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!scratch) return {};
  const bool tls13 = is_tls13_suite(cipher);
  bool known = false;
  if (!tls13) {
    known = SSL_CTX_set_cipher_list(scratch.get(), cipher.c_str()) == 1;
  } else {
    try {
      compat::set_tls13_suites(scratch.get(), cipher);
      known = true;
    } catch (const Error&) {
      // unknown, or BoringSSL's own choice
    }
  }
  ERR_clear_error();
  std::vector<std::string> suites;
  if (!known) return suites;
  for (std::string& name : compat::cipher_names(scratch.get())) {
    if (is_tls13_suite(name) == tls13) suites.push_back(std::move(name));
  }
  return suites;
}

// The suites of `cipher` that a server with tlscmp's defaults does not
// offer, colon-separated; "" where there are none (or it names none). The
// client and the server judge it alike, each with its own library.
std::string suites_outside_defaults(const std::string& cipher) {
  const std::shared_ptr<SSL_CTX> defaults(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!defaults || SSL_CTX_set_cipher_list(defaults.get(), detail::kServerTls12Ciphers) != 1) return {};
  const std::vector<std::string> offered = compat::cipher_names(defaults.get());
  std::string outside;
  for (const std::string& suite : suites_of(cipher)) {
    if (std::find(offered.begin(), offered.end(), suite) == offered.end())
      outside += (outside.empty() ? "" : ":") + suite;
  }
  return outside;
}

// The ALPN protocol name with which a client asks for a granted cipher:
// "tlscmp-cipher/" and a hash of the setting as the client gave it.
std::string grant_protocol(const std::string& cipher) {
  std::uint64_t hash = 0xcbf29ce484222325;  // FNV-1a
  for (const char c : cipher)
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3;
  return fmt::format("tlscmp-cipher/{:016x}", hash);
}

}  // namespace

// Context::ServerState holds them: not in the anonymous namespace.
namespace detail {

// The ciphers a server has granted (Context::grant_cipher), by their ALPN
// protocol name; a grant ends with its last holder.
struct CipherGrants {
  struct Grant {
    std::string cipher;
    int holders = 0;
  };
  std::mutex mutex;
  std::map<std::string, Grant, std::less<>> grants;
};

// A server's early callback: a client whose ALPN list names a granted cipher
// gets it on this connection. The extension is a 2-byte length, then names
// behind a 1-byte length each.
void apply_cipher_grant(SSL* ssl, const unsigned char* alpn, std::size_t bytes, void* arg) {
  auto* table = static_cast<CipherGrants*>(arg);
  for (std::size_t at = 2; alpn != nullptr && at < bytes && at + 1 + alpn[at] <= bytes; at += 1 + alpn[at]) {
    const std::string_view name(reinterpret_cast<const char*>(alpn + at + 1), alpn[at]);
    std::string cipher;
    {
      std::lock_guard lock(table->mutex);
      const auto it = table->grants.find(name);
      if (it == table->grants.end()) continue;
      cipher = it->second.cipher;
    }
    if (is_tls13_suite(cipher)) {
      compat::set_tls13_suites(ssl, cipher);
    } else {
      SSL_set_cipher_list(ssl, cipher.c_str());
    }
    ERR_clear_error();
    return;
  }
}

// A server's ALPN choice: the first of its protocols (`arg`) that the
// client offers; none, and the handshake goes on without ALPN.
int select_alpn(SSL*, const unsigned char** out, unsigned char* out_bytes, const unsigned char* in,
                unsigned in_bytes, void* arg) {
  for (const std::string& ours : *static_cast<const std::vector<std::string>*>(arg)) {
    for (unsigned at = 0; at < in_bytes && at + 1U + in[at] <= in_bytes; at += 1U + in[at]) {
      if (std::string_view(reinterpret_cast<const char*>(in + at + 1), in[at]) != ours) continue;
      *out = in + at + 1;
      *out_bytes = in[at];
      return SSL_TLSEXT_ERR_OK;
    }
  }
  return SSL_TLSEXT_ERR_NOACK;
}

}  // namespace detail

struct ssl::SslContext::ServerState {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<ssl_ctx_st>, std::less<>> contexts;  // by SNI name
  detail::CipherGrants grants;
  bool own_cipher = false;        // started with --cipher: its operator's limit, no grants
  std::vector<std::string> alpn;  // the application protocols it agrees to (ServerOptions::alpn)
};

Context ssl::SslBackend::server_context(const ServerOptions& config) const {
  const ContextShape* shape = config.shape;
  auto ctx = shape != nullptr ? new_context(shape->method(/*server=*/true), TLS1_3_VERSION, TLS1_3_VERSION)
                              : new_context(TLS_server_method(), TLS1_2_VERSION, TLS1_3_VERSION);
  if (shape != nullptr) shape->set_up(ctx.get(), /*server=*/true, /*event_loop=*/false);
  use_identity(ctx.get(), config.identity);
  compat::accept_ed25519(ctx.get());  // client certificates may be Ed25519 too
  // Without a session ID context a server that verifies clients cannot
  // resume their sessions: OpenSSL ends such a handshake with "internal error".
  static constexpr unsigned char kSessionContext[] = {'t', 'l', 's', 'c', 'm', 'p'};
  SSL_CTX_set_session_id_context(ctx.get(), kSessionContext, sizeof kSessionContext);
  if (config.resumption != Resumption::tickets) SSL_CTX_set_options(ctx.get(), SSL_OP_NO_TICKET);
  if (config.resumption == Resumption::none) {
    // Neither tickets nor IDs: a client's session finds nothing here.
    SSL_CTX_set_num_tickets(ctx.get(), 0);  // TLS 1.3 tickets too (both libraries have it)
    SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  }
  if (!config.client_ca_file.empty()) {
    trust_file(ctx.get(), config.client_ca_file, "client CA file");
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.client_ca_file.c_str())) {
      SSL_CTX_set_client_CA_list(ctx.get(), names);  // tells clients which CAs are trusted
    }
    SSL_CTX_set_verify(ctx.get(),
                       SSL_VERIFY_PEER | (config.require_client_cert ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
                       nullptr);
  } else if (config.require_client_cert) {
    throw Error("--require-client-cert needs --ca FILE with the CAs to trust client certificates from");
  }
  const Policy& policy = config.policy;  // every group the library has (Context::for_server)
  apply_policy(ctx.get(), policy);
  if (shape == nullptr && policy.cipher.empty() &&
      SSL_CTX_set_cipher_list(ctx.get(), detail::kServerTls12Ciphers) != 1)
    throw_tls_error("cannot set the server's TLS 1.2 suites");
  SSL_CTX_set_options(ctx.get(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (shape == nullptr) compat::set_read_ahead(ctx.get(), config.read_ahead_bytes);
  Offer offer = describe_offer(ctx.get(), policy, /*server=*/true);
  offer.certificate_key_type = certificate_key_type(config.identity.certificate_chain_pem);
  // The state lives as long as any copy of this context, and the SSL_CTX's
  // connections end before the server that holds it (its threads are joined).
  auto state = std::make_shared<ssl::SslContext::ServerState>();
  state->own_cipher = !policy.cipher.empty();
  compat::on_client_hello<detail::apply_cipher_grant>(ctx.get(), &state->grants);
  state->alpn = config.alpn;
  if (!state->alpn.empty()) SSL_CTX_set_alpn_select_cb(ctx.get(), detail::select_alpn, &state->alpn);
  // Other certificates by the name a client asks for (add_server_name).
  compat::set_servername_callback(
      ctx.get(),
      [](SSL* ssl, int*, void* arg) -> int {
        const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        if (name == nullptr) return SSL_TLSEXT_ERR_OK;
        auto* known = static_cast<ssl::SslContext::ServerState*>(arg);
        std::shared_ptr<ssl_ctx_st> other;
        {
          std::lock_guard lock(known->mutex);
          if (auto it = known->contexts.find(name); it != known->contexts.end()) other = it->second;
        }
        if (other) SSL_set_SSL_CTX(ssl, other.get());
        return SSL_TLSEXT_ERR_OK;
      },
      state.get());
  return Context(std::make_shared<ssl::SslContext>(std::move(ctx), std::move(state), std::string()), *this,
                 std::move(offer));
}

void ssl::SslContext::add_server_name(const std::string& server_name, const ContextImpl& other) {
  if (!server_) throw Error("only a server's TLS context chooses certificates by name");
  std::lock_guard lock(server_->mutex);
  server_->contexts[server_name] = static_cast<const SslContext&>(other).ctx_;
}

CipherGrant ssl::SslContext::grant_cipher(const std::string& cipher) const {
  if (!server_ || server_->own_cipher || cipher.empty()) return {};
  std::string outside = suites_outside_defaults(cipher);
  if (outside.empty()) return {};
  const std::string protocol = grant_protocol(cipher);
  detail::CipherGrants& table = server_->grants;
  {
    std::lock_guard lock(table.mutex);
    detail::CipherGrants::Grant& grant = table.grants[protocol];
    grant.cipher = cipher;
    ++grant.holders;
  }
  return {std::move(outside), std::shared_ptr<void>(nullptr, [state = server_, protocol](void*) {
            std::lock_guard lock(state->grants.mutex);
            const auto it = state->grants.grants.find(protocol);
            if (it != state->grants.grants.end() && --it->second.holders == 0) state->grants.grants.erase(it);
          })};
}

Context ssl::SslBackend::client_context(const ClientOptions& config) const {
  const ContextShape* shape = config.shape;
  auto ctx = shape != nullptr ? new_context(shape->method(/*server=*/false), TLS1_3_VERSION, TLS1_3_VERSION)
                              : new_context(TLS_client_method(), TLS1_2_VERSION, TLS1_3_VERSION);
  if (shape != nullptr) shape->set_up(ctx.get(), /*server=*/false, config.event_loop);
  detail::set_client_trust(ctx.get(), config);
  if (config.identity) use_identity(ctx.get(), *config.identity);
  compat::accept_ed25519(ctx.get());
  // Remember whether the server asked for a client certificate, to explain
  // a refusal that arrives only after the handshake (TLS 1.3).
  SSL_CTX_set_cert_cb(
      ctx.get(),
      [](SSL* ssl, void*) -> int {
        if (auto* stream = static_cast<ConnectionEvents*>(SSL_get_app_data(ssl)))
          stream->note_certificate_request();
        return 1;
      },
      nullptr);
  // Resumable sessions (TLS 1.3 tickets arrive after the handshake) go to
  // their stream, which hands them out for resumption; no cache of our own.
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx.get(), [](SSL* ssl, SSL_SESSION* session) -> int {
    auto* stream = static_cast<ConnectionEvents*>(SSL_get_app_data(ssl));
    if (stream == nullptr) return 0;
    stream->keep_session(adopt_session(session));
    return 1;  // we keep the reference
  });
  apply_policy(ctx.get(), config.policy);
  // ALPN: the shape's (QUIC's tlscmp); and a suite a tlscmp server does not offer by
  // default asks for its grant (grant_cipher).
  std::string alpn;
  const auto add_protocol = [&alpn](std::string_view protocol) {
    alpn += static_cast<char>(protocol.size());
    alpn += protocol;
  };
  if (shape != nullptr && shape->alpn != nullptr) add_protocol(shape->alpn);
  for (const std::string& protocol : config.alpn)
    add_protocol(protocol);
  if (!suites_outside_defaults(config.policy.cipher).empty())
    add_protocol(grant_protocol(config.policy.cipher));
  if (!alpn.empty() && SSL_CTX_set_alpn_protos(ctx.get(), reinterpret_cast<const unsigned char*>(alpn.data()),
                                               static_cast<unsigned>(alpn.size())) != 0)
    throw_tls_error("cannot set the client's ALPN list");
  if (shape == nullptr) compat::set_read_ahead(ctx.get(), config.read_ahead_bytes);
  Offer offer = describe_offer(ctx.get(), config.policy, /*server=*/false);
  std::string trust = "the system's trusted CAs";
  if (!config.ca_file.empty()) {
    trust = fmt::format("the CA in {}", config.ca_file);
  } else if (!config.ca_pem.empty()) {
    trust = "the embedded server's CA";
  }
  auto impl = std::make_shared<ssl::SslContext>(std::move(ctx), nullptr, trust);
  return Context(std::move(impl), *this, std::move(offer), std::move(trust));
}

SSL* ssl::SslContext::new_server_ssl() const {
  SSL* ssl = SSL_new(ctx_.get());
  if (ssl == nullptr) throw_tls_error("cannot create a TLS connection");
  SSL_set_accept_state(ssl);
  return ssl;
}

SSL* ssl::SslContext::new_client_ssl(const std::string& host, const Session& resume,
                                     const std::string& server_name) const {
  SSL* ssl = SSL_new(ctx_.get());
  if (ssl == nullptr) throw_tls_error("cannot create a TLS connection");
  SSL_set_connect_state(ssl);
  if (is_ip_literal(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set1_host(ssl, host.c_str());  // the certificate must name this host
    if (server_name.empty()) compat::set_server_name(ssl, host.c_str());  // SNI
  }
  if (!server_name.empty()) compat::set_server_name(ssl, server_name.c_str());
  if (resume && SSL_set_session(ssl, static_cast<SSL_SESSION*>(resume.get())) != 1) {
    SSL_free(ssl);
    throw_tls_error("cannot offer the saved session");
  }
  return ssl;
}

std::unique_ptr<TlsStream> ssl::SslContext::server_stream(UniqueFd fd) const {
  SSL* ssl = new_server_ssl();
  SSL_set_fd(ssl, fd.get());
  return std::make_unique<SslStream>(std::move(fd), ssl);
}

std::unique_ptr<TlsStream> ssl::SslContext::client_stream(UniqueFd fd, const std::string& host,
                                                          const Session& resume,
                                                          const std::string& server_name) const {
  SSL* ssl = new_client_ssl(host, resume, server_name);
  auto stream = std::make_unique<SslStream>(std::move(fd), ssl);
  SSL_set_fd(ssl, stream->native_handle());
  stream->set_trust_description(trust_);
  return stream;
}

const ssl::SslContext& ssl::ssl_context(const Context& context) {
  if (&context.backend() != &ssl_backend())
    throw Error(
        fmt::format("a {} context was handed to {}'s code", context.backend().name(), ssl_backend().name()));
  return static_cast<const SslContext&>(context.impl());
}

}  // namespace tlscmp::tls
