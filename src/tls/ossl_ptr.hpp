#pragma once

// RAII owners for the TLS library's objects and error helpers, used inside src/tls/ only.

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

#include "error.hpp"
#include "tls/ssl_compat.hpp"

namespace tlscmp::tls {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};

using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;

inline BioPtr memory_bio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// The reason of the first error on the thread's queue ("" if none); empties the queue.
inline std::string take_error_reason() {
  const auto err = ERR_get_error();
  ERR_clear_error();
  if (err == 0) return {};
  return compat::reason_text(err);
}

// Throws tlscmp::Error: "<what>: <the library's reason>".
[[noreturn]] inline void throw_tls_error(const std::string& what) {
  const std::string reason = take_error_reason();
  throw Error(reason.empty() ? what : what + ": " + reason);
}

// A PEM passphrase callback that never prompts: an encrypted key fails to load.
inline int no_passphrase(char*, int, int, void*) {
  return -1;
}

}  // namespace tlscmp::tls
