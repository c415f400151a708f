// What tlscmp's words are in wolfSSL's: groups, suites, versions.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>
#include <string_view>

#include "error.hpp"
#include "tls/wolfssl/wolfssl.hpp"

namespace tlscmp::tls::wolfssl {
namespace {

struct GroupName {
  const char* tlscmp;
  const char* wolfssl;  // wolfSSL_get_curve_name's
  int id;               // wolfSSL_CTX_set_groups's
};
constexpr GroupName kGroups[] = {
#ifdef HAVE_CURVE25519
    {"X25519", "X25519", WOLFSSL_ECC_X25519},
#endif
#ifdef HAVE_CURVE448
    {"X448", "X448", WOLFSSL_ECC_X448},
#endif
    {"P-256", "SECP256R1", WOLFSSL_ECC_SECP256R1},
    {"P-384", "SECP384R1", WOLFSSL_ECC_SECP384R1},
    {"P-521", "SECP521R1", WOLFSSL_ECC_SECP521R1},
#ifdef HAVE_FFDHE_2048
    {"ffdhe2048", "FFDHE_2048", WOLFSSL_FFDHE_2048},
#endif
#ifdef HAVE_FFDHE_3072
    {"ffdhe3072", "FFDHE_3072", WOLFSSL_FFDHE_3072},
#endif
#ifdef HAVE_FFDHE_4096
    {"ffdhe4096", "FFDHE_4096", WOLFSSL_FFDHE_4096},
#endif
};

// The TLS 1.3 suites, whose names differ (TLS 1.2's are OpenSSL's in both).
struct SuiteName {
  const char* openssl;
  const char* wolfssl;
};
constexpr SuiteName kTls13Suites[] = {
    {"TLS_AES_128_GCM_SHA256", "TLS13-AES128-GCM-SHA256"},
    {"TLS_AES_256_GCM_SHA384", "TLS13-AES256-GCM-SHA384"},
    {"TLS_CHACHA20_POLY1305_SHA256", "TLS13-CHACHA20-POLY1305-SHA256"},
};

// What tlscmp's OpenSSL servers offer: TLS 1.3, and TLS 1.2 with ECDHE and AEAD.
constexpr const char* kServerSuites =
    "TLS13-AES128-GCM-SHA256:TLS13-AES256-GCM-SHA384:TLS13-CHACHA20-POLY1305-SHA256:"
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
    "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305";

}  // namespace

int group_id(const std::string& tlscmp_name) {
  for (const GroupName& g : kGroups) {
    if (tlscmp_name == g.tlscmp) return g.id;
  }
  return 0;
}

std::string group_name(const char* wolfssl_curve_name) {
  if (wolfssl_curve_name == nullptr) return {};
  for (const GroupName& g : kGroups) {
    if (std::string_view(wolfssl_curve_name) == g.wolfssl) return g.tlscmp;
  }
  return wolfssl_curve_name;
}

std::vector<std::string> wolfssl_groups() {
  std::vector<std::string> out;
  for (const std::string& group : known_groups()) {
    if (group_id(group) != 0) out.push_back(group);
  }
  return out;
}

std::string suite_name(const char* wolfssl_name) {
  if (wolfssl_name == nullptr) return {};
  for (const SuiteName& s : kTls13Suites) {
    if (std::string_view(wolfssl_name) == s.wolfssl) return s.openssl;
  }
  return wolfssl_name;
}

std::string cipher_list_of(const Policy& policy, bool server, std::string& version) {
  version = policy.version;
  if (!version.empty() && version != "1.2" && version != "1.3")
    throw Error(fmt::format("unknown TLS version '{}': use 1.2 or 1.3", version));
  if (policy.ktls) {
    throw Error(
        "--ktls: tlscmp's wolfSSL backend has no kernel TLS (Debian builds wolfSSL without it); leave --ktls "
        "out for wolfssl");
  }
  if (policy.cipher.empty()) return server ? kServerSuites : "";
  std::string list;
  std::string suite_version;
  std::istringstream names(policy.cipher);
  for (std::string name; std::getline(names, name, ':');) {
    std::string wolf = name;
    std::string this_version = "1.2";
    for (const SuiteName& s : kTls13Suites) {
      if (name == s.openssl || name == s.wolfssl) {
        wolf = s.wolfssl;
        this_version = "1.3";
      }
    }
    if (!suite_version.empty() && suite_version != this_version)
      throw Error(
          fmt::format("--cipher {}: TLS 1.2 and TLS 1.3 suites together; give one version's", policy.cipher));
    suite_version = this_version;
    list += (list.empty() ? "" : ":") + wolf;
  }
  if (!version.empty() && version != suite_version)
    throw Error(fmt::format("--cipher {} is for TLS {}, not --tls-version {}", policy.cipher, suite_version,
                            version));
  version = suite_version;
  return list;
}

std::vector<int> groups_of(const Policy& policy) {
  std::vector<int> ids;
  std::istringstream names(policy.groups);
  for (std::string name; std::getline(names, name, ':');) {
    const int id = group_id(name);
    if (id == 0) {
      throw Error(fmt::format("--groups {}: {} has no key exchange group named {}; it has {}", policy.groups,
                              wolfssl_backend().library_version(), name, fmt::join(wolfssl_groups(), ", ")));
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace tlscmp::tls::wolfssl
