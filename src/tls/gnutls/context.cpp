// GnuTLS's contexts: credentials (certificates, trust), a priority string
// (versions, suites, groups), and on a server the session tickets' key, a
// session cache (TLS 1.2 IDs) and other certificates by name (SNI).

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <map>
#include <mutex>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls::gnutls {
namespace {

void use_identity(gnutls_certificate_credentials_t credentials, const Identity& identity) {
  const gnutls_datum_t chain = datum(identity.certificate_chain_pem);
  const gnutls_datum_t key = datum(identity.private_key_pem);
  check(gnutls_certificate_set_x509_key_mem(credentials, &chain, &key, GNUTLS_X509_FMT_PEM),
        "cannot use the certificate and key under GnuTLS");
}

// Trusts the CAs of `pem`; `what` names them in errors ("the given CA").
void trust_pem(gnutls_certificate_credentials_t credentials, const std::string& pem,
               const std::string& what) {
  const gnutls_datum_t text = datum(pem);
  if (check(gnutls_certificate_set_x509_trust_mem(credentials, &text, GNUTLS_X509_FMT_PEM), what) == 0)
    throw Error(fmt::format("{} holds no usable PEM certificate", what));
}

void trust_file(gnutls_certificate_credentials_t credentials, const std::string& file, const char* what) {
  trust_pem(credentials, read_text_file(file, what), fmt::format("{} '{}'", what, file));
}

// What a server's sessions share: its key for tickets, its cache of TLS 1.2
// sessions by ID, and the credentials of other names (a key type's).
struct ServerState {
  Credentials credentials;
  std::string priority_text;
  gnutls_priority_t priority = nullptr;
  gnutls_datum_t ticket_key{};
  Resumption resumption = Resumption::tickets;
  bool request_client_cert = false;
  bool require_client_cert = false;
  std::vector<std::string> alpn;  // the application protocols it agrees to (ServerOptions::alpn)
  std::mutex mutex;               // guards what follows
  std::map<std::string, Credentials, std::less<>> by_name;
  std::map<std::string, std::string, std::less<>> cache;  // TLS 1.2 sessions by ID
  ~ServerState() {
    gnutls_priority_deinit(priority);
    gnutls_free(ticket_key.data);
  }
};

int cache_store(void* arg, gnutls_datum_t key, gnutls_datum_t data) {
  auto* state = static_cast<ServerState*>(arg);
  std::lock_guard lock(state->mutex);
  if (state->cache.size() >= 20'000) state->cache.clear();  // a bound, as OpenSSL's cache has
  state->cache[std::string(reinterpret_cast<const char*>(key.data), key.size)] =
      std::string(reinterpret_cast<const char*>(data.data), data.size);
  return 0;
}

gnutls_datum_t cache_retrieve(void* arg, gnutls_datum_t key) {
  auto* state = static_cast<ServerState*>(arg);
  std::lock_guard lock(state->mutex);
  const auto it = state->cache.find(std::string_view(reinterpret_cast<const char*>(key.data), key.size));
  if (it == state->cache.end()) return {nullptr, 0};
  auto* copy = static_cast<unsigned char*>(gnutls_malloc(it->second.size()));
  std::memcpy(copy, it->second.data(), it->second.size());
  return {copy, static_cast<unsigned>(it->second.size())};
}

int cache_remove(void* arg, gnutls_datum_t key) {
  auto* state = static_cast<ServerState*>(arg);
  std::lock_guard lock(state->mutex);
  state->cache.erase(std::string(reinterpret_cast<const char*>(key.data), key.size));
  return 0;
}

// After the ClientHello: the credentials of the name the client asked for.
int choose_by_name(gnutls_session_t session) {
  auto* state = static_cast<ServerState*>(gnutls_session_get_ptr(session));
  std::array<char, 256> name{};
  std::size_t size = name.size();
  unsigned type = 0;
  if (gnutls_server_name_get(session, name.data(), &size, &type, 0) != 0 || type != GNUTLS_NAME_DNS) return 0;
  Credentials other;
  {
    std::lock_guard lock(state->mutex);
    const auto it = state->by_name.find(std::string_view(name.data(), size));
    if (it != state->by_name.end()) other = it->second;
  }
  if (other) gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, other.get());
  return 0;
}

// A client's certificate, where it sent one: checked against the client CAs.
int verify_client(gnutls_session_t session) {
  unsigned count = 0;
  if (gnutls_certificate_get_peers(session, &count) == nullptr || count == 0) return 0;  // REQUIRE refuses
  unsigned status = 0;
  return gnutls_certificate_verify_peers2(session, &status) < 0 || status != 0 ? GNUTLS_E_CERTIFICATE_ERROR
                                                                               : 0;
}

// What a session checks the certificate against, which it points to.
struct VerifyTarget {
  std::string host;
  std::array<unsigned char, 16> address{};
  std::array<gnutls_typed_vdata_st, 2> data{};
};

}  // namespace

std::shared_ptr<void> verify_host(gnutls_session_t session, const std::string& host) {
  auto target = std::make_shared<VerifyTarget>();
  target->host = host;
  const bool v4 = ::inet_pton(AF_INET, host.c_str(), target->address.data()) == 1;
  const bool v6 = !v4 && ::inet_pton(AF_INET6, host.c_str(), target->address.data()) == 1;
  if (!v4 && !v6) {
    gnutls_session_set_verify_cert(session, target->host.c_str(), 0);
    return target;
  }
  // The address, and the purpose that gnutls_session_set_verify_cert adds for a name.
  target->data[0].type = GNUTLS_DT_IP_ADDRESS;
  target->data[0].data = target->address.data();
  target->data[0].size = v4 ? 4 : 16;
  target->data[1].type = GNUTLS_DT_KEY_PURPOSE_OID;
  target->data[1].data = reinterpret_cast<unsigned char*>(const_cast<char*>(GNUTLS_KP_TLS_WWW_SERVER));
  gnutls_session_set_verify_cert2(session, target->data.data(), 2, 0);
  return target;
}

Credentials identity_credentials(const Identity& identity) {
  Credentials credentials = new_credentials();
  use_identity(credentials.get(), identity);
  return credentials;
}

Credentials client_credentials(const ClientOptions& options, std::string& trust) {
  Credentials credentials = new_credentials();
  trust = "the system's trusted CAs";
  if (!options.insecure) {
    if (!options.ca_file.empty()) {
      trust_file(credentials.get(), options.ca_file, "CA file");
      trust = fmt::format("the CA in {}", options.ca_file);
    } else if (!options.ca_pem.empty()) {
      trust_pem(credentials.get(), options.ca_pem, "the given CA");
      trust = "the embedded server's CA";
    } else {
      check(gnutls_certificate_set_x509_system_trust(credentials.get()),
            "cannot load the system's trusted certificates");
    }
  }
  if (options.identity) use_identity(credentials.get(), *options.identity);
  return credentials;
}

namespace {

// ALPN's protocols on a session, in the order given; GNUTLS_ALPN_SERVER_PRECEDENCE
// on a server, which goes on without ALPN where the client offers none of them.
void use_alpn(gnutls_session_t session, const std::vector<std::string>& protocols, unsigned flags) {
  if (protocols.empty()) return;
  std::vector<gnutls_datum_t> datums;
  for (const std::string& p : protocols)
    datums.push_back(
        {reinterpret_cast<unsigned char*>(const_cast<char*>(p.data())), static_cast<unsigned>(p.size())});
  check(gnutls_alpn_set_protocols(session, datums.data(), static_cast<unsigned>(datums.size()), flags),
        "cannot set the ALPN protocols under GnuTLS");
}

class GnutlsContext final : public ContextImpl {
 public:
  // A server's.
  explicit GnutlsContext(std::shared_ptr<ServerState> server) : server_(std::move(server)) {}
  // A client's.
  GnutlsContext(Credentials credentials, std::string priority, bool verify, std::string trust,
                std::vector<std::string> alpn)
      : client_credentials_(std::move(credentials)),
        verify_(verify),
        trust_(std::move(trust)),
        alpn_(std::move(alpn)) {
    check(gnutls_priority_init(&client_priority_, priority.c_str(), nullptr),
          fmt::format("GnuTLS refused the priority '{}'", priority));
  }
  ~GnutlsContext() override { gnutls_priority_deinit(client_priority_); }

  gnutls_session_t new_server_session() const {
    ServerState& s = *server_;
    gnutls_session_t session = nullptr;
    const unsigned flags =
        GNUTLS_SERVER | GNUTLS_NONBLOCK |
        (s.resumption == Resumption::tickets ? 0U : static_cast<unsigned>(GNUTLS_NO_TICKETS));
    check(gnutls_init(&session, flags), "cannot make a GnuTLS session");
    gnutls_session_set_ptr(session, &s);
    gnutls_priority_set(session, s.priority);
    gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, s.credentials.get());
    if (s.resumption == Resumption::tickets) gnutls_session_ticket_enable_server(session, &s.ticket_key);
    if (s.resumption != Resumption::none) {
      gnutls_db_set_ptr(session, &s);
      gnutls_db_set_store_function(session, cache_store);
      gnutls_db_set_retrieve_function(session, cache_retrieve);
      gnutls_db_set_remove_function(session, cache_remove);
    }
    if (s.request_client_cert)
      gnutls_certificate_server_set_request(
          session, s.require_client_cert ? GNUTLS_CERT_REQUIRE : GNUTLS_CERT_REQUEST);
    gnutls_handshake_set_post_client_hello_function(session, choose_by_name);
    use_alpn(session, s.alpn, GNUTLS_ALPN_SERVER_PRECEDENCE);
    return session;
  }

  ClientSession new_client_session(const std::string& host, const SavedSession* offered,
                                   const std::string& server_name) const {
    ClientSession made;
    check(gnutls_init(&made.session, GNUTLS_CLIENT | GNUTLS_NONBLOCK), "cannot make a GnuTLS session");
    gnutls_priority_set(made.session, client_priority_);
    gnutls_credentials_set(made.session, GNUTLS_CRD_CERTIFICATE, client_credentials_.get());
    const std::string& sni = server_name.empty() ? host : server_name;
    if (!sni.empty() && (!server_name.empty() || !is_ip_literal(host)))
      gnutls_server_name_set(made.session, GNUTLS_NAME_DNS, sni.data(), sni.size());
    if (verify_) made.verify_target = verify_host(made.session, host);
    if (offered != nullptr) gnutls_session_set_data(made.session, offered->data.data(), offered->data.size());
    use_alpn(made.session, alpn_, 0);
    return made;
  }

  std::unique_ptr<TlsStream> server_stream(UniqueFd fd) const override {
    return make_stream(std::move(fd), new_server_session(), true, {});
  }

  std::unique_ptr<TlsStream> client_stream(UniqueFd fd, const std::string& host, const Session& resume,
                                           const std::string& server_name) const override {
    const auto* offered = static_cast<const SavedSession*>(resume.get());
    ClientSession made = new_client_session(host, offered, server_name);
    return make_stream(std::move(fd), made.session, false, trust_, offered, std::move(made.verify_target));
  }

  void add_server_name(const std::string& server_name, const ContextImpl& other) override {
    if (!server_) throw Error("only a server's TLS context chooses certificates by name");
    const auto& theirs = static_cast<const GnutlsContext&>(other);
    std::lock_guard lock(server_->mutex);
    server_->by_name[server_name] = theirs.server_->credentials;
  }

  // GnuTLS's servers grant nothing outside their defaults (OpenSSL's do, by ALPN).
  CipherGrant grant_cipher(const std::string&) const override { return {}; }

 private:
  std::shared_ptr<ServerState> server_;
  Credentials client_credentials_;
  gnutls_priority_t client_priority_ = nullptr;
  bool verify_ = false;
  std::string trust_;
  std::vector<std::string> alpn_;  // a client's offer
};

// What a context offers, in the words of the messages that name both sides'.
Offer describe(const Policy& policy, const std::string& priority, bool server) {
  Offer offer;
  offer.versions = policy.version == "1.2"   ? "TLSv1.2"
                   : policy.version == "1.3" ? "TLSv1.3"
                                             : "TLSv1.2 TLSv1.3";
  offer.ciphers = policy.cipher.empty() && !server ? "library default" : policy.cipher;
  if (offer.ciphers.empty()) offer.ciphers = fmt::format("GnuTLS's {}", priority);
  offer.groups = policy.groups.empty() ? "library default" : policy.groups;
  return offer;
}

const GnutlsContext& gnutls_context(const Context& context) {
  if (&context.backend() != &gnutls_backend())
    throw Error(fmt::format("a {} context was handed to GnuTLS's code", context.backend().name()));
  return static_cast<const GnutlsContext&>(context.impl());
}

}  // namespace

gnutls_session_t new_server_session(const Context& context) {
  return gnutls_context(context).new_server_session();
}

ClientSession new_client_session(const Context& context, const std::string& host, const Session& resume) {
  return gnutls_context(context).new_client_session(host, static_cast<const SavedSession*>(resume.get()), {});
}

Context GnutlsBackend::server_context(const ServerOptions& options) const {
  if (options.shape != nullptr) throw Error("GnuTLS runs no stack of its own transport (QUIC) in tlscmp");
  auto state = std::make_shared<ServerState>();
  state->credentials = identity_credentials(options.identity);
  if (!options.client_ca_file.empty()) {
    trust_file(state->credentials.get(), options.client_ca_file, "client CA file");
    gnutls_certificate_set_verify_function(state->credentials.get(), verify_client);
    state->request_client_cert = true;
    state->require_client_cert = options.require_client_cert;
  } else if (options.require_client_cert) {
    throw Error("--require-client-cert needs --ca FILE with the CAs to trust client certificates from");
  }
  // Every group GnuTLS has, where none were given (Context::for_server).
  state->priority_text = priority_of(options.policy, /*server=*/true);
  check(gnutls_priority_init(&state->priority, state->priority_text.c_str(), nullptr),
        fmt::format("GnuTLS refused the priority '{}'", state->priority_text));
  state->resumption = options.resumption;
  state->alpn = options.alpn;
  check(gnutls_session_ticket_key_generate(&state->ticket_key), "cannot make a session ticket key");
  Offer offer = describe(options.policy, state->priority_text, true);
  offer.certificate_key_type = certificate_key_type(options.identity.certificate_chain_pem);
  return Context(std::make_shared<GnutlsContext>(std::move(state)), *this, std::move(offer));
}

Context GnutlsBackend::client_context(const ClientOptions& options) const {
  if (options.shape != nullptr) throw Error("GnuTLS runs no stack of its own transport (QUIC) in tlscmp");
  std::string trust;
  Credentials credentials = client_credentials(options, trust);
  const std::string priority = priority_of(options.policy, /*server=*/false);
  Offer offer = describe(options.policy, priority, false);
  auto impl = std::make_shared<GnutlsContext>(std::move(credentials), priority, !options.insecure, trust,
                                              options.alpn);
  return Context(std::move(impl), *this, std::move(offer), std::move(trust));
}

}  // namespace tlscmp::tls::gnutls
