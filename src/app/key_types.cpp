// The server's certificates of other key types, made when a crr test asks
// for one (--compare-key-types), signed by its issuer, kept for the process.

#include <fmt/format.h>
#include <optional>
#include <string>
#include <vector>

#include "app/server.hpp"
#include "error.hpp"
#include "tls/identity.hpp"
#include "tls/speed.hpp"

namespace tlscmp::app {

void Server::prepare_key_type(const std::string& key_type) {
  const std::optional<tls::KeyType> type = tls::parse_key_type(key_type);
  if (!type) throw Error(fmt::format("this server knows no key type '{}'", key_type));
  const std::string name = protocol::key_type_server_name(key_type);
  std::lock_guard lock(key_types_mutex_);
  if (key_types_.contains(name)) return;
  if (!issuer_) {
    throw Error(
        "this server has no CA to sign certificates of other key types: start it with --issuer DIR (the "
        "directory where tlscmp certs wrote ca.pem and ca.key), or without --cert (a throwaway CA)");
  }
  // The names the server's own certificate has, so that clients verify this one as they verify that.
  std::vector<std::string> hosts;
  for (const std::string& host : tls::certificate_facts(identity_.certificate_chain_pem).names) {
    if (host != "localhost" && host != "127.0.0.1" && host != "::1") hosts.push_back(host);
  }
  const tls::CertificateSet made = tls::generate_certificates(hosts, 1, *type, issuer_);
  tls::keep_certificates(*type, made);  // the key type's calibration after a test uses it
  tls_.add_server_name(
      name, {made.server, tls::kDefaultReadAheadBytes, config_.tls_policy, config_.client_ca_file,
             config_.require_client_cert, config_.resumption, nullptr, nullptr, kinds::alpn_protocols()});
  key_types_.insert(name);
  log_.line(fmt::format("made a certificate with an {} key for key type tests, valid for a day",
                        tls::certificate_key_type(made.server.certificate_chain_pem)));
}

}  // namespace tlscmp::app
