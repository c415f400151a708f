#pragma once

// The only file that knows which TLS library tlscmp is built against:
// OpenSSL 3, or BoringSSL (OPENSSL_IS_BORINGSSL, defined by its headers).
// Everything else in src/tls/ uses the API the two share, and calls these
// helpers where they differ.

#include <arpa/inet.h>
#ifdef OPENSSL_IS_BORINGSSL
#include <openssl/aead.h>
#endif
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "tls/identity.hpp"

namespace tlscmp::tls::compat {

#ifdef OPENSSL_IS_BORINGSSL
inline constexpr bool kBoringSsl = true;
#else
inline constexpr bool kBoringSsl = false;
#endif

// A DTLS server needs DTLSv1_listen and the cookie callbacks (stateless
// HelloVerifyRequest), which BoringSSL does not have.
#ifdef OPENSSL_IS_BORINGSSL
#define TLSCMP_HAVE_DTLS 0
#else
#define TLSCMP_HAVE_DTLS 1
#endif

inline constexpr bool kHaveDtls = TLSCMP_HAVE_DTLS != 0;

// QUIC, client and server (SSL_new_listener, SSL_poll that blocks): OpenSSL
// 3.5 or newer; BoringSSL's QUIC is an API for a QUIC stack of one's own.
// tls/quic.cpp is built on it alone, and has stubs that refuse otherwise.
#if !defined(OPENSSL_IS_BORINGSSL) && OPENSSL_VERSION_NUMBER >= 0x30500000L && !defined(OPENSSL_NO_QUIC)
#define TLSCMP_HAVE_QUIC 1
#else
#define TLSCMP_HAVE_QUIC 0
#endif

// "OpenSSL 3.0.19 27 Jan 2026", or "BoringSSL (API 17)".
inline std::string library_version() {
#ifdef OPENSSL_IS_BORINGSSL
  return "BoringSSL (API " + std::to_string(BORINGSSL_API_VERSION) + ")";
#else
  return OpenSSL_version(OPENSSL_VERSION);
#endif
}

// The headers this build was compiled against, where they may differ from
// the library loaded at run time: "OpenSSL 3.0.19 27 Jan 2026". BoringSSL is
// linked by path and has one version: "".
inline std::string header_version() {
#ifdef OPENSSL_IS_BORINGSSL
  return {};
#else
  return OPENSSL_VERSION_TEXT;
#endif
}

// The reason of an error code, in OpenSSL's words ("certificate verify
// failed"); BoringSSL's reasons (CERTIFICATE_VERIFY_FAILED) are turned into
// the same form, so that messages read the same with either library.
inline std::string reason_text(decltype(ERR_get_error()) err) {
  const char* reason = ERR_reason_error_string(err);
  if (reason == nullptr) return "unknown TLS library error";
  std::string text = reason;
  if (kBoringSsl) {
    for (char& c : text)
      c = c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text;
}

// Read-ahead lets the library pull as many records as fit into one buffer of
// `bytes` with one read(2), instead of one record header and body at a time.
// BoringSSL sizes its read buffer itself and has no such setting.
inline void set_read_ahead([[maybe_unused]] SSL_CTX* ctx, [[maybe_unused]] std::size_t bytes) {
#ifndef OPENSSL_IS_BORINGSSL
  if (bytes == 0) return;
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, bytes);
#endif
}

// One connection back to the library's own buffers: no read-ahead, the
// default read buffer (what a server holding many connections runs with).
inline void use_library_buffers([[maybe_unused]] SSL* ssl) {
#ifndef OPENSSL_IS_BORINGSSL
  SSL_set_read_ahead(ssl, 0);
  SSL_set_default_read_buffer_len(ssl, 0);
#endif
}

// True when the error on the queue means the peer closed the TCP connection
// without sending close_notify. OpenSSL 3 reports it as SSL_ERROR_SSL with
// this reason; BoringSSL as SSL_ERROR_SYSCALL with an empty queue, which the
// caller handles.
inline bool is_unexpected_eof([[maybe_unused]] unsigned long err) {
#ifdef OPENSSL_IS_BORINGSSL
  return false;
#else
  return ERR_GET_LIB(err) == ERR_LIB_SSL && ERR_GET_REASON(err) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
#endif
}

// The verdict of the peer's certificate check: X509_V_OK where it passed or
// never ran. BoringSSL reports X509_V_ERR_INVALID_CALL until a certificate was
// checked (a handshake that failed before one arrived); OpenSSL reports OK.
inline long verify_result(const SSL* ssl) {
  const long verify = SSL_get_verify_result(ssl);
  return verify == X509_V_ERR_INVALID_CALL ? X509_V_OK : verify;
}

// Sends `host` as Server Name Indication.
// The server's callback for the name a client asks for (SNI).
inline void set_servername_callback(SSL_CTX* ctx, int (*callback)(SSL*, int*, void*), void* arg) {
#ifdef OPENSSL_IS_BORINGSSL
  SSL_CTX_set_tlsext_servername_callback(ctx, callback);
  SSL_CTX_set_tlsext_servername_arg(ctx, arg);
#else
  // OpenSSL's calls are macros with C casts.
  SSL_CTX_callback_ctrl(ctx, SSL_CTRL_SET_TLSEXT_SERVERNAME_CB, reinterpret_cast<void (*)(void)>(callback));
  SSL_CTX_ctrl(ctx, SSL_CTRL_SET_TLSEXT_SERVERNAME_ARG, 0, arg);
#endif
}

inline void set_server_name(SSL* ssl, const char* host) {
#ifdef OPENSSL_IS_BORINGSSL
  SSL_set_tlsext_host_name(ssl, host);
#else
  // OpenSSL's call is a macro with a C cast.
  SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(host));
#endif
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
#ifdef OPENSSL_IS_BORINGSSL
  const uint16_t id = SSL_get_curve_id(ssl);
  const char* name = id != 0 ? SSL_get_curve_name(id) : nullptr;
  return name != nullptr ? friendly_group_name(name) : std::string{};
#else
  const auto nid = static_cast<int>(SSL_get_negotiated_group(ssl));
  if (nid == 0 || nid == NID_undef) return {};
  const char* name = SSL_group_to_name(ssl, nid);
  return name != nullptr ? friendly_group_name(name) : std::string{};
#endif
}

// TLS 1.3 suites, colon-separated. Throws tlscmp::Error if none is known, or
// (BoringSSL) because the library picks TLS 1.3 suites itself.
inline void set_tls13_suites([[maybe_unused]] SSL_CTX* ctx, const std::string& suites) {
#ifdef OPENSSL_IS_BORINGSSL
  throw Error("BoringSSL chooses TLS 1.3 suites itself; '" + suites + "' can be chosen only with OpenSSL");
#else
  if (SSL_CTX_set_ciphersuites(ctx, suites.c_str()) != 1) {
    ERR_clear_error();
    throw Error("unknown TLS 1.3 cipher suite '" + suites + "'");
  }
#endif
}

// The same for one connection, as a server's early callback sets it
// (on_client_hello). BoringSSL has no such choice; false there.
inline bool set_tls13_suites([[maybe_unused]] SSL* ssl, [[maybe_unused]] const std::string& suites) {
#ifdef OPENSSL_IS_BORINGSSL
  return false;
#else
  return SSL_set_ciphersuites(ssl, suites.c_str()) == 1;
#endif
}

// A server context's early callback: `Callback` sees each ClientHello with
// its ALPN extension (the raw bytes, empty where there is none) and `arg`,
// before the library chooses a version or a suite, so that what it sets on
// the connection (a cipher list) still counts. OpenSSL's ClientHello
// callback and BoringSSL's select-certificate callback, which has no
// argument of its own: `arg` rides in the context's ex_data slot 0.
using ClientHelloCallback = void (*)(SSL* ssl, const unsigned char* alpn, std::size_t alpn_bytes, void* arg);
template <ClientHelloCallback Callback>
inline void on_client_hello(SSL_CTX* ctx, void* arg) {
#ifdef OPENSSL_IS_BORINGSSL
  SSL_CTX_set_ex_data(ctx, 0, arg);
  SSL_CTX_set_select_certificate_cb(ctx, [](const SSL_CLIENT_HELLO* hello) -> ssl_select_cert_result_t {
    const std::uint8_t* alpn = nullptr;
    std::size_t bytes = 0;
    if (SSL_early_callback_ctx_extension_get(hello, TLSEXT_TYPE_application_layer_protocol_negotiation, &alpn,
                                             &bytes) != 1) {
      alpn = nullptr;
      bytes = 0;
    }
    Callback(hello->ssl, alpn, bytes, SSL_CTX_get_ex_data(SSL_get_SSL_CTX(hello->ssl), 0));
    return ssl_select_cert_success;
  });
#else
  SSL_CTX_set_client_hello_cb(
      ctx,
      [](SSL* ssl, int*, void* data) -> int {
        const unsigned char* alpn = nullptr;
        std::size_t bytes = 0;
        if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation, &alpn,
                                      &bytes) != 1) {
          alpn = nullptr;
          bytes = 0;
        }
        Callback(ssl, alpn, bytes, data);
        return SSL_CLIENT_HELLO_SUCCESS;
      },
      arg);
#endif
}

// Key exchange groups, colon-separated ("X25519:P-256"); false if one is unknown.
inline bool set_groups(SSL_CTX* ctx, const std::string& groups) {
#ifdef OPENSSL_IS_BORINGSSL
  return SSL_CTX_set1_curves_list(ctx, groups.c_str()) == 1;
#else
  return SSL_CTX_set1_groups_list(ctx, groups.c_str()) == 1;
#endif
}

// Whether a context of this library accepts `group` by that name.
inline bool has_group(const char* group) {
  const std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  const bool ok = ctx != nullptr && set_groups(ctx.get(), group);
  ERR_clear_error();
  return ok;
}

// Lets the peer's certificate be Ed25519: OpenSSL accepts it by default,
// BoringSSL only when its list of signature algorithms says so.
inline void accept_ed25519([[maybe_unused]] SSL_CTX* ctx) {
#ifdef OPENSSL_IS_BORINGSSL
  static constexpr uint16_t kAlgorithms[] = {
      SSL_SIGN_ECDSA_SECP256R1_SHA256, SSL_SIGN_RSA_PSS_RSAE_SHA256, SSL_SIGN_RSA_PKCS1_SHA256,
      SSL_SIGN_ECDSA_SECP384R1_SHA384, SSL_SIGN_RSA_PSS_RSAE_SHA384, SSL_SIGN_RSA_PKCS1_SHA384,
      SSL_SIGN_RSA_PSS_RSAE_SHA512,    SSL_SIGN_RSA_PKCS1_SHA512,    SSL_SIGN_ED25519};
  SSL_CTX_set_verify_algorithm_prefs(ctx, kAlgorithms, sizeof kAlgorithms / sizeof kAlgorithms[0]);
#endif
}

// Asks for kernel TLS: the library hands the record layer to the kernel after
// the handshake where the kernel can take it, and stays in user space where
// not. BoringSSL has no kTLS: it always stays in user space.
inline void enable_ktls([[maybe_unused]] SSL_CTX* ctx) {
#ifndef OPENSSL_IS_BORINGSSL
  SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
#endif
}

// Whether the kernel took over sending and receiving on this connection.
inline bool ktls_send([[maybe_unused]] SSL* ssl) {
#ifdef OPENSSL_IS_BORINGSSL
  return false;
#else
  return BIO_get_ktls_send(SSL_get_wbio(ssl)) != 0;
#endif
}
inline bool ktls_receive([[maybe_unused]] SSL* ssl) {
#ifdef OPENSSL_IS_BORINGSSL
  return false;
#else
  return BIO_get_ktls_recv(SSL_get_rbio(ssl)) != 0;
#endif
}

// The protocol versions a context allows (TLS1_2_VERSION, TLS1_3_VERSION).
inline void set_version_range(SSL_CTX* ctx, int low, int high) {
#ifdef OPENSSL_IS_BORINGSSL
  SSL_CTX_set_min_proto_version(ctx, static_cast<uint16_t>(low));
  SSL_CTX_set_max_proto_version(ctx, static_cast<uint16_t>(high));
#else
  SSL_CTX_set_min_proto_version(ctx, low);
  SSL_CTX_set_max_proto_version(ctx, high);
#endif
}
// 0 from the library means "the highest it has".
inline int min_version(SSL_CTX* ctx) {
  const auto v = static_cast<int>(SSL_CTX_get_min_proto_version(ctx));
  return v != 0 ? v : TLS1_2_VERSION;
}
inline int max_version(SSL_CTX* ctx) {
  const auto v = static_cast<int>(SSL_CTX_get_max_proto_version(ctx));
  return v != 0 ? v : TLS1_3_VERSION;
}

// The names of the cipher suites a context would accept, in preference order.
// BoringSSL's list holds TLS 1.2 suites alone: its TLS 1.3 suites, which
// cannot be chosen, come first.
inline std::vector<std::string> cipher_names(SSL_CTX* ctx) {
  std::vector<std::string> names;
  if (kBoringSsl)
    names = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"};
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx);
  const auto count = ciphers != nullptr ? static_cast<std::size_t>(sk_SSL_CIPHER_num(ciphers)) : 0;
  for (std::size_t i = 0; i < count; ++i) {
    names.emplace_back(SSL_CIPHER_get_name(
        sk_SSL_CIPHER_value(ciphers, static_cast<decltype(sk_SSL_CIPHER_num(ciphers))>(i))));
  }
  return names;
}

// Caps the plaintext of each record sent.
inline void set_max_send_fragment(SSL* ssl, std::size_t bytes) {
#ifdef OPENSSL_IS_BORINGSSL
  SSL_set_max_send_fragment(ssl, bytes);
#else
  SSL_set_max_send_fragment(ssl, static_cast<long>(bytes));
#endif
}

// Owners of objects the two libraries hand out differently.
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using OwnedX509 = std::unique_ptr<X509, X509Free>;
using OwnedPkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

// The peer's certificate, or nullptr.
inline OwnedX509 peer_certificate(SSL* ssl) {
#ifdef OPENSSL_IS_BORINGSSL
  return OwnedX509(SSL_get_peer_certificate(ssl));
#else
  return OwnedX509(SSL_get1_peer_certificate(ssl));
#endif
}

inline int key_id(const EVP_PKEY* key) {
#ifdef OPENSSL_IS_BORINGSSL
  return EVP_PKEY_id(key);
#else
  return EVP_PKEY_get_base_id(key);
#endif
}

// A fresh private key of `type` (the caller owns it), or nullptr. Through
// EVP_PKEY_CTX, which both libraries have.
inline EVP_PKEY* generate_key(KeyType type) {
  int id = EVP_PKEY_EC;
  if (type == KeyType::rsa_2048 || type == KeyType::rsa_3072 || type == KeyType::rsa_4096) id = EVP_PKEY_RSA;
  if (type == KeyType::ed25519) id = EVP_PKEY_ED25519;
  std::unique_ptr<EVP_PKEY_CTX, void (*)(EVP_PKEY_CTX*)> ctx(EVP_PKEY_CTX_new_id(id, nullptr),
                                                             EVP_PKEY_CTX_free);
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1) return nullptr;
  int ok = 1;
  switch (type) {
    case KeyType::rsa_2048:
      ok = EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), 2048);
      break;
    case KeyType::rsa_3072:
      ok = EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), 3072);
      break;
    case KeyType::rsa_4096:
      ok = EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), 4096);
      break;
    case KeyType::ecdsa_p256:
      ok = EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx.get(), NID_X9_62_prime256v1);
      break;
    case KeyType::ecdsa_p384:
      ok = EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx.get(), NID_secp384r1);
      break;
    case KeyType::ed25519:
      break;
  }
  EVP_PKEY* key = nullptr;
  if (ok != 1 || EVP_PKEY_keygen(ctx.get(), &key) != 1) return nullptr;
  return key;
}

// The digest to sign certificates with: SHA-256, or none for Ed25519, which hashes by itself.
inline const EVP_MD* signing_digest(EVP_PKEY* key) {
  return key_id(key) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
}

// "ECDSA P-256", "RSA 2048", "Ed25519": a public key as a person would name it.
inline std::string key_type_name(EVP_PKEY* key) {
  if (key == nullptr) return {};
  switch (key_id(key)) {
    case EVP_PKEY_EC: {
#ifdef OPENSSL_IS_BORINGSSL
      const EC_KEY* ec = EVP_PKEY_get0_EC_KEY(key);
      const int nid = ec != nullptr ? EC_GROUP_get_curve_name(EC_KEY_get0_group(ec)) : NID_undef;
      const std::string name = nid != NID_undef ? OBJ_nid2sn(nid) : "?";
#else
      char group[64] = {};
      std::size_t len = 0;
      EVP_PKEY_get_group_name(key, group, sizeof group, &len);
      const std::string name = group;
#endif
      if (name == "prime256v1" || name == "P-256") return "ECDSA P-256";
      if (name == "secp384r1" || name == "P-384") return "ECDSA P-384";
      if (name == "secp521r1" || name == "P-521") return "ECDSA P-521";
      return "ECDSA " + name;
    }
    case EVP_PKEY_RSA:
      return "RSA " + std::to_string(EVP_PKEY_bits(key));
    case EVP_PKEY_ED25519:
      return "Ed25519";
    default:
      return OBJ_nid2sn(key_id(key));
  }
}

// A distinguished name on one line, "O=tlscmp, CN=tlscmp CA".
inline std::string name_text(const X509_NAME* name) {
  if (name == nullptr) return {};
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_ONELINE & ~ASN1_STRFLGS_ESC_MSB) < 0) return {};
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return len > 0 ? std::string(data, static_cast<std::size_t>(len)) : std::string{};
}

// A certificate's time: "2026-11-30 09:51:00Z" (OpenSSL), "Nov 30 09:51:00 2026 GMT" (BoringSSL).
inline std::string time_text(const ASN1_TIME* time) {
  if (time == nullptr) return {};
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new(BIO_s_mem()), BIO_free);
#ifdef OPENSSL_IS_BORINGSSL
  if (!bio || ASN1_TIME_print(bio.get(), time) != 1) return {};
#else
  if (!bio || ASN1_TIME_print_ex(bio.get(), time, ASN1_DTFLGS_ISO8601) != 1) return {};
#endif
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return len > 0 ? std::string(data, static_cast<std::size_t>(len)) : std::string{};
}

// A certificate's subjectAltNames, DNS names and IP addresses, as text.
inline std::vector<std::string> subject_alt_names(X509* cert) {
  std::vector<std::string> names;
  auto* list = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (list == nullptr) return names;
  for (std::size_t i = 0; i < static_cast<std::size_t>(sk_GENERAL_NAME_num(list)); ++i) {
    const GENERAL_NAME* name =
        sk_GENERAL_NAME_value(list, static_cast<decltype(sk_GENERAL_NAME_num(list))>(i));
    if (name->type == GEN_DNS) {
      const ASN1_STRING* dns = name->d.dNSName;
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                         static_cast<std::size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      char text[64] = {};
      const int length = ASN1_STRING_length(ip);
      if ((length == 4 || length == 16) &&
          ::inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(ip), text, sizeof text) !=
              nullptr) {
        names.emplace_back(text);
      }
    }
  }
  GENERAL_NAMES_free(list);
  return names;
}

// The key type of a certificate's public key.
inline std::string certificate_key_type(X509* cert) {
  if (cert == nullptr) return {};
  const OwnedPkey key(X509_get_pubkey(cert));  // a new reference in both libraries
  return key_type_name(key.get());
}

// One direction's record protection, called as the library's record layer
// calls its cipher: BoringSSL's EVP_AEAD_CTX (the TLS 1.3 or TLS 1.2
// variant, which insist on rising sequence numbers when sealing), OpenSSL's
// EVP_CIPHER_CTX (a new nonce, the additional data, the payload, the tag).
// `aead` is "AES-128-GCM", "AES-256-GCM" or "ChaCha20-Poly1305".
class RecordAead {
 public:
  static constexpr std::size_t kTagBytes = 16;
  static constexpr std::size_t kNonceBytes = 12;

  RecordAead(const std::string& aead, bool tls13, bool seal) : seal_(seal) {
    const std::size_t key_bytes = aead == "AES-128-GCM" ? 16 : 32;
    const std::vector<std::uint8_t> key(key_bytes, 0x5a);
#ifdef OPENSSL_IS_BORINGSSL
    const EVP_AEAD* method = aead == "ChaCha20-Poly1305" ? EVP_aead_chacha20_poly1305()
                             : key_bytes == 16
                                 ? (tls13 ? EVP_aead_aes_128_gcm_tls13() : EVP_aead_aes_128_gcm_tls12())
                                 : (tls13 ? EVP_aead_aes_256_gcm_tls13() : EVP_aead_aes_256_gcm_tls12());
    ok_ = EVP_AEAD_CTX_init_with_direction(&ctx_, method, key.data(), key.size(), kTagBytes,
                                           seal ? evp_aead_seal : evp_aead_open) == 1;
#else
    (void)tls13;
    const EVP_CIPHER* method = aead == "ChaCha20-Poly1305" ? EVP_chacha20_poly1305()
                               : key_bytes == 16           ? EVP_aes_128_gcm()
                                                           : EVP_aes_256_gcm();
    ctx_ = EVP_CIPHER_CTX_new();
    ok_ = ctx_ != nullptr && EVP_CipherInit_ex(ctx_, method, nullptr, key.data(), nullptr, seal ? 1 : 0) == 1;
#endif
  }
  ~RecordAead() {
#ifdef OPENSSL_IS_BORINGSSL
    EVP_AEAD_CTX_cleanup(&ctx_);
#else
    EVP_CIPHER_CTX_free(ctx_);
#endif
  }
  RecordAead(const RecordAead&) = delete;
  RecordAead& operator=(const RecordAead&) = delete;
  bool ok() const {
    return ok_;
  }

  // Seals `length` bytes of `in` into `out` (length + kTagBytes), or opens
  // `out`'s sealed record into `in`'s place when this direction opens; the
  // nonce is the record's sequence number, the additional data `aad`.
  bool apply(std::uint64_t sequence, const std::uint8_t* aad, std::size_t aad_bytes, std::uint8_t* in,
             std::uint8_t* out, std::size_t length) {
    std::uint8_t nonce[kNonceBytes] = {};
    for (std::size_t i = 0; i < 8; ++i)
      nonce[kNonceBytes - 1 - i] = static_cast<std::uint8_t>(sequence >> (8 * i));
#ifdef OPENSSL_IS_BORINGSSL
    std::size_t done = 0;
    if (seal_) {
      return EVP_AEAD_CTX_seal(&ctx_, out, &done, length + kTagBytes, nonce, kNonceBytes, in, length, aad,
                               aad_bytes) == 1;
    }
    return EVP_AEAD_CTX_open(&ctx_, in, &done, length, nonce, kNonceBytes, out, length + kTagBytes, aad,
                             aad_bytes) == 1;
#else
    int n = 0;
    if (EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, nonce, seal_ ? 1 : 0) != 1) return false;
    if (!seal_ && EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, kTagBytes, out + length) != 1)
      return false;
    if (EVP_CipherUpdate(ctx_, nullptr, &n, aad, static_cast<int>(aad_bytes)) != 1) return false;
    std::uint8_t* to = seal_ ? out : in;
    const std::uint8_t* from = seal_ ? in : out;
    if (EVP_CipherUpdate(ctx_, to, &n, from, static_cast<int>(length)) != 1) return false;
    if (EVP_CipherFinal_ex(ctx_, to + n, &n) != 1) return false;
    return !seal_ || EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, kTagBytes, out + length) == 1;
#endif
  }

 private:
  bool seal_;
  bool ok_ = false;
#ifdef OPENSSL_IS_BORINGSSL
  EVP_AEAD_CTX ctx_{};
#else
  EVP_CIPHER_CTX* ctx_ = nullptr;
#endif
};

}  // namespace tlscmp::tls::compat
