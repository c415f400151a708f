// wolfSSL's contexts: a WOLFSSL_CTX per context (method by version, cipher
// list, groups, certificates, trust), and on a server the session tickets
// (wolfSSL's own ticket key), its session cache (TLS 1.2 IDs) and other
// certificates by name (SNI).

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

int pem_size(const std::string& pem) {
  return static_cast<int>(pem.size());
}

Ctx new_ctx(const std::string& version, bool server) {
  WOLFSSL_METHOD* method = nullptr;
  if (version == "1.2")
    method = server ? wolfTLSv1_2_server_method() : wolfTLSv1_2_client_method();
  else if (version == "1.3")
    method = server ? wolfTLSv1_3_server_method() : wolfTLSv1_3_client_method();
  else
    method = server ? wolfSSLv23_server_method() : wolfSSLv23_client_method();
  Ctx ctx(wolfSSL_CTX_new(method), CtxDeleter{});
  if (!ctx) throw Error("cannot make a wolfSSL context");
  if (version.empty())
    check(wolfSSL_CTX_SetMinVersion(ctx.get(), WOLFSSL_TLSV1_2), "wolfSSL's lowest version");
  return ctx;
}

// Trusts the CAs of `pem`; `what` names them in errors ("the given CA").
void trust_pem(WOLFSSL_CTX* ctx, const std::string& pem, const std::string& what) {
  check(wolfSSL_CTX_load_verify_buffer(ctx, reinterpret_cast<const unsigned char*>(pem.data()), pem_size(pem),
                                       WOLFSSL_FILETYPE_PEM),
        fmt::format("{} holds no usable PEM certificate", what));
}

void trust_file(WOLFSSL_CTX* ctx, const std::string& file, const char* what) {
  trust_pem(ctx, read_text_file(file, what), fmt::format("{} '{}'", what, file));
}

// The cipher list and groups of a policy on a context.
void use_policy(WOLFSSL_CTX* ctx, const Policy& policy, const std::string& cipher_list, bool server) {
  if (!cipher_list.empty() && wolfSSL_CTX_set_cipher_list(ctx, cipher_list.c_str()) != WOLFSSL_SUCCESS) {
    throw Error(fmt::format(
        "--cipher {}: {} has none of these suites; it takes OpenSSL's names (TLS_AES_128_GCM_SHA256, "
        "ECDHE-ECDSA-AES128-GCM-SHA256 ...) and its own",
        policy.cipher, wolfssl_backend().library_version()));
  }
  std::vector<int> groups = groups_of(policy);
  if (groups.empty()) return;
  check(wolfSSL_CTX_set_groups(ctx, groups.data(), static_cast<int>(groups.size())),
        fmt::format("--groups {} under wolfSSL", policy.groups));
  if (server) return;
  for (const int group : groups)  // TLS 1.2's supported groups, which set_groups leaves alone
    check(wolfSSL_CTX_UseSupportedCurve(ctx, static_cast<word16>(group)),
          fmt::format("--groups {} under wolfSSL", policy.groups));
}

// What a server's connections share: its context, and the contexts of other names.
struct ServerState {
  Ctx ctx;
  std::string alpn;  // the application protocols it agrees to, comma-separated (ServerOptions::alpn)
  std::mutex mutex;  // guards by_name
  std::map<std::string, Ctx, std::less<>> by_name;
};

// ALPN's protocols, comma-separated as wolfSSL takes them, on a connection;
// it goes on without ALPN where the peer offers none of them.
void use_alpn(WOLFSSL* ssl, const std::string& protocols) {
  if (protocols.empty()) return;
  std::string list = protocols;  // wolfSSL takes it as char*
  check(wolfSSL_UseALPN(ssl, list.data(), static_cast<unsigned>(list.size()),
                        WOLFSSL_ALPN_CONTINUE_ON_MISMATCH),
        "cannot set the ALPN protocols under wolfSSL");
}

std::string comma_list(const std::vector<std::string>& protocols) {
  std::string out;
  for (const std::string& p : protocols)
    out += (out.empty() ? "" : ",") + p;
  return out;
}

// After the ClientHello's SNI: the context of the name the client asked for.
int choose_by_name(WOLFSSL* ssl, int*, void* arg) {
  auto* state = static_cast<ServerState*>(arg);
  const char* name = wolfSSL_get_servername(ssl, WOLFSSL_SNI_HOST_NAME);
  if (name == nullptr) return 0;
  Ctx other;
  {
    std::lock_guard lock(state->mutex);
    const auto it = state->by_name.find(std::string_view(name));
    if (it != state->by_name.end()) other = it->second;
  }
  if (other) wolfSSL_set_SSL_CTX(ssl, other.get());
  return 0;
}

class WolfsslContext final : public ContextImpl {
 public:
  // A server's.
  explicit WolfsslContext(std::shared_ptr<ServerState> server) : server_(std::move(server)) {
    wolfSSL_CTX_set_servername_callback(server_->ctx.get(), choose_by_name);
    wolfSSL_CTX_set_servername_arg(server_->ctx.get(), server_.get());
  }
  // A client's.
  WolfsslContext(Ctx ctx, bool verify, std::string trust, std::string alpn)
      : client_(std::move(ctx)), verify_(verify), trust_(std::move(trust)), alpn_(std::move(alpn)) {}

  WOLFSSL* new_server_ssl() const {
    WOLFSSL* ssl = made(wolfSSL_new(server_->ctx.get()));
    use_alpn(ssl, server_->alpn);
    return ssl;
  }

  WOLFSSL* new_client_ssl(const std::string& host, const SavedSession* offered,
                          const std::string& server_name) const {
    WOLFSSL* ssl = made(wolfSSL_new(client_.get()));
    const std::string& sni = server_name.empty() ? host : server_name;
    if (!sni.empty() && (!server_name.empty() || !is_ip_literal(host)))
      wolfSSL_UseSNI(ssl, WOLFSSL_SNI_HOST_NAME, sni.data(), static_cast<word16>(sni.size()));
    if (verify_) {
      try {
        check_server_host(ssl, host);
      } catch (const Error&) {
        wolfSSL_free(ssl);
        throw;
      }
    }
    if (offered != nullptr) wolfSSL_set_session(ssl, offered->session.get());
    use_alpn(ssl, alpn_);
    return ssl;
  }

  std::unique_ptr<TlsStream> server_stream(UniqueFd fd) const override {
    return make_stream(std::move(fd), new_server_ssl(), true, {});
  }

  std::unique_ptr<TlsStream> client_stream(UniqueFd fd, const std::string& host, const Session& resume,
                                           const std::string& server_name) const override {
    const auto* offered = static_cast<const SavedSession*>(resume.get());
    return make_stream(std::move(fd), new_client_ssl(host, offered, server_name), false, trust_, offered);
  }

  void add_server_name(const std::string& server_name, const ContextImpl& other) override {
    if (!server_) throw Error("only a server's TLS context chooses certificates by name");
    const auto& theirs = static_cast<const WolfsslContext&>(other);
    std::lock_guard lock(server_->mutex);
    server_->by_name[server_name] = theirs.server_->ctx;
  }

  // wolfSSL's servers grant nothing outside their defaults (OpenSSL's do, by ALPN).
  CipherGrant grant_cipher(const std::string&) const override { return {}; }

 private:
  static WOLFSSL* made(WOLFSSL* ssl) {
    if (ssl == nullptr) throw Error("cannot make a wolfSSL connection");
    return ssl;
  }

  std::shared_ptr<ServerState> server_;
  Ctx client_;
  bool verify_ = false;
  std::string trust_;
  std::string alpn_;  // a client's offer, comma-separated
};

// What a context offers, in the words of the messages that name both sides'.
Offer describe(const Policy& policy, const std::string& version, const std::string& cipher_list) {
  Offer offer;
  offer.versions = version == "1.2" ? "TLSv1.2" : version == "1.3" ? "TLSv1.3" : "TLSv1.2 TLSv1.3";
  offer.ciphers = !policy.cipher.empty() ? policy.cipher
                  : cipher_list.empty()  ? "library default"
                                         : fmt::format("wolfSSL's {}", cipher_list);
  offer.groups = policy.groups.empty() ? "library default" : policy.groups;
  return offer;
}

const WolfsslContext& wolfssl_context(const Context& context) {
  if (&context.backend() != &wolfssl_backend())
    throw Error(fmt::format("a {} context was handed to wolfSSL's code", context.backend().name()));
  return static_cast<const WolfsslContext&>(context.impl());
}

void use_resumption(WOLFSSL_CTX* ctx, Resumption resumption) {
  if (resumption == Resumption::tickets) return;  // wolfSSL's own ticket key, made with the context
  check(wolfSSL_CTX_NoTicketTLSv12(ctx), "cannot turn wolfSSL's TLS 1.2 tickets off");
  check(wolfSSL_CTX_no_ticket_TLSv13(ctx), "cannot turn wolfSSL's TLS 1.3 tickets off");
  if (resumption == Resumption::none) wolfSSL_CTX_set_session_cache_mode(ctx, WOLFSSL_SESS_CACHE_OFF);
}

}  // namespace

void use_identity(WOLFSSL_CTX* ctx, const Identity& identity) {
  on_this_thread();  // the key check multiplies on the curve: this thread's ECC cache
  const std::string& chain = identity.certificate_chain_pem;
  const std::string& key = identity.private_key_pem;
  check(wolfSSL_CTX_use_certificate_chain_buffer_format(
            ctx, reinterpret_cast<const unsigned char*>(chain.data()), pem_size(chain), WOLFSSL_FILETYPE_PEM),
        "cannot use the certificate under wolfSSL");
  check(wolfSSL_CTX_use_PrivateKey_buffer(ctx, reinterpret_cast<const unsigned char*>(key.data()),
                                          pem_size(key), WOLFSSL_FILETYPE_PEM),
        "cannot use the private key under wolfSSL");
  check(wolfSSL_CTX_check_private_key(ctx), "the key does not match the certificate under wolfSSL");
  // wolfSSL makes the context's X509 of its certificate on first asking, unlocked:
  // made here, before the threads that share the context ask for it (session_facts).
  check(wolfSSL_CTX_get0_certificate(ctx) != nullptr ? WOLFSSL_SUCCESS : 0,
        "cannot read the certificate back under wolfSSL");
}

void use_client_trust(WOLFSSL_CTX* ctx, const ClientOptions& options, std::string& trust) {
  trust = "the system's trusted CAs";
  if (options.insecure) {
    wolfSSL_CTX_set_verify(ctx, WOLFSSL_VERIFY_NONE, nullptr);
  } else {
    if (!options.ca_file.empty()) {
      trust_file(ctx, options.ca_file, "CA file");
      trust = fmt::format("the CA in {}", options.ca_file);
    } else if (!options.ca_pem.empty()) {
      trust_pem(ctx, options.ca_pem, "the given CA");
      trust = "the embedded server's CA";
    } else {
      check(wolfSSL_CTX_load_system_CA_certs(ctx), "cannot load the system's trusted certificates");
    }
    wolfSSL_CTX_set_verify(ctx, WOLFSSL_VERIFY_PEER, nullptr);
  }
  if (options.identity) use_identity(ctx, *options.identity);
}

void check_server_host(WOLFSSL* ssl, const std::string& host) {
  const int ret = is_ip_literal(host)
                      ? wolfSSL_X509_VERIFY_PARAM_set1_ip_asc(wolfSSL_get0_param(ssl), host.c_str())
                      : wolfSSL_check_domain_name(ssl, host.c_str());
  if (ret != WOLFSSL_SUCCESS)
    throw Error(fmt::format("wolfSSL cannot check the server's certificate for '{}'", host));
}

WOLFSSL* new_server_ssl(const Context& context) {
  return wolfssl_context(context).new_server_ssl();
}

WOLFSSL* new_client_ssl(const Context& context, const std::string& host, const Session& resume,
                        const std::string& server_name) {
  return wolfssl_context(context).new_client_ssl(host, static_cast<const SavedSession*>(resume.get()),
                                                 server_name);
}

Context WolfsslBackend::server_context(const ServerOptions& options) const {
  if (options.shape != nullptr) throw Error("wolfSSL runs no stack of its own transport (QUIC) in tlscmp");
  std::string version;
  const std::string cipher_list = cipher_list_of(options.policy, /*server=*/true, version);
  auto state = std::make_shared<ServerState>();
  state->ctx = new_ctx(version, true);
  WOLFSSL_CTX* ctx = state->ctx.get();
  use_identity(ctx, options.identity);
  if (!options.client_ca_file.empty()) {
    trust_file(ctx, options.client_ca_file, "client CA file");
    wolfSSL_CTX_set_verify(
        ctx, WOLFSSL_VERIFY_PEER | (options.require_client_cert ? WOLFSSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
        nullptr);
  } else if (options.require_client_cert) {
    throw Error("--require-client-cert needs --ca FILE with the CAs to trust client certificates from");
  } else {
    wolfSSL_CTX_set_verify(ctx, WOLFSSL_VERIFY_NONE, nullptr);
  }
  use_policy(ctx, options.policy, cipher_list, true);  // every group wolfSSL has, where none were given
  use_resumption(ctx, options.resumption);
  state->alpn = comma_list(options.alpn);
  Offer offer = describe(options.policy, version, cipher_list);
  offer.certificate_key_type = certificate_key_type(options.identity.certificate_chain_pem);
  return Context(std::make_shared<WolfsslContext>(std::move(state)), *this, std::move(offer));
}

Context WolfsslBackend::client_context(const ClientOptions& options) const {
  if (options.shape != nullptr) throw Error("wolfSSL runs no stack of its own transport (QUIC) in tlscmp");
  std::string version;
  const std::string cipher_list = cipher_list_of(options.policy, /*server=*/false, version);
  Ctx ctx = new_ctx(version, false);
  std::string trust;
  use_client_trust(ctx.get(), options, trust);
  use_policy(ctx.get(), options.policy, cipher_list, false);
  check(wolfSSL_CTX_UseSessionTicket(ctx.get()), "cannot ask for TLS 1.2 session tickets under wolfSSL");
  Offer offer = describe(options.policy, version, cipher_list);
  auto impl =
      std::make_shared<WolfsslContext>(std::move(ctx), !options.insecure, trust, comma_list(options.alpn));
  return Context(std::move(impl), *this, std::move(offer), std::move(trust));
}

}  // namespace tlscmp::tls::wolfssl
