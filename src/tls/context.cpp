#include "tls/context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <fmt/format.h>
#include <unistd.h>

#include "error.hpp"
#include "tls/ossl_ptr.hpp"
#include "tls/ssl_compat.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls {
namespace {

std::shared_ptr<SSL_CTX> new_context(const SSL_METHOD* method) {
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(method), SSL_CTX_free);
  if (!ctx) throw_tls_error("cannot create a TLS context");
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
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

void set_cipher(SSL_CTX* ctx, const std::string& cipher) {
  if (cipher.empty()) return;
  // TLS 1.3 suites are named TLS_*; anything else is an OpenSSL TLS 1.2 cipher
  // list, which only TLS 1.2 can use.
  if (cipher.rfind("TLS_", 0) == 0) {
    if (SSL_CTX_set_ciphersuites(ctx, cipher.c_str()) != 1) {
      ERR_clear_error();
      throw Error(fmt::format("unknown TLS 1.3 cipher suite '{}'", cipher));
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  } else {
    if (SSL_CTX_set_cipher_list(ctx, cipher.c_str()) != 1) {
      ERR_clear_error();
      throw Error(fmt::format("unknown TLS 1.2 cipher '{}'", cipher));
    }
    SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
  }
}

}  // namespace

Context Context::for_server(const ServerConfig& config) {
  auto ctx = new_context(TLS_server_method());
  use_identity(ctx.get(), config.identity);
  compat::set_read_ahead(ctx.get(), config.read_ahead_bytes);
  return Context(std::move(ctx));
}

Context Context::for_client(const ClientConfig& config) {
  auto ctx = new_context(TLS_client_method());
  if (config.insecure) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (!config.ca_file.empty()) {
      if (::access(config.ca_file.c_str(), R_OK) != 0) {
        throw Error(fmt::format("cannot read CA file '{}': {}", config.ca_file, std::strerror(errno)));
      }
      if (SSL_CTX_load_verify_locations(ctx.get(), config.ca_file.c_str(), nullptr) != 1) {
        throw_tls_error(fmt::format("CA file '{}' holds no usable PEM certificate", config.ca_file));
      }
    } else if (!config.ca_pem.empty()) {
      trust_pem(ctx.get(), config.ca_pem);
    } else if (SSL_CTX_set_default_verify_paths(ctx.get()) != 1) {
      throw_tls_error("cannot load the system's trusted certificates");
    }
  }
  set_cipher(ctx.get(), config.cipher);
  compat::set_read_ahead(ctx.get(), config.read_ahead_bytes);
  return Context(std::move(ctx));
}

std::unique_ptr<TlsStream> Context::server_stream(UniqueFd fd) const {
  SSL* ssl = SSL_new(ctx_.get());
  if (ssl == nullptr) throw_tls_error("cannot create a TLS connection");
  SSL_set_fd(ssl, fd.get());
  SSL_set_accept_state(ssl);
  return std::make_unique<TlsStream>(std::move(fd), ssl);
}

std::unique_ptr<TlsStream> Context::client_stream(UniqueFd fd, const std::string& host) const {
  SSL* ssl = SSL_new(ctx_.get());
  if (ssl == nullptr) throw_tls_error("cannot create a TLS connection");
  auto stream = std::make_unique<TlsStream>(std::move(fd), ssl);
  SSL_set_fd(ssl, stream->native_handle());
  SSL_set_connect_state(ssl);
  if (is_ip_literal(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set1_host(ssl, host.c_str());            // the certificate must name this host
    compat::set_server_name(ssl, host.c_str());  // SNI
  }
  return stream;
}

std::string library_version() {
  return compat::library_version();
}

}  // namespace tlscmp::tls
