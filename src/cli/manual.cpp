#include "cli/manual.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/options.hpp"

namespace tlscmp::cli {
namespace {

// Text for roff: backslashes escaped, and a line that would start with a
// control character ('.' or '\'') made literal.
std::string roff(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";  // a minus, as in flags, not a hyphen
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

// An option's flags as typed, short ones first: {"-p", "--port"}.
std::vector<std::string> names_of(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& s : option.get_snames())
    names.push_back("-" + s);
  for (const std::string& l : option.get_lnames())
    names.push_back("--" + l);
  return names;
}

std::string join(const std::vector<std::string>& words, const char* separator) {
  std::string out;
  for (const std::string& w : words)
    out += (out.empty() ? "" : separator) + w;
  return out;
}

// CLI11's type name is the value's placeholder, then each check's own words:
// "TEXT:{tcp,tls,both}", "INT:INT in [1 - 65535]".
struct TypeName {
  std::string placeholder;  // "TEXT", "FILE"; "" for a flag
  std::string checks;       // "{tcp,tls,both}", "INT in [1 - 65535]"; or ""
};

TypeName type_name(const CLI::Option& option) {
  if (option.get_type_size_max() == 0) return {};  // a flag takes no value
  const std::string full = option.get_type_name();
  const auto colon = full.find(':');
  if (colon == std::string::npos) return {full, {}};
  return {full.substr(0, colon), full.substr(colon + 1)};
}

// The values a check allows, for "{tcp,tls,both}"; empty for any other check.
std::vector<std::string> choices(const CLI::Option& option) {
  const std::string checks = type_name(option).checks;
  std::vector<std::string> values;
  if (checks.size() < 2 || checks.front() != '{' || checks.back() != '}') return values;
  std::string value;
  for (char c : checks.substr(1, checks.size() - 2)) {
    if (c == ',') {
      values.push_back(value);
      value.clear();
    } else {
      value += c;
    }
  }
  values.push_back(value);
  return values;
}

std::vector<const CLI::App*> subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::vector<const CLI::Option*> flags_of(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return o->nonpositional(); });
}

std::vector<const CLI::Option*> positionals_of(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

std::string upper(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// "tlscmp client [HOST] [options]"
std::string synopsis(const CLI::App& command) {
  std::string line = "\\fBtlscmp " + command.get_name() + "\\fR";
  for (const CLI::Option* p : positionals_of(command))
    line += " [\\fI" + upper(p->get_name()) + "\\fR]";
  return line + " [\\fIoptions\\fR]";
}

std::string option_entry(const CLI::Option& option) {
  const TypeName type = type_name(option);
  std::string entry = ".TP\n\\fB" + roff(join(names_of(option), ", ")) + "\\fR";
  if (!type.placeholder.empty()) entry += " \\fI" + roff(type.placeholder) + "\\fR";
  if (option.get_items_expected_max() > 1) entry += " ...";
  entry += "\n" + roff(option.get_description());
  if (!entry.empty() && entry.back() != '.') entry += ".";
  if (!type.checks.empty()) entry += " Allowed: " + roff(type.checks) + ".";
  if (!option.get_default_str().empty()) entry += " Default: " + roff(option.get_default_str()) + ".";
  return entry + "\n";
}

constexpr const char* kDescription =
    R"(tlscmp measures what TLS costs over plain TCP: it runs the same workload
over plain TCP and over TLS, one after the other, round after round, times
only what comes after the handshake (and the handshake on its own), and
prints bytes, microseconds and the ratio side by side. Its server runs on
one host and its client on another; with no host, the client starts an
embedded server on loopback with a throwaway certificate.
.PP
One server serves plain and TLS tests on one port, from many clients, and
keeps running whatever a client does. The test parameters travel with each
test, so the server never needs a restart.
)";

constexpr const char* kSizes =
    R"(Sizes are a number with an optional suffix K, M, G, T or P (either case), each a
power of 1024 as in iperf3: 64K is 65536 bytes. Rates (\-b) are bits per
second with suffixes that are powers of 1000: 100M is 10^8 bit/s.
)";

constexpr const char* kExitStatus = R"(.TP
.B 0
the comparison ran and every count was exact
.TP
.B 1
a run failed (a connection, a handshake, a count that did not match); one
line on standard error says why
.TP
.B 2
bad command line; one line says what to change
.TP
.B 130
interrupted (Ctrl\-C); the report holds what was measured until then
)";

constexpr const char* kFiles = R"(.TP
.I /usr/lib/systemd/system/tlscmp\-server.service
a systemd unit that runs \fBtlscmp server\fR as a dynamic user, installed
disabled; it reads its certificate from
.I /etc/tlscmp/server.pem
and
.IR /etc/tlscmp/server.key ,
or uses a throwaway one when there is none. Enable it with
\fBsystemctl enable \-\-now tlscmp\-server\fR; a restart rereads the certificate.
.TP
.I /usr/share/doc/tlscmp/README.md
the first hour: quick start, two hosts, reading the output
.TP
.I /usr/share/doc/tlscmp/docs/
one topic a file: flags, what every figure means and the JSON and CSV
fields, the server in production, TLS choices, datagrams, performance
)";

constexpr const char* kExamples = R"(.TP
.B tlscmp client
both modes over loopback, 5 rounds of 1 GiB, with an embedded server
.TP
.B tlscmp certs \-\-dir certs \-\-host server.example
certificates for a server host
.TP
.B tlscmp server \-\-cert certs/server.pem \-\-key certs/server.key
serve tests on port 5678
.TP
.B tlscmp client server.example \-\-ca ca.pem \-R \-n 200M
the server sends 200 MiB, over TCP and TLS
.TP
.B tlscmp client server.example \-\-ca ca.pem \-\-compare\-groups
handshakes per second for each key exchange group, against X25519
)";

}  // namespace

std::string render_man_page(const std::string& version, const std::string& date) {
  std::string page;
  visit_command_line([&](const CLI::App& app) {
    page += fmt::format(".TH TLSCMP 1 \"{}\" \"tlscmp {}\" \"User Commands\"\n", date, version);
    page += ".SH NAME\ntlscmp \\- " +
            roff(app.get_description().substr(app.get_description().find(": ") + 2)) + "\n.SH SYNOPSIS\n";
    for (const CLI::App* sub : subcommands(app))
      page += synopsis(*sub) + "\n.br\n";
    page += "\\fBtlscmp \\-\\-version\\fR\n.SH DESCRIPTION\n";
    page += kDescription;
    page += ".SH OPTIONS\n";
    for (const CLI::Option* option : flags_of(app))
      page += option_entry(*option);
    page += ".SH COMMANDS\n";
    for (const CLI::App* sub : subcommands(app)) {
      page += ".SS \"tlscmp " + sub->get_name() + "\"\n" + synopsis(*sub) + "\n.PP\n" +
              roff(sub->get_description()) + ".\n";
      for (const CLI::Option* p : positionals_of(*sub)) {
        page += ".TP\n\\fI" + upper(p->get_name()) + "\\fR\n" + roff(p->get_description()) + "\n";
      }
      for (const CLI::Option* option : flags_of(*sub))
        page += option_entry(*option);
    }
    page += ".SH SIZES\n";
    page += kSizes;
    page += ".SH EXIT STATUS\n";
    page += kExitStatus;
    page += ".SH FILES\n";
    page += kFiles;
    page += ".SH EXAMPLES\n";
    page += kExamples;
    page += ".SH SEE ALSO\n.BR iperf3 (1),\n.BR openssl\\-s_time (1),\n.BR sockperf (1)\n";
  });
  return page;
}

std::string render_bash_completion() {
  std::string script =
      "# bash completion for tlscmp: subcommands, their flags, and the values of\n"
      "# flags that take one of a few. Generated from tlscmp's own option\n"
      "# definitions (the ones --help prints); do not edit.\n"
      "_tlscmp() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in\n";
  visit_command_line([&](const CLI::App& app) {
    std::vector<std::string> commands;
    for (const CLI::App* sub : subcommands(app))
      commands.push_back(sub->get_name());
    script +=
        "      " + join(commands, "|") + ")\n        command=${COMP_WORDS[i]}\n        break\n        ;;\n";
    script += "    esac\n  done\n  case $command in\n";
    std::vector<std::string> top;
    for (const CLI::App* sub : subcommands(app))
      top.push_back(sub->get_name());
    for (const CLI::Option* option : flags_of(app)) {
      for (const std::string& name : names_of(*option))
        top.push_back(name);
    }
    script += "    \"\")\n      COMPREPLY=($(compgen -W \"" + join(top, " ") +
              "\" -- \"$cur\"))\n      return\n      ;;\n";
    for (const CLI::App* sub : subcommands(app)) {
      std::vector<std::string> words;
      std::string values;  // case arms: a flag's value
      for (const CLI::Option* option : flags_of(*sub)) {
        const std::vector<std::string> names = names_of(*option);
        words.insert(words.end(), names.begin(), names.end());
        const TypeName type = type_name(*option);
        if (type.placeholder.empty()) continue;  // a flag: nothing follows it
        std::string action = "return";           // a value to type: propose nothing
        if (const std::vector<std::string> allowed = choices(*option); !allowed.empty()) {
          action = "COMPREPLY=($(compgen -W \"" + join(allowed, " ") + "\" -- \"$cur\")); return";
        } else if (type.placeholder == "FILE") {
          action = "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")); return";
        } else if (type.placeholder == "DIR") {
          action = "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); return";
        }
        values += "        " + join(names, "|") + ")\n          " + action + "\n          ;;\n";
      }
      script += "    " + sub->get_name() + ")\n      case $prev in\n" + values + "      esac\n";
      script += "      COMPREPLY=($(compgen -W \"" + join(words, " ") + "\" -- \"$cur\"))\n      ;;\n";
    }
  });
  script += "  esac\n}\ncomplete -F _tlscmp tlscmp\n";
  return script;
}

}  // namespace tlscmp::cli
