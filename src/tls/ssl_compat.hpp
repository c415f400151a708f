#pragma once

// The only file that knows which TLS library tlscmp is built against.
// Everything else in src/tls/ uses the API OpenSSL and BoringSSL share, and
// calls these helpers where the two differ.

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/objects.h>
#include <openssl/ssl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "error.hpp"
#include "tls/identity.hpp"

namespace tlscmp::tls::compat {

// "OpenSSL 3.0.19 27 Jan 2026"
inline std::string library_version() {
  return OpenSSL_version(OPENSSL_VERSION);
}

// Read-ahead lets the library pull as many records as fit into one buffer of
// `bytes` with one read(2), instead of one record header and body at a time.
inline void set_read_ahead(SSL_CTX* ctx, std::size_t bytes) {
  if (bytes == 0) return;
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, bytes);
}

// True when the error on the queue means the peer closed the TCP connection
// without sending close_notify (OpenSSL 3 reports it as SSL_ERROR_SSL).
inline bool is_unexpected_eof(unsigned long err) {
  return ERR_GET_LIB(err) == ERR_LIB_SSL && ERR_GET_REASON(err) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

// Sends `host` as Server Name Indication (OpenSSL's call is a macro with a C cast).
inline void set_server_name(SSL* ssl, const char* host) {
  SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(host));
}

// The names --groups takes, for the library's own names of the same groups.
inline std::string friendly_group_name(const std::string& name) {
  if (name == "x25519") return "X25519";
  if (name == "x448") return "X448";
  if (name == "secp256r1" || name == "prime256v1") return "P-256";
  if (name == "secp384r1") return "P-384";
  if (name == "secp521r1") return "P-521";
  return name;
}

// Name of the negotiated key exchange group ("X25519"), or "" if none.
inline std::string negotiated_group(SSL* ssl) {
  const auto nid = static_cast<int>(SSL_get_negotiated_group(ssl));
  if (nid == 0 || nid == NID_undef) return {};
  const char* name = SSL_group_to_name(ssl, nid);
  return name != nullptr ? friendly_group_name(name) : std::string{};
}

// TLS 1.3 suites, colon-separated. Throws tlscmp::Error if none is known.
inline void set_tls13_suites(SSL_CTX* ctx, const std::string& suites) {
  if (SSL_CTX_set_ciphersuites(ctx, suites.c_str()) != 1) {
    ERR_clear_error();
    throw Error("unknown TLS 1.3 cipher suite '" + suites + "'");
  }
}

// Key exchange groups, colon-separated ("X25519:P-256"); false if one is unknown.
inline bool set_groups(SSL_CTX* ctx, const std::string& groups) {
  return SSL_CTX_set1_groups_list(ctx, groups.c_str()) == 1;
}

// Asks for kernel TLS: the library hands the record layer to the kernel after
// the handshake where the kernel can take it, and stays in user space where not.
inline void enable_ktls(SSL_CTX* ctx) { SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS); }

// Whether the kernel took over sending and receiving on this connection.
inline bool ktls_send(SSL* ssl) { return BIO_get_ktls_send(SSL_get_wbio(ssl)) != 0; }
inline bool ktls_receive(SSL* ssl) { return BIO_get_ktls_recv(SSL_get_rbio(ssl)) != 0; }

// The protocol versions a context allows; 0 from the library means "the highest it has".
inline int min_version(SSL_CTX* ctx) {
  const auto v = static_cast<int>(SSL_CTX_get_min_proto_version(ctx));
  return v != 0 ? v : TLS1_2_VERSION;
}
inline int max_version(SSL_CTX* ctx) {
  const auto v = static_cast<int>(SSL_CTX_get_max_proto_version(ctx));
  return v != 0 ? v : TLS1_3_VERSION;
}

// The names of the cipher suites a context would accept, in preference order.
inline std::vector<std::string> cipher_names(SSL_CTX* ctx) {
  std::vector<std::string> names;
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx);
  for (int i = 0; ciphers != nullptr && i < sk_SSL_CIPHER_num(ciphers); ++i) {
    names.emplace_back(SSL_CIPHER_get_name(sk_SSL_CIPHER_value(ciphers, i)));
  }
  return names;
}

// The peer's certificate (not owned), or nullptr.
inline X509* peer_certificate(SSL* ssl) { return SSL_get0_peer_certificate(ssl); }

// A fresh private key of `type` (the caller owns it), or nullptr.
inline EVP_PKEY* generate_key(KeyType type) {
  switch (type) {
    case KeyType::rsa_2048:
      return EVP_RSA_gen(2048);
    case KeyType::rsa_3072:
      return EVP_RSA_gen(3072);
    case KeyType::rsa_4096:
      return EVP_RSA_gen(4096);
    case KeyType::ecdsa_p256:
      return EVP_EC_gen("P-256");
    case KeyType::ecdsa_p384:
      return EVP_EC_gen("P-384");
    case KeyType::ed25519:
      return EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  }
  return nullptr;
}

// The digest to sign certificates with: SHA-256, or none for Ed25519, which hashes by itself.
inline const EVP_MD* signing_digest(EVP_PKEY* key) {
  return EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
}

// "ECDSA P-256", "RSA 2048", "Ed25519": a public key as a person would name it.
inline std::string key_type_name(EVP_PKEY* key) {
  if (key == nullptr) return {};
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_EC: {
      char group[64] = {};
      std::size_t len = 0;
      EVP_PKEY_get_group_name(key, group, sizeof group, &len);
      const std::string name = group;
      if (name == "prime256v1") return "ECDSA P-256";
      if (name == "secp384r1") return "ECDSA P-384";
      if (name == "secp521r1") return "ECDSA P-521";
      return "ECDSA " + name;
    }
    case EVP_PKEY_RSA:
      return "RSA " + std::to_string(EVP_PKEY_get_bits(key));
    case EVP_PKEY_ED25519:
      return "Ed25519";
    default:
      return OBJ_nid2sn(EVP_PKEY_get_base_id(key));
  }
}

}  // namespace tlscmp::tls::compat
