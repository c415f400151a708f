#include <fmt/format.h>

#include "report/report.hpp"

namespace tlscmp::report {
namespace {

std::string tls_column(const measure::RunResult& run) {
  if (run.mode != Mode::tls) return "-";
  return fmt::format("{} {} {} {}", run.tls.version, run.tls.cipher, run.tls.group,
                     run.tls.certificate_key_type);
}

std::string describe_direction(Direction direction) {
  return direction == Direction::client_to_server ? "client -> server" : "server -> client (-R)";
}

std::string describe_side(const std::string& library, const std::string& cpu) {
  return fmt::format("{} on {}", library, cpu);
}

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  if (value == static_cast<double>(static_cast<std::uint64_t>(value)))
    return fmt::format("{:.0f} {}", value, kUnits[unit]);
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

std::string render_text(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  const measure::Environment& e = c.environment;
  std::string out;
  out += fmt::format("tlscmp {}: {}, {}:{}{}\n", e.client_version, describe_direction(p.direction), p.host,
                     p.port, p.embedded_server ? " (embedded server)" : "");
  out += fmt::format("payload {} ({} bytes) in {} chunks, {} round{}\n", format_bytes(p.bytes), p.bytes,
                     format_bytes(p.chunk_bytes), p.rounds, p.rounds == 1 ? "" : "s");
  const std::string client_side = describe_side(e.client_tls_library, e.client_cpu_model);
  const std::string server_side = describe_side(e.server_tls_library, e.server_cpu_model);
  if (!e.server_tls_library.empty()) {
    out += client_side == server_side ? fmt::format("client and server: {}\n", client_side)
                                      : fmt::format("client: {}\nserver: {}\n", client_side, server_side);
  }

  if (!c.runs.empty()) {
    out += fmt::format("\n{:>5} {:<4} {:>13} {:>12} {:>12} {:>12} {:>9}  {}\n", "round", "mode", "bytes",
                       "transfer_us", "sender_us", "handshake_us", "MB/s", "tls");
    for (const auto& run : c.runs) {
      out += fmt::format("{:>5} {:<4} {:>13} {:>12.0f} {:>12.0f} {:>12.0f} {:>9.1f}  {}\n", run.round,
                         to_string(run.mode), run.bytes, run.transfer_us, run.sender_us, run.handshake_us,
                         run.mbytes_per_s(), tls_column(run));
    }
  }

  if (p.rounds > 1 && !c.stats.empty()) {
    out += fmt::format("\n{:<4} {:>4} {:>34} {:>11} {:>19}\n", "mode", "runs",
                       "transfer_us min / median / max", "MB/s median", "handshake_us median");
    for (const auto& s : c.stats) {
      out += fmt::format(
          "{:<4} {:>4} {:>34} {:>11.1f} {:>19.0f}\n", to_string(s.mode), s.transfer_us.count,
          fmt::format("{:.0f} / {:.0f} / {:.0f}", s.transfer_us.min, s.transfer_us.median, s.transfer_us.max),
          s.mbytes_per_s.median, s.handshake_us.median);
    }
  }

  if (c.tls_over_tcp) {
    const measure::Summary& r = *c.tls_over_tcp;
    if (r.count == 1) {
      out += fmt::format("\nTLS/TCP transfer time: {:.2f}x\n", r.median);
    } else {
      out += fmt::format(
          "\nTLS/TCP transfer time, paired by round: median {:.2f}x (min {:.2f}x, max {:.2f}x, {} pairs)\n",
          r.median, r.min, r.max, r.count);
    }
  }
  if (!c.error.empty()) out += fmt::format("\nstopped: {}\n", c.error);
  return out;
}

}  // namespace tlscmp::report
