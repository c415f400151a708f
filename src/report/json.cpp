#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace tlscmp::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json to_json(const measure::Summary& s) {
  return {{"count", s.count}, {"min", s.min},   {"median", s.median},
          {"max", s.max},     {"mean", s.mean}, {"stddev", s.stddev}};
}

ordered_json to_json(const measure::SideCost& side) {
  return {{"cpu_user_s", side.cpu_user_s},
          {"cpu_system_s", side.cpu_system_s},
          {"sndbuf_bytes", side.sndbuf_bytes},
          {"rcvbuf_bytes", side.rcvbuf_bytes}};
}

// null for plain TCP runs, so that every run has the same fields.
ordered_json or_null(const std::string& value, Mode mode) {
  if (mode != Mode::tls) return nullptr;
  return value;
}

ordered_json to_json(const measure::RunResult& run, const measure::TestParameters& parameters) {
  return {{"round", run.round},
          {"mode", to_string(run.mode)},
          {"direction", to_string(parameters.direction)},
          {"bytes", run.bytes},
          {"chunk_bytes", parameters.chunk_bytes},
          {"transfer_us", run.transfer_us},
          {"sender_us", run.sender_us},
          {"handshake_us", run.handshake_us},
          {"mbytes_per_s", run.mbytes_per_s()},
          {"tls_version", or_null(run.tls.version, run.mode)},
          {"cipher", or_null(run.tls.cipher, run.mode)},
          {"group", or_null(run.tls.group, run.mode)},
          {"certificate_key_type", or_null(run.tls.certificate_key_type, run.mode)},
          {"client", to_json(run.client)},
          {"server", to_json(run.server)}};
}

}  // namespace

std::string render_json(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  const measure::Environment& e = c.environment;
  ordered_json modes = json::array();
  for (Mode mode : p.modes)
    modes.push_back(to_string(mode));

  ordered_json runs = json::array();
  for (const auto& run : c.runs)
    runs.push_back(to_json(run, p));

  ordered_json summary = json::object();
  for (const auto& stats : c.stats) {
    summary[to_string(stats.mode)] = {{"runs", stats.transfer_us.count},
                                      {"transfer_us", to_json(stats.transfer_us)},
                                      {"sender_us", to_json(stats.sender_us)},
                                      {"handshake_us", to_json(stats.handshake_us)},
                                      {"mbytes_per_s", to_json(stats.mbytes_per_s)}};
  }
  summary["tls_over_tcp_transfer_time"] = c.tls_over_tcp ? to_json(*c.tls_over_tcp) : ordered_json(nullptr);

  ordered_json out = {
      {"tlscmp_version", e.client_version},
      {"test",
       {{"host", p.host},
        {"port", p.port},
        {"embedded_server", p.embedded_server},
        {"modes", modes},
        {"direction", to_string(p.direction)},
        {"bytes", p.bytes},
        {"chunk_bytes", p.chunk_bytes},
        {"rounds", p.rounds},
        {"no_delay", p.no_delay}}},
      {"environment",
       {{"client",
         {{"tlscmp_version", e.client_version},
          {"tls_library", e.client_tls_library},
          {"cpu_model", e.client_cpu_model},
          {"kernel", e.client_kernel}}},
        {"server",
         {{"tlscmp_version", e.server_version},
          {"tls_library", e.server_tls_library},
          {"cpu_model", e.server_cpu_model}}}}},
      {"runs", runs},
      {"summary", summary},
      {"error", c.error.empty() ? ordered_json(nullptr) : ordered_json(c.error)},
  };
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace tlscmp::report
