// What tlscmp's words are in GnuTLS's: groups, suites, versions, as a
// priority string (gnutls_priority_init's syntax).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>
#include <string_view>

#include "error.hpp"
#include "tls/gnutls/gnutls.hpp"

namespace tlscmp::tls::gnutls {
namespace {

struct GroupName {
  const char* tlscmp;
  const char* gnutls;  // gnutls_group_get_id's, and the priority keyword after GROUP-
};
constexpr GroupName kGroups[] = {
    {"X25519", "X25519"},
    {"X448", "X448"},
    {"P-256", "SECP256R1"},
    {"P-384", "SECP384R1"},
    {"P-521", "SECP521R1"},
    {"ffdhe2048", "FFDHE2048"},
    {"ffdhe3072", "FFDHE3072"},
    {"ffdhe4096", "FFDHE4096"},
    {"ffdhe6144", "FFDHE6144"},
    {"ffdhe8192", "FFDHE8192"},
    {"X25519MLKEM768", "X25519-MLKEM768"},
};

// A suite tlscmp names as OpenSSL does, in GnuTLS's terms.
struct SuiteName {
  const char* openssl;
  const char* gnutls;   // gnutls_ciphersuite_get's name
  const char* version;  // "1.3" or "1.2"
  const char* cipher;   // the priority keyword after +
  const char* kx;       // TLS 1.2: the key exchange keyword; "" for TLS 1.3
};
constexpr SuiteName kSuites[] = {
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "1.3", "AES-128-GCM", ""},
    {"TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", "1.3", "AES-256-GCM", ""},
    {"TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", "1.3", "CHACHA20-POLY1305", ""},
    {"ECDHE-ECDSA-AES128-GCM-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "1.2", "AES-128-GCM",
     "ECDHE-ECDSA"},
    {"ECDHE-ECDSA-AES256-GCM-SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "1.2", "AES-256-GCM",
     "ECDHE-ECDSA"},
    {"ECDHE-ECDSA-CHACHA20-POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "1.2",
     "CHACHA20-POLY1305", "ECDHE-ECDSA"},
    {"ECDHE-RSA-AES128-GCM-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "1.2", "AES-128-GCM",
     "ECDHE-RSA"},
    {"ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "1.2", "AES-256-GCM",
     "ECDHE-RSA"},
    {"ECDHE-RSA-CHACHA20-POLY1305", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "1.2", "CHACHA20-POLY1305",
     "ECDHE-RSA"},
};

const SuiteName* find_suite(std::string_view openssl_name) {
  for (const SuiteName& s : kSuites) {
    if (openssl_name == s.openssl) return &s;
  }
  return nullptr;
}

// The ciphers and key exchanges of a --cipher setting (colon-separated
// names), all of one TLS version; throws naming one GnuTLS's backend lacks.
std::string suites_priority(const std::string& cipher, std::string& version) {
  std::string ciphers;
  std::string kxs;
  std::istringstream names(cipher);
  for (std::string name; std::getline(names, name, ':');) {
    const SuiteName* suite = find_suite(name);
    if (suite == nullptr) {
      throw Error(
          fmt::format("--cipher {}: GnuTLS (tlscmp's gnutls backend) takes the TLS 1.3 suites and the "
                      "TLS 1.2 ECDHE AEAD suites by OpenSSL's names (ECDHE-ECDSA-AES128-GCM-SHA256 ...), "
                      "not {}",
                      cipher, name));
    }
    if (!version.empty() && version != suite->version)
      throw Error(
          fmt::format("--cipher {}: TLS 1.2 and TLS 1.3 suites together; give one version's", cipher));
    version = suite->version;
    ciphers += fmt::format(":+{}", suite->cipher);
    if (*suite->kx != '\0') kxs += fmt::format(":+{}", suite->kx);
  }
  return fmt::format(":-CIPHER-ALL{}:-MAC-ALL:+AEAD{}", ciphers, kxs.empty() ? "" : ":-KX-ALL" + kxs);
}

}  // namespace

std::string group_priority(const std::string& tlscmp_name) {
  for (const GroupName& g : kGroups) {
    if (tlscmp_name == g.tlscmp)
      return gnutls_group_get_id(g.gnutls) != GNUTLS_GROUP_INVALID ? std::string("GROUP-") + g.gnutls : "";
  }
  return {};
}

std::string group_name(gnutls_group_t group) {
  const char* name = gnutls_group_get_name(group);
  if (name == nullptr) return {};
  for (const GroupName& g : kGroups) {
    if (std::string_view(name) == g.gnutls) return g.tlscmp;
  }
  return name;
}

std::vector<std::string> gnutls_groups() {
  std::vector<std::string> out;
  for (const std::string& group : known_groups()) {
    if (!group_priority(group).empty()) out.push_back(group);
  }
  return out;
}

std::string suite_name(gnutls_session_t session) {
  const char* name = gnutls_ciphersuite_get(session);
  if (name == nullptr) return {};
  for (const SuiteName& s : kSuites) {
    if (std::string_view(name) == s.gnutls) return s.openssl;
  }
  return name;
}

std::string priority_of(const Policy& policy, bool server) {
  std::string version = policy.version;
  if (!version.empty() && version != "1.2" && version != "1.3")
    throw Error(fmt::format("unknown TLS version '{}': use 1.2 or 1.3", version));
  // Forward secrecy and AEAD alone, as tlscmp's OpenSSL servers offer.
  std::string priority = "NORMAL:-VERS-ALL";
  std::string suites;
  if (!policy.cipher.empty()) {
    std::string suite_version;
    suites = suites_priority(policy.cipher, suite_version);
    if (!version.empty() && version != suite_version)
      throw Error(fmt::format("--cipher {} is for TLS {}, not --tls-version {}", policy.cipher, suite_version,
                              version));
    version = suite_version;
  } else if (server) {
    suites = ":-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-MAC-ALL:+AEAD";
  }
  priority += version == "1.2"   ? ":+VERS-TLS1.2"
              : version == "1.3" ? ":+VERS-TLS1.3"
                                 : ":+VERS-TLS1.3:+VERS-TLS1.2";
  priority += suites;
  if (!policy.groups.empty()) {
    std::string groups;
    std::istringstream names(policy.groups);
    for (std::string name; std::getline(names, name, ':');) {
      const std::string keyword = group_priority(name);
      if (keyword.empty()) {
        throw Error(fmt::format("--groups {}: {} has no key exchange group named {}; it has {}",
                                policy.groups, gnutls_backend().library_version(), name,
                                fmt::join(gnutls_groups(), ", ")));
      }
      groups += ":+" + keyword;
    }
    priority += ":-GROUP-ALL" + groups;
  }
  if (policy.ktls) {
    throw Error(
        "--ktls: GnuTLS turns kernel TLS on in its system configuration (/etc/gnutls/config, ktls = true), "
        "not "
        "per connection; leave --ktls out for gnutls");
  }
  return priority;
}

}  // namespace tlscmp::tls::gnutls
