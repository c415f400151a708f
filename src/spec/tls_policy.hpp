#pragma once

// What one side offers of TLS, as plain values: part of what a client asks
// for (and its result records), and of a server's settings. tls/ reads it
// (tls::Policy) to set up the library; nothing here knows the library.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tlscmp::spec {

// What can name a TLS library, as --tls-lib names its backends ("openssl"):
// 1 to kLongestLibraryName bytes of lower-case letters, digits and '-'.
// --server-tls-lib, a test request's library and the name a connection sends
// before its ClientHello are held to it.
inline constexpr std::size_t kLongestLibraryName = 32;
inline bool is_library_name(std::string_view text) {
  return !text.empty() && text.size() <= kLongestLibraryName &&
         text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string_view::npos;
}

// Each empty field means the library's default.
struct TlsPolicy {
  std::string version;  // "", "1.2" or "1.3" (only that version)
  std::string cipher;   // TLS 1.3 suite names (TLS_*) or a TLS 1.2 cipher list
  std::string groups;   // key exchange groups, colon-separated: "X25519:P-256"
  bool ktls = false;    // ask the library to hand the record layer to the kernel
  // Client: --tls-lib's libraries as it names them ("openssl"), in the
  // order of each round's TLS variants; the first is the process's default.
  // Empty: the default alone, and the server's own default (none named).
  std::vector<std::string> libraries;
  std::string server_library;  // client: --server-tls-lib; "": each variant's own
};

}  // namespace tlscmp::spec
