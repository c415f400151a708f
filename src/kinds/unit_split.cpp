#include "kinds/unit_split.hpp"

#include <fmt/format.h>

#include <cmath>

#include "measure/cost_split.hpp"
#include "measure/units.hpp"
#include "protocol/fields.hpp"
#include "render/render.hpp"

namespace tlscmp::kinds {
namespace {

using nlohmann::ordered_json;

// Microseconds as the figure deserves: "0.41", "38.2", "1204".
std::string us_text(double us) {
  const double size = std::fabs(us);
  if (size < 10) return fmt::format("{:.2f}", us);
  return size < 1000 ? fmt::format("{:.1f}", us) : fmt::format("{:.0f}", us);
}

// "(AES-128-GCM here: 1 B sealed, 1 B opened)": what the side's AEAD did per transaction.
std::string crypto_detail(const measure::UnitSplit& s) {
  const measure::TransactionCalibration& c = s.calibration;
  const std::uint64_t sealed = s.client ? c.request_bytes : c.response_bytes;
  const std::uint64_t opened = s.client ? c.response_bytes : c.request_bytes;
  return fmt::format("({} here: {} sealed, {} opened)", c.aead, measure::format_bytes(sealed),
                     measure::format_bytes(opened));
}

// "handshake 388 (full, ecdsa-p256, X25519, in memory here), ".
std::string handshake_part(const measure::UnitSplit& s) {
  if (!s.handshake_us) return {};
  const measure::TransactionCalibration& c = s.calibration;
  return fmt::format("handshake {} ({}, {}{}, in memory here), ", us_text(*s.handshake_us),
                     c.resumed ? "resumed" : "full", c.key_type, c.group.empty() ? "" : ", " + c.group);
}

std::string side_line(const std::string& variant, const measure::UnitSplit& s, const char* unit) {
  const bool crr = s.handshake_us.has_value() || s.calibration.client_handshake_us.has_value();
  return fmt::format("{}: the {}'s TLS extra {} us per {}: {}crypto {} {}, record layer {}, {} {}\n", variant,
                     s.client ? "client" : "server", us_text(s.extra_us), unit, handshake_part(s),
                     us_text(s.crypto_us), crypto_detail(s), us_text(s.record_layer_us),
                     crr ? "socket and the rest" : "socket", us_text(s.socket_us));
}

double part_value(const measure::UnitSplit& s, const std::string& part) {
  if (part == "handshake") return s.handshake_us.value_or(0);
  if (part == "crypto") return s.crypto_us;
  return part == "record layer" ? s.record_layer_us : s.socket_us;
}

// The socket path's hint: kernel TLS where the kernel has it, else what it lacks.
std::string socket_hint(const measure::Environment& e, bool client, const char* unit) {
  const std::string& ulps = client ? e.client_tls_ulps : e.server_tls_ulps;
  const char* side = client ? "client" : "server";
  if (std::string(unit) == "connection") {
    return fmt::format(
        "hint: the socket path and the rest lead on the {}: the handshake's flights and the close_notify "
        "through the kernel, a few more reads and writes a connection than TCP's; connections that stay "
        "open (--rr) pay them once\n",
        side);
  }
  if (ulps.find("tls") != std::string::npos) {
    return fmt::format(
        "hint: the socket path leads on the {}: what TLS costs beyond its calls in memory (its socket "
        "BIO, caches gone cold between messages, each record's header and tag); kernel TLS (--ktls) "
        "moves the records into the kernel's own send and receive path\n",
        side);
  }
  return fmt::format(
      "hint: the socket path leads on the {}: what TLS costs beyond its calls in memory (its socket "
      "BIO, caches gone cold between messages, each record's header and tag); kernel TLS (--ktls) would "
      "take some of it, but this kernel has no tls module (tcp_available_ulp: {})\n",
      side, ulps.empty() ? "not readable here" : ulps);
}

// One hint, from the largest part of either side.
std::string hint(const measure::Environment& e, const std::optional<measure::UnitSplit>& client,
                 const std::optional<measure::UnitSplit>& server, const char* unit) {
  const measure::UnitSplit* lead = nullptr;
  for (const auto* s : {client ? &*client : nullptr, server ? &*server : nullptr}) {
    if (s != nullptr && (lead == nullptr || part_value(*s, measure::largest_part(*s)) >
                                                part_value(*lead, measure::largest_part(*lead))))
      lead = s;
  }
  if (lead == nullptr) return {};
  const std::string part = measure::largest_part(*lead);
  const char* side = lead->client ? "client" : "server";
  if (part == "handshake") {
    return fmt::format(
        "hint: the handshake leads on the {}: {}--compare-key-types and --compare-groups show what each "
        "key type and group costs (tlscmp speed, in memory)\n",
        side,
        lead->calibration.resumed ? "connections that stay open (--rr) pay it once; "
                                  : "resumed sessions (the tls-resumed variant) cost less; ");
  }
  if (part == "crypto") {
    return fmt::format(
        "hint: the cipher leads on the {}: a faster suite, or a CPU with AES instructions, helps most "
        "(--compare-ciphers shows each suite here; tlscmp speed each cipher's rate)\n",
        side);
  }
  if (part == "record layer") {
    return fmt::format(
        "hint: the record layer leads on the {}: its cost is per record, whatever the size; fewer, "
        "larger messages carry it over more bytes (tlscmp speed --sizes shows it in memory)\n",
        side);
  }
  return socket_hint(e, lead->client, unit);
}

bool any_negative(const std::optional<measure::UnitSplit>& s) {
  return s && (s->crypto_us < 0 || s->record_layer_us < 0 || s->socket_us < 0);
}

}  // namespace

std::string render_unit_split(const measure::Environment& environment, const std::string& variant,
                              const std::optional<measure::UnitSplit>& client,
                              const std::optional<measure::UnitSplit>& server, const char* unit) {
  if (!client && !server) return {};
  std::string out = "\n";
  if (client) out += side_line(variant, *client, unit);
  if (server) out += side_line(variant, *server, unit);
  if (!client || !server) {
    out += fmt::format(
        "(no split for the {}: its host could not measure {} in memory, as with a BoringSSL client, which "
        "cannot ask for a TLS 1.3 suite, or kernel TLS)\n",
        client ? "server" : "client", (client ? client : server)->calibration.suite);
  }
  if (any_negative(client) || any_negative(server)) {
    out +=
        "(a part below zero is noise: the run's CPU and the calibration in memory each vary; more rounds "
        "narrow it)\n";
  }
  return out + hint(environment, client, server, unit);
}

std::string calibration_csv(const measure::SideCost& client, const measure::SideCost& server) {
  const auto side = [](const measure::SideCost& cost, bool is_client) {
    const std::optional<measure::TransactionCalibration>& c = cost.transaction_calibration;
    if (!c) return std::string(",,");
    const std::optional<double> handshake = c->handshake_us(is_client);
    return fmt::format("{:.3f},{:.3f},{}", c->crypto_us(is_client), c->tls_us(is_client),
                       handshake ? fmt::format("{:.3f}", *handshake) : std::string());
  };
  return side(client, true) + "," + side(server, false);
}

ordered_json transaction_calibration_json(const std::optional<measure::TransactionCalibration>& c) {
  return c ? protocol::FieldWriter<ordered_json>::written(*c) : ordered_json(nullptr);
}

ordered_json unit_split_json(const std::optional<measure::UnitSplit>& client,
                             const std::optional<measure::UnitSplit>& server) {
  if (!client && !server) return nullptr;
  const auto side = [](const std::optional<measure::UnitSplit>& s) -> ordered_json {
    if (!s) return nullptr;
    return {{"suite", s->calibration.suite},
            {"aead", s->calibration.aead},
            {"tcp_cpu_us", s->tcp_us},
            {"tls_cpu_us", s->tls_us},
            {"extra_us", s->extra_us},
            {"handshake_us", render::value_or_null(s->handshake_us)},
            {"crypto_us", s->crypto_us},
            {"record_layer_us", s->record_layer_us},
            {"socket_us", s->socket_us},
            {"largest", measure::largest_part(*s)},
            {"calibration", transaction_calibration_json(s->calibration)}};
  };
  return {{"client", side(client)}, {"server", side(server)}};
}

}  // namespace tlscmp::kinds
