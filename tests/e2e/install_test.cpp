// What the package installs: --version, the man page and the bash completion
// (checked against the binary's own --help), the server unit, and
// `cmake --install` to a prefix.

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "e2e/e2e.hpp"
#include "support/skip.hpp"

using namespace tlscmp::test;

namespace {

const std::filesystem::path kDocDir = std::filesystem::path(TLSCMP_BUILD_DIR) / "doc";

// Every flag `tlscmp COMMAND --help` lists: "-p", "--port", ...
std::set<std::string> flags_in_help(const std::string& command) {
  const ProcessResult r = run_process({tlscmp_binary(), command, "--help"});
  REQUIRE(r.exit_code == 0);
  std::set<std::string> flags;
  const std::regex flag(R"((?:^|[\s,])(--?[A-Za-z][A-Za-z0-9-]*))");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    // Flag lines start with two spaces and a dash; descriptions are indented further.
    if (line.rfind("  -", 0) != 0) continue;
    const std::string names = line.substr(0, line.find_first_of(" ", 2));
    for (std::sregex_iterator m(names.begin(), names.end(), flag), end; m != end; ++m)
      flags.insert((*m)[1]);
  }
  return flags;
}

const char* const kCommands[] = {"certs", "server", "client", "sweep", "compare", "merge", "speed"};

// The completion's answer for the words typed so far (the last one partial).
std::string complete(const std::vector<std::string>& words) {
  std::string array;
  for (const std::string& w : words)
    array += " '" + w + "'";
  const std::string script = "source '" + (kDocDir / "tlscmp.bash-completion").string() + "'; COMP_WORDS=(" +
                             array + "); COMP_CWORD=" + std::to_string(words.size() - 1) +
                             "; _tlscmp; echo \"${COMPREPLY[*]}\"";
  const ProcessResult r = run_process({"/bin/bash", "--norc", "-c", script});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

TEST_CASE("--version names the TLS library, the transports, DTLS, the groups and the kernel's tls ULP") {
  const ProcessResult r = run_process({tlscmp_binary(), "--version"});
  REQUIRE(r.exit_code == 0);
  CAPTURE(r.out);
  CHECK(r.out.rfind("tlscmp ", 0) == 0);
  const bool boringssl = r.out.find("TLS library: BoringSSL") != std::string::npos;
  CHECK((boringssl || r.out.find("TLS library: OpenSSL 3.") != std::string::npos));
  CHECK(r.out.find(boringssl ? "DTLS: no" : "DTLS: yes") != std::string::npos);
  CHECK(r.out.find(boringssl ? "udp\n" : "udp, dtls (DTLS 1.2)\n") != std::string::npos);
  CHECK(r.out.find("key exchange groups: X25519 P-256 P-384") != std::string::npos);
  // The kernel line agrees with what the kernel lists.
  const std::string ulps = read_file("/proc/sys/net/ipv4/tcp_available_ulp");
  const bool tls_ulp = (" " + ulps + " ").find(" tls") != std::string::npos;
  if (tls_ulp) {
    CHECK(r.out.find("kernel TLS: yes: this kernel offers the tls ULP") != std::string::npos);
  } else {
    // No tls ULP registered: either a module that loads on first use, or none.
    CHECK((r.out.find("kernel TLS: yes: the tls ULP is") != std::string::npos ||
           r.out.find("kernel TLS: no: this kernel offers no tls ULP (tcp_available_ulp: ") !=
               std::string::npos));
  }
  // -V is the same.
  CHECK(run_process({tlscmp_binary(), "-V"}).out == r.out);
}

TEST_CASE(
    "the man page covers every subcommand and every flag --help lists, and man reads it without warnings") {
  const std::string page = read_file(kDocDir / "tlscmp.1");
  REQUIRE_FALSE(page.empty());
  // roff writes a flag's dashes as \-.
  const std::string plain = std::regex_replace(page, std::regex(R"(\\-)"), "-");
  for (const char* command : kCommands) {
    CAPTURE(command);
    CHECK(plain.find(std::string(".SS \"tlscmp ") + command + "\"") != std::string::npos);
    const std::set<std::string> flags = flags_in_help(command);
    CHECK(flags.count("--help") == 1);
    CHECK(flags.size() > 3);
    // Within this command's section.
    const auto start = plain.find(std::string(".SS \"tlscmp ") + command + "\"");
    const auto end = plain.find(".SS", start + 1);
    const std::string section =
        plain.substr(start, end == std::string::npos ? std::string::npos : end - start);
    for (const std::string& flag : flags) {
      CAPTURE(flag);
      CHECK(std::regex_search(
          section, std::regex("\\\\fB(.*[ ,])?" + flag + "([ ,\\\\].*)?$", std::regex::multiline)));
    }
  }
  CHECK(plain.find("--version") != std::string::npos);
  CHECK(read_file(kDocDir / "tlscmp.1.gz").size() > 100);
  if (std::filesystem::exists("/usr/bin/man")) {
    const ProcessResult r = run_process(
        {"/usr/bin/env", "MANWIDTH=80", "/usr/bin/man", "--warnings", "-l", (kDocDir / "tlscmp.1").string()});
    CHECK(r.exit_code == 0);
    CHECK(r.err == "");
    CHECK(r.out.find("tlscmp client [HOST] [options]") != std::string::npos);
  }
}

TEST_CASE("bash completion offers subcommands, each one's flags, and the values of flags with a few") {
  CHECK(complete({"tlscmp", ""}) ==
        "certs server client sweep compare merge report speed -h --help -V --version");
  CHECK(complete({"tlscmp", "cl"}) == "client");
  CHECK(complete({"tlscmp", "client", "--mo"}) == "--mode");
  CHECK(complete({"tlscmp", "client", "--mode", "b"}) == "both both-udp");
  CHECK(complete({"tlscmp", "sweep", "--mode", ""}) == "tcp tls both");
  CHECK(complete({"tlscmp", "certs", "--key-type", "ecdsa"}) == "ecdsa-p256 ecdsa-p384");
  CHECK(complete({"tlscmp", "client", "-p", ""}).empty());  // a number to type
  // Every flag of a command, and only that command's.
  for (const char* command : kCommands) {
    CAPTURE(command);
    std::set<std::string> offered;
    std::istringstream words(complete({"tlscmp", command, "-"}));
    for (std::string w; words >> w;)
      offered.insert(w);
    CHECK(offered == flags_in_help(command));
  }
  // A file for --ca: this test's own directory has the completion script.
  const std::string prefix = (kDocDir / "tlscmp.bash").string();
  CHECK(complete({"tlscmp", "server", "--ca", prefix}) == prefix + "-completion");
}

TEST_CASE("the server unit passes systemd-analyze verify and runs tlscmp server hardened") {
  const std::filesystem::path unit =
      std::filesystem::path(TLSCMP_BUILD_DIR) / "packaging/test/tlscmp-server.service";
  const std::string text = read_file(unit);
  REQUIRE_FALSE(text.empty());
  CHECK(text.find("ExecStart=" + built_binary() + " server --cert %d/server.pem --key %d/server.key") !=
        std::string::npos);
  for (const char* setting :
       {"DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes",
        "LoadCredential=server.key:/etc/tlscmp/server.key", "LimitNOFILE=", "TasksMax=", "MemoryMax="}) {
    CAPTURE(setting);
    CHECK(text.find(setting) != std::string::npos);
  }
  if (!std::filesystem::exists("/usr/bin/systemd-analyze")) {
    skip("systemd-analyze is not installed (scripts/install-deps installs it): not verified");
    return;
  }
  // The man page it names is not installed from the build tree; scripts/test-distro
  // verifies the installed unit with man pages in place.
  const ProcessResult r = run_process({"/usr/bin/systemd-analyze", "verify", "--man=no", unit.string()});
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("tlscmp-server.service") == std::string::npos);  // no complaint about the unit
}

TEST_CASE("cmake --install to a prefix puts the binary, man page, completion, README and unit in place") {
  const TempDir dir;
  const ProcessResult r =
      run_process({TLSCMP_CMAKE_COMMAND, "--install", TLSCMP_BUILD_DIR, "--prefix", dir.path().string()},
                  std::chrono::seconds(120));
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* file :
       {"bin/tlscmp", "share/man/man1/tlscmp.1.gz", "share/bash-completion/completions/tlscmp",
        "share/doc/tlscmp/README.md", "share/doc/tlscmp/docs/flags.md",
        "lib/systemd/system/tlscmp-server.service", "lib/tlscmp/tls-openssl.so"}) {
    CAPTURE(file);
    CHECK(std::filesystem::is_regular_file(dir.path() / file));
  }
  // The unit names the binary where it was installed.
  CHECK(read_file(dir.path() / "lib/systemd/system/tlscmp-server.service")
            .find("ExecStart=" + (dir.path() / "bin/tlscmp").string() + " server ") != std::string::npos);
  const ProcessResult version = run_process({(dir.path() / "bin/tlscmp").string(), "--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("tlscmp ", 0) == 0);
  CHECK(version.out.find("TLS backends: openssl: OpenSSL") !=
        std::string::npos);  // found from bin/../lib/tlscmp
}
