#include <fmt/format.h>

#include "report/crr.hpp"
#include "report/datagram.hpp"
#include "report/facts.hpp"
#include "report/report.hpp"
#include "report/rr.hpp"

namespace tlscmp::report {
namespace {

std::string side_fields(const measure::SideCost& side, std::uint64_t bytes) {
  return fmt::format("{:.3f},{:.6f},{:.6f},{:.6f},{:.4f},{},{},{},{},{},{},{}{}", side.window_us,
                     side.cpu_user_s, side.cpu_system_s, side.cpu_s_per_gib(bytes), side.core_share(),
                     side.sndbuf_bytes, side.rcvbuf_bytes, side.mss_bytes, csv_field(side.congestion),
                     side.ktls_send ? 1 : 0, side.ktls_receive ? 1 : 0, side.tls_bytes,
                     facts_fields(side.facts));
}

constexpr const char* kSideColumns[] = {"window_us",  "cpu_user_s",   "cpu_system_s", "cpu_s_per_gib",
                                        "core_share", "sndbuf_bytes", "rcvbuf_bytes", "mss_bytes",
                                        "congestion", "ktls_send",    "ktls_receive", "tls_bytes"};

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string render_csv(const measure::Comparison& c) {
  if (c.parameters.kind == TestKind::datagram) return render_datagram_csv(c);
  if (c.parameters.kind == TestKind::crr) return render_crr_csv(c);
  if (c.parameters.kind == TestKind::rr) return render_rr_csv(c);
  std::string out =
      "variant,round,warmup,partial,mode,direction,bytes,chunk_bytes,transfer_us,sender_us,handshake_us,"
      "mbytes_per_s,messages,payload_bytes,messages_per_s,"
      "tls_version,cipher,group,certificate_key_type,client_certificate_key_type,record_size";
  for (const char* side : {"client", "server"}) {
    for (const char* column : kSideColumns)
      out += fmt::format(",{}_{}", side, column);
    out += facts_columns(side);
  }
  out += ",client_tls_library,server_tls_library,client_cpu_model,server_cpu_model\n";
  const measure::Environment& e = c.environment;
  for (const measure::RunResult& run : c.or_empty<measure::StreamResults>().runs) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{:.1f},{},{},{},{},{},{},{},{},{},{},{},{}"
        "\n",
        csv_field(run.label()), run.round, run.warmup ? 1 : 0, run.partial ? 1 : 0, to_string(run.mode),
        to_string(c.parameters.direction), run.bytes, c.parameters.chunk_bytes, run.transfer_us,
        run.sender_us, run.handshake_us, run.mbytes_per_s(), run.messages, run.payload_bytes,
        run.messages_per_s(), csv_field(run.tls.version), csv_field(run.tls.cipher), csv_field(run.tls.group),
        csv_field(run.tls.certificate_key_type), csv_field(run.tls.client_certificate_key_type),
        run.tls.record_size, side_fields(run.client, run.bytes), side_fields(run.server, run.bytes),
        csv_field(e.client_tls_library), csv_field(e.server_tls_library), csv_field(e.client_cpu_model),
        csv_field(e.server_cpu_model));
  }
  return out;
}

}  // namespace tlscmp::report
