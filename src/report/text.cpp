#include <fmt/format.h>
#include <algorithm>

#include "endpoint.hpp"
#include "kinds/kind.hpp"
#include "render/render.hpp"
#include "report/report.hpp"

namespace tlscmp::report {
namespace {

std::string describe_direction(Direction direction) {
  return direction == Direction::client_to_server ? "client -> server" : "server -> client (-R)";
}

std::string describe_host(const std::string& library, const std::string& cpu, const std::string& features,
                          const std::string& kernel) {
  return fmt::format("{} on {} [{}], {}", library, cpu,
                     features.empty() ? "no crypto extensions seen" : features, kernel);
}

}  // namespace

std::string render_text(const measure::Comparison& c) {
  return render_text_header(c.parameters, c.environment.client_version) + render_text_body(c);
}

std::string render_text_header(const measure::TestParameters& p, const std::string& version) {
  std::string out;
  out += fmt::format("tlscmp {}: {}, {}{}\n", version, describe_direction(kinds::direction_of(p.test)),
                     host_port(p.host, p.port), p.embedded_server ? " (embedded server)" : "");
  const kinds::KindSlice& kind = kinds::slice_of(p.test.kind);
  if (kind.text_header != nullptr) out += kind.text_header(p);
  return out;
}

std::string render_text_body(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  const measure::Environment& e = c.environment;
  std::string out;
  const std::string client_host =
      describe_host(e.client_tls_library, e.client_cpu_model, e.client_cpu_features, e.client_kernel);
  const std::string server_host =
      describe_host(e.server_tls_library, e.server_cpu_model, e.server_cpu_features, e.server_kernel);
  if (!e.server_tls_library.empty()) {
    out += client_host == server_host ? fmt::format("client and server: {}\n", client_host)
                                      : fmt::format("client: {}\nserver: {}\n", client_host, server_host);
  }
  const kinds::KindSlice& kind = kinds::slice_of(p.test.kind);
  if (kind.text_runs != nullptr) out += kind.text_runs(c);
  for (const std::string& note : c.notes)
    out += fmt::format("note: {}\n", note);
  if (kind.text_headline != nullptr) out += kind.text_headline(c);
  if (c.auto_repeat) out += fmt::format("\n{}", render::render_auto_repeat(*c.auto_repeat));
  if (c.interrupted) out += "\ninterrupted: the figures above are partial\n";
  // An error is not repeated here: main prints it once, on stderr.
  return out;
}

}  // namespace tlscmp::report
