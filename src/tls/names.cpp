// What tls/ names and reads without a TLS library: the key types' names,
// a server certificate's names, and whether the kernel offers kTLS. Built
// once, in the core, not with each library (docs/development.md, "Several
// TLS libraries in one process").

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "error.hpp"
#include "tls/backend.hpp"
#include "tls/context.hpp"
#include "tls/identity.hpp"
#include "tls/speed.hpp"
#include "transport/socket.hpp"

namespace tlscmp::tls {
namespace {

// A DNS name for a certificate: letters, digits, '-', '.' (and '*' for a
// wildcard label), labels of 1..63 characters, 253 characters in all.
bool is_dns_name(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t label = 0;
  for (char c : host) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '*' || c == '_';
    if (!ok || ++label > 63) return false;
  }
  return label > 0;
}

// The form two spellings of one name share: an IP address as inet_ntop
// writes it (::0001 is ::1), a DNS name in lower case.
std::string canonical_name(const std::string& host) {
  unsigned char address[sizeof(in6_addr)] = {};
  char text[INET6_ADDRSTRLEN] = {};
  for (const int family : {AF_INET, AF_INET6}) {
    if (::inet_pton(family, host.c_str(), address) == 1 &&
        ::inet_ntop(family, address, text, sizeof text) != nullptr)
      return text;
  }
  std::string lower = host;
  for (char& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

}  // namespace

const char* to_string(KeyType type) {
  switch (type) {
    case KeyType::rsa_2048:
      return "rsa-2048";
    case KeyType::rsa_3072:
      return "rsa-3072";
    case KeyType::rsa_4096:
      return "rsa-4096";
    case KeyType::ecdsa_p256:
      return "ecdsa-p256";
    case KeyType::ecdsa_p384:
      return "ecdsa-p384";
    case KeyType::ed25519:
      return "ed25519";
  }
  return "?";
}

std::vector<KeyType> all_key_types() {
  return {KeyType::rsa_2048,   KeyType::rsa_3072,   KeyType::rsa_4096,
          KeyType::ecdsa_p256, KeyType::ecdsa_p384, KeyType::ed25519};
}

std::optional<KeyType> parse_key_type(const std::string& text) {
  for (KeyType type : all_key_types()) {
    if (text == to_string(type)) return type;
  }
  return std::nullopt;
}

std::optional<KeyType> key_type_of_description(const std::string& description) {
  static const std::pair<const char*, KeyType> kNames[] = {
      {"RSA 2048", KeyType::rsa_2048},      {"RSA 3072", KeyType::rsa_3072},
      {"RSA 4096", KeyType::rsa_4096},      {"ECDSA P-256", KeyType::ecdsa_p256},
      {"ECDSA P-384", KeyType::ecdsa_p384}, {"Ed25519", KeyType::ed25519}};
  for (const auto& [name, type] : kNames) {
    if (description == name) return type;
  }
  return std::nullopt;
}

std::vector<std::string> server_certificate_names(const std::vector<std::string>& extra_hosts) {
  std::vector<std::string> names{"localhost", "127.0.0.1", "::1"};
  std::vector<std::string> seen{"localhost", "127.0.0.1", "::1"};
  for (const std::string& host : extra_hosts) {
    if (!is_ip_literal(host) && !is_dns_name(host))
      throw UsageError(fmt::format("--host '{}' is neither a DNS name nor an IP address", host));
    std::string canonical = canonical_name(host);
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) continue;
    seen.push_back(std::move(canonical));
    names.push_back(host);
  }
  return names;
}

bool kernel_has_tls_ulp(std::string& available) {
  std::ifstream in("/proc/sys/net/ipv4/tcp_available_ulp");
  std::getline(in, available);
  std::istringstream words(available);
  for (std::string w; words >> w;) {
    if (w == "tls") return true;
  }
  return false;
}

// The key exchange groups tlscmp knows by name, in the order its tables show
// them: classic elliptic curves, the hybrid and pure ML-KEM groups of
// OpenSSL 3.5 (and newer BoringSSL), BoringSSL's earlier Kyber draft, and
// the finite-field groups. Which of them a library has, it is asked.
std::vector<std::string> known_groups() {
  return {"X25519",
          "P-256",
          "P-384",
          "P-521",
          "X448",
          "X25519MLKEM768",
          "SecP256r1MLKEM768",
          "SecP384r1MLKEM1024",
          "MLKEM512",
          "MLKEM768",
          "MLKEM1024",
          "X25519Kyber768Draft00",
          "ffdhe2048",
          "ffdhe3072",
          "ffdhe4096",
          "ffdhe6144",
          "ffdhe8192"};
}

std::vector<SpeedSuite> speed_suites(KeyType key_type) {
  const bool rsa =
      key_type == KeyType::rsa_2048 || key_type == KeyType::rsa_3072 || key_type == KeyType::rsa_4096;
  const std::string kx = rsa ? "ECDHE-RSA-" : "ECDHE-ECDSA-";
  return {
      {"TLS_AES_128_GCM_SHA256", "1.3", "AES-128-GCM"},
      {"TLS_AES_256_GCM_SHA384", "1.3", "AES-256-GCM"},
      {"TLS_CHACHA20_POLY1305_SHA256", "1.3", "ChaCha20-Poly1305"},
      {kx + "AES128-GCM-SHA256", "1.2", "AES-128-GCM"},
      {kx + "AES256-GCM-SHA384", "1.2", "AES-256-GCM"},
      {kx + "CHACHA20-POLY1305", "1.2", "ChaCha20-Poly1305"},
  };
}

std::vector<SpeedSuite> all_speed_suites() {
  std::vector<SpeedSuite> all = speed_suites(KeyType::ecdsa_p256);
  for (SpeedSuite& suite : speed_suites(KeyType::rsa_2048)) {
    if (suite.version != "1.3") all.push_back(std::move(suite));  // TLS 1.3 suites name no key type
  }
  return all;
}

std::optional<SpeedSuite> find_speed_suite(const std::string& name) {
  for (SpeedSuite& suite : all_speed_suites()) {
    if (suite.name == name) return suite;
  }
  return std::nullopt;
}

namespace {

struct KeptCertificates {
  std::mutex mutex;
  std::map<KeyType, CertificateSet> sets;
};
KeptCertificates& kept() {
  static KeptCertificates sets;
  return sets;
}

}  // namespace

void keep_certificates(KeyType key_type, const CertificateSet& set) {
  std::lock_guard lock(kept().mutex);
  kept().sets.emplace(key_type, set);
}

const CertificateSet& kept_certificates(KeyType key_type, const Backend& maker) {
  KeptCertificates& k = kept();
  std::lock_guard lock(k.mutex);
  auto it = k.sets.find(key_type);
  if (it == k.sets.end())
    it = k.sets.emplace(key_type, maker.generate_certificates({}, 1, key_type, std::nullopt)).first;
  return it->second;
}

std::vector<std::uint8_t> record_aad(bool tls13, std::size_t sealed, std::size_t plain) {
  const auto high = [](std::size_t n) { return static_cast<std::uint8_t>(n >> 8); };
  const auto low = [](std::size_t n) { return static_cast<std::uint8_t>(n); };
  if (tls13) return {0x17, 0x03, 0x03, high(sealed), low(sealed)};
  return {0, 0, 0, 0, 0, 0, 0, 1, 0x17, 0x03, 0x03, high(plain), low(plain)};
}

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string verify_failure_text(VerifyFailure failure, const std::string& trust) {
  switch (failure) {
    case VerifyFailure::expired:
      return "the server's certificate has expired: the server needs a new one";
    case VerifyFailure::not_yet_valid:
      return "the server's certificate is not valid yet: check the clocks of both hosts";
    case VerifyFailure::untrusted:
      return fmt::format("the server's chain does not lead to {}", trust.empty() ? "a trusted CA" : trust);
    case VerifyFailure::name_mismatch:
      return "the server's certificate does not name the host asked for";
    default:
      return {};
  }
}

}  // namespace tlscmp::tls
