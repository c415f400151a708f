// wolfSSL's facts, what it lacks here, and the entry the core finds the
// module by (tls/backends.cpp).

#include <fmt/format.h>
#include <wolfssl/version.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/error-crypt.h>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {

std::string reason(int code) {
  const char* text = wolfSSL_ERR_reason_error_string(static_cast<unsigned long>(code));
  return text != nullptr ? text : fmt::format("wolfSSL error {}", code);
}

void check(int ret, const std::string& what) {
  if (ret == WOLFSSL_SUCCESS) return;
  throw Error(ret < 0 ? fmt::format("{}: {}", what, reason(ret)) : fmt::format("{}: wolfSSL refused", what));
}

// Once, before any other call. No wolfSSL_Cleanup at exit: a server's
// threads may still be in the library while the process ends.
WolfsslBackend::WolfsslBackend() {
  wolfSSL_Init();
}

std::string WolfsslBackend::library_version() const {
  return fmt::format("wolfSSL {}", wolfSSL_lib_version());
}

std::string WolfsslBackend::header_version() const {
  return fmt::format("wolfSSL {}", LIBWOLFSSL_VERSION_STRING);
}

namespace {

// wolfCrypt's fixed-point ECC cache (FP_ECC in Debian's build) is each
// thread's own and lives until wc_ecc_fp_free in that thread: without it,
// every server thread that made a handshake would leave its cache behind
// (some megabytes) when it ends.
struct ThreadCache {
  ~ThreadCache() {
#ifdef FP_ECC
    wc_ecc_fp_free();
#endif
  }
};

}  // namespace

void on_this_thread() {
  thread_local const ThreadCache cache;
  (void)cache;
}

const WolfsslBackend& wolfssl_backend() {
  static const WolfsslBackend backend;
  return backend;
}

}  // namespace tlscmp::tls::wolfssl

// The entry the core finds a backend by (tls/backends.cpp).
extern "C" const tlscmp::tls::Backend* tlscmp_tls_backend_v1() {
  return &tlscmp::tls::wolfssl::wolfssl_backend();
}
