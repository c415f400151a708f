#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tlscmp::tls {

// A certificate chain and its private key, both PEM-encoded.
struct Identity {
  std::string certificate_chain_pem;  // leaf first
  std::string private_key_pem;
};

// The key types `tlscmp certs --key-type` makes.
enum class KeyType { rsa_2048, rsa_3072, rsa_4096, ecdsa_p256, ecdsa_p384, ed25519 };

// "rsa-2048" ... "ed25519", as the flag takes them.
const char* to_string(KeyType type);
std::optional<KeyType> parse_key_type(const std::string& text);
// The type a certificate's key is of, from its description as a run
// reports it ("ECDSA P-256", "RSA 2048", "Ed25519"); none for another.
std::optional<KeyType> key_type_of_description(const std::string& description);
// Every type, for help texts and loops.
std::vector<KeyType> all_key_types();

// What `tlscmp certs` writes: a CA, a server and a client identity it signed.
struct CertificateSet {
  Identity ca;  // the CA's certificate and private key
  Identity server;
  Identity client;
};

// The names of a server certificate for `extra_hosts`: localhost, 127.0.0.1
// and ::1, then each of `extra_hosts` (DNS names or IP addresses) once, in
// the order given; a name that is there already, in any spelling
// (LOCALHOST, ::0001), is left out. Throws UsageError for what is neither.
std::vector<std::string> server_certificate_names(const std::vector<std::string>& extra_hosts);

// A server certificate whose subjectAltNames are server_certificate_names(extra_hosts), and a client
// certificate, both with keys of `key_type`, valid for `validity_days`,
// signed by `ca` (as load_identity read it), or by a fresh CA with a key of
// `key_type` when there is none.
CertificateSet generate_certificates(const std::vector<std::string>& extra_hosts, int validity_days,
                                     KeyType key_type = KeyType::ecdsa_p256,
                                     const std::optional<Identity>& ca = std::nullopt);

// Reads a PEM certificate chain and a PEM private key from files and checks
// that they belong together. Throws tlscmp::Error naming the file and cause.
Identity load_identity(const std::string& cert_file, const std::string& key_file);
// A file's text, for a backend's load_identity; throws tlscmp::Error
// "cannot read `what` 'path': why".
std::string read_text_file(const std::string& path, const char* what);

// "ECDSA P-256", "RSA 2048", "Ed25519" for the leaf certificate of `chain_pem`.
std::string certificate_key_type(const std::string& chain_pem);

// What the server says of its certificate at start: whom it names, and when
// it is valid.
struct CertificateFacts {
  std::vector<std::string> names;  // subjectAltNames: DNS names and IP addresses
  std::string not_before;          // as the certificate says, "2026-11-30 09:51:00Z"
  std::string not_after;
  bool not_yet_valid = false;
  long days_left = 0;  // whole days until notAfter; negative once it has expired
};
CertificateFacts certificate_facts(const std::string& chain_pem);

// SHA-256 fingerprint of the leaf certificate, as colon-separated hex.
std::string certificate_fingerprint(const std::string& chain_pem);

}  // namespace tlscmp::tls
