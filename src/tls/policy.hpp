#pragma once

// TLS settings as plain values, for configuration structs that must not
// know the TLS library.

#include <string>

#include "spec/tls_policy.hpp"

namespace tlscmp::tls {

// What one side offers; each empty field means the library's default.
using Policy = spec::TlsPolicy;

// How a server lets clients resume sessions: from session tickets (and, for
// TLS 1.2 clients that offer none, its session ID cache); from its session
// cache only (TLS 1.2 session IDs; OpenSSL's TLS 1.3 tickets then name cache
// entries, BoringSSL issues none); or not at all.
enum class Resumption { tickets, ids, none };

// A side's offer in words, for messages that name both sides' offers.
struct Offer {
  std::string versions;              // "TLSv1.2 TLSv1.3"
  std::string ciphers;               // the suites it would accept, colon-separated
  std::string groups;                // the groups it would accept, or "library default"
  std::string certificate_key_type;  // a server's certificate key, "ECDSA P-256"; "" for a client
};

}  // namespace tlscmp::tls
