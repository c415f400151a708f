#include "app/commands.hpp"

#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "app/log.hpp"
#include "app/server.hpp"
#include "error.hpp"
#include "measure/environment.hpp"
#include "tls/backend.hpp"
#include "tls/context.hpp"
#include "tls/identity.hpp"
#include "version.hpp"

namespace tlscmp::app {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text, bool secret) {
  // Create with the final permissions, so that a key is never readable by others.
  std::filesystem::remove(path);
  const mode_t old_mask = ::umask(secret ? 077 : 022);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ::umask(old_mask);
  out << text;
  out.close();
  if (!out) throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
}

// The certificate's names and dates at start, and a warning where clients
// will refuse it (expired, not yet valid) or soon will (within 7 days).
void log_certificate(Logger& log, const tls::Identity& identity, const std::string& file) {
  const tls::CertificateFacts facts = tls::certificate_facts(identity.certificate_chain_pem);
  std::string names;
  for (const std::string& name : facts.names)
    names += (names.empty() ? "" : ", ") + name;
  log.line(fmt::format("certificate {} names {}; valid from {} to {}", file,
                       names.empty() ? "nothing" : names, facts.not_before, facts.not_after));
  if (facts.not_yet_valid) {
    log.line(
        fmt::format("warning: the certificate in {} is not valid until {}: clients will refuse it "
                    "(check this host's clock)",
                    file, facts.not_before));
  } else if (facts.days_left < 0) {
    log.line(
        fmt::format("warning: the certificate in {} expired on {}: clients will refuse it; make a new one "
                    "(tlscmp certs)",
                    file, facts.not_after));
  } else if (facts.days_left < 7) {
    log.line(fmt::format("warning: the certificate in {} expires in {} day{}, on {}", file, facts.days_left,
                         facts.days_left == 1 ? "" : "s", facts.not_after));
  }
}

}  // namespace

void write_certificates(const session::CertsConfig& config) {
  const std::filesystem::path dir(config.dir);
  const std::filesystem::path ca_pem = dir / "ca.pem";
  const std::filesystem::path ca_key = dir / "ca.key";
  std::error_code ec;
  const bool have_ca = std::filesystem::exists(ca_pem, ec);
  const bool have_ca_key = std::filesystem::exists(ca_key, ec);
  // The CA a directory holds is reused, as mkcert does, so that the ca.pem
  // already copied to clients keeps working when names are added.
  std::optional<tls::Identity> ca;
  if (have_ca && !config.new_ca) {
    if (!have_ca_key) {
      throw Error(fmt::format(
          "{} is there but not its key ({}), so no certificate can be signed with it: --new-ca makes a "
          "new CA, and the ca.pem copies on clients then stop working",
          ca_pem.string(), ca_key.string()));
    }
    try {
      ca = tls::load_identity(ca_pem.string(), ca_key.string());
    } catch (const Error& e) {
      throw Error(
          fmt::format("cannot reuse the CA in {}: {} (--new-ca makes a new one)", dir.string(), e.what()));
    }
  }
  const tls::CertificateSet set =
      tls::generate_certificates(config.hosts, config.validity_days, config.key_type, ca);
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  std::vector<std::string> replaced;
  for (const char* key : {"server.key", "client.key"}) {
    if (std::filesystem::exists(dir / key)) replaced.emplace_back(key);
  }
  if (!ca) {
    if (have_ca_key) replaced.emplace_back("ca.key");
    write_file(ca_pem, set.ca.certificate_chain_pem, false);
    write_file(ca_key, set.ca.private_key_pem, true);
  }
  write_file(dir / "server.pem", set.server.certificate_chain_pem, false);
  write_file(dir / "server.key", set.server.private_key_pem, true);
  write_file(dir / "client.pem", set.client.certificate_chain_pem, false);
  write_file(dir / "client.key", set.client.private_key_pem, true);
  if (ca) {
    fmt::print("reusing the CA in {} (and its key, ca.key): the ca.pem copies on clients keep working\n",
               ca_pem.string());
  } else if (have_ca) {
    fmt::print(
        "--new-ca: a new CA in {}; the old ca.pem copies on clients no longer work: copy the new one\n",
        ca_pem.string());
  }
  fmt::print("wrote {}/{{{}server.pem, server.key, client.pem, client.key}}: {} keys, valid for {} days\n",
             dir.string(), ca ? "" : "ca.pem, ca.key, ", tls::to_string(config.key_type),
             config.validity_days);
  if (!replaced.empty()) {
    std::string names;
    for (const std::string& r : replaced)
      names += (names.empty() ? "" : ", ") + r;
    fmt::print("replaced the keys {} with new ones\n", names);
  }
  fmt::print("server certificate names: {}", fmt::join(tls::server_certificate_names(config.hosts), ", "));
  fmt::print("\nclients trust {} (--ca); to add names later, run tlscmp certs again: it reuses the CA\n",
             ca_pem.string());
}

void run_server(const session::ServerConfig& config) {
  Logger log(stderr);
  const bool throwaway = config.cert_file.empty();
  tls::Identity identity;
  std::optional<tls::Identity> issuer;  // signs the certificates of other key types (--compare-key-types)
  if (throwaway) {
    tls::CertificateSet made = tls::generate_certificates({}, 1);
    identity = std::move(made.server);
    issuer = std::move(made.ca);
  } else {
    identity = tls::load_identity(config.cert_file, config.key_file);
    if (!config.issuer_dir.empty()) {
      const std::filesystem::path dir(config.issuer_dir);
      issuer = tls::load_identity((dir / "ca.pem").string(), (dir / "ca.key").string());
    }
  }
  Server server(config, identity, log, issuer);
  server.stop_on_signals();
  if (throwaway) {
    log.line(
        fmt::format("no --cert/--key given: using a throwaway certificate for localhost (SHA-256 {}); "
                    "clients must use --insecure",
                    tls::certificate_fingerprint(identity.certificate_chain_pem)));
  }
  // Every library it holds serves the clients that name it (--tls-lib); the default, those that do not.
  const std::vector<std::string> libraries = tls::backend_names();
  log.line(fmt::format("tlscmp {} listening on {} (plain TCP and TLS), {}, {} certificate{}", kVersion,
                       server.listen_address(), tls::library_version(),
                       tls::certificate_key_type(identity.certificate_chain_pem),
                       libraries.size() > 1 ? fmt::format("; TLS libraries for clients that name one: {}",
                                                          fmt::join(libraries, ", "))
                                            : std::string()));
  if (!throwaway) log_certificate(log, identity, config.cert_file);
  server.run();
  log.line("stopped");
}

}  // namespace tlscmp::app
