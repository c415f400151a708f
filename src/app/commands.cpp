#include "app/commands.hpp"

#include <sys/stat.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "app/log.hpp"
#include "app/server.hpp"
#include "error.hpp"
#include "measure/environment.hpp"
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

}  // namespace

void write_certificates(const CertsConfig& config) {
  const tls::CertificateSet set =
      tls::generate_certificates(config.hosts, config.validity_days, config.key_type);
  const std::filesystem::path dir(config.dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  write_file(dir / "ca.pem", set.ca_certificate_pem, false);
  write_file(dir / "server.pem", set.server.certificate_chain_pem, false);
  write_file(dir / "server.key", set.server.private_key_pem, true);
  write_file(dir / "client.pem", set.client.certificate_chain_pem, false);
  write_file(dir / "client.key", set.client.private_key_pem, true);
  std::printf(
      "wrote %s/{ca.pem, server.pem, server.key, client.pem, client.key}: %s keys, valid for %d days\n",
      dir.string().c_str(), tls::to_string(config.key_type), config.validity_days);
  std::printf("server certificate names: localhost, 127.0.0.1, ::1");
  for (const std::string& host : config.hosts)
    std::printf(", %s", host.c_str());
  std::printf("\nthe CA's private key was not kept: to add names, run tlscmp certs again\n");
}

void run_server(const ServerConfig& config) {
  Logger log(stderr);
  const bool throwaway = config.cert_file.empty();
  const tls::Identity identity = throwaway ? tls::generate_certificates({}, 1).server
                                           : tls::load_identity(config.cert_file, config.key_file);
  Server server(config, identity, log);
  if (throwaway) {
    log.line(
        fmt::format("no --cert/--key given: using a throwaway certificate for localhost (SHA-256 {}); "
                    "clients must use --insecure",
                    tls::certificate_fingerprint(identity.certificate_chain_pem)));
  }
  log.line(fmt::format("tlscmp {} listening on {} (plain TCP and TLS), {}, {} certificate", kVersion,
                       server.listen_address(), tls::library_version(),
                       tls::certificate_key_type(identity.certificate_chain_pem)));
  server.run(/*handle_signals=*/true);
  log.line("stopped");
}

}  // namespace tlscmp::app
