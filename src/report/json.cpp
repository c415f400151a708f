#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "kinds/kind.hpp"
#include "render/render.hpp"
#include "report/report.hpp"

namespace tlscmp::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// --repeat auto: the rule, the rounds it took and why it stopped; null without it.
ordered_json auto_repeat_json(const measure::Comparison& c) {
  if (!c.auto_repeat) return nullptr;
  const measure::AutoRepeatOutcome& o = *c.auto_repeat;
  const char* stopped_by = measure::to_string(o.decision.reason);
  return {
      {"ci_target_percent", 100 * o.rule.ci_target},
      {"min_rounds", o.rule.min_rounds},
      {"max_rounds", o.rule.max_rounds},
      {"max_time_s", o.rule.max_time_s > 0 ? ordered_json(o.rule.max_time_s) : ordered_json(nullptr)},
      {"rounds", o.rounds},
      {"stopped_by", *stopped_by != '\0' ? ordered_json(stopped_by)
                     : c.interrupted     ? ordered_json("interrupted")
                                         : ordered_json("error")},
      {"widest_ci_half_width_percent",
       o.decision.widest ? ordered_json(100 * *o.decision.widest) : ordered_json(nullptr)},
      {"widest_variant", o.decision.widest ? ordered_json(o.decision.widest_label) : ordered_json(nullptr)}};
}

}  // namespace

nlohmann::ordered_json test_json(const measure::TestParameters& p) {
  ordered_json modes = json::array();
  for (Mode mode : p.modes)
    modes.push_back(to_string(mode));
  ordered_json variants = json::array();
  for (const std::string& v : p.variants)
    variants.push_back(v);
  ordered_json out = {{"command_line", p.command_line},       {"host", p.host}, {"port", p.port},
                      {"embedded_server", p.embedded_server}, {"modes", modes}, {"variants", variants}};
  // The test as it was sent, every kind's fields (those of the others at their defaults).
  spec::for_each_field(p.test, [&](const spec::Field& f, const auto& value) {
    ordered_json& at = out[spec::result_key(f)];
    using Value = std::decay_t<decltype(value)>;
    if constexpr (std::is_enum_v<Value>) {
      at = to_string(value);
    } else if (f.milliseconds) {
      at = static_cast<double>(value) / 1e3;
    } else {
      at = value;
    }
  });
  out["tls_version"] = p.tls_policy.version;
  out["cipher"] = p.tls_policy.cipher;
  out["groups"] = p.tls_policy.groups;
  out["ktls"] = p.tls_policy.ktls;
  out["tls_libraries"] = p.tls_policy.libraries;
  out["server_tls_library"] = p.tls_policy.server_library;
  out["quic_streams"] = p.quic_streams;
  out["client_certificate"] = p.client_certificate;
  out["kind"] = to_string(p.test.kind);
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->parameters_json != nullptr) kind->parameters_json(p, out);
  }
  out["repeat"] = p.auto_repeat ? ordered_json("auto") : ordered_json(p.rounds);
  out["rounds"] = p.rounds;
  out["warmup_rounds"] = p.warmup_rounds;
  out["start_at_ns"] = p.start_at_ns ? ordered_json(*p.start_at_ns) : ordered_json(nullptr);
  out["max_skew_s"] = p.start_at_ns ? ordered_json(p.max_skew_s) : ordered_json(nullptr);
  return out;
}

std::string render_json(const measure::Comparison& c) {
  return comparison_json(c).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

nlohmann::ordered_json last_run_json(const measure::Comparison& c) {
  const kinds::KindSlice& kind = kinds::slice_of(c.parameters.test.kind);
  return kind.last_run_json != nullptr ? kind.last_run_json(c) : ordered_json(nullptr);
}

nlohmann::ordered_json comparison_json(const measure::Comparison& c) {
  const measure::TestParameters& p = c.parameters;
  const measure::Environment& e = c.environment;
  ordered_json out = {
      {"tlscmp_version", e.client_version},
      {"test", test_json(p)},
      {"auto_repeat", auto_repeat_json(c)},
      {"clock_offset_s", c.clock_offset_s ? ordered_json(*c.clock_offset_s) : ordered_json(nullptr)},
      {"environment",
       {{"client",
         {{"tlscmp_version", e.client_version},
          {"tls_library", e.client_tls_library},
          {"cpu_model", e.client_cpu_model},
          {"cpu_features", e.client_cpu_features},
          {"kernel", e.client_kernel},
          {"tcp_available_ulp", e.client_tls_ulps}}},
        {"server",
         {{"tlscmp_version", e.server_version},
          {"tls_library", e.server_tls_library},
          {"cpu_model", e.server_cpu_model},
          {"cpu_features", e.server_cpu_features},
          {"kernel", e.server_kernel},
          {"tcp_available_ulp", e.server_tls_ulps}}}}},
  };
  // Every kind's keys, in the table's order (null or empty for another kind's).
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->json != nullptr) kind->json(c, out);
  }
  out["notes"] = c.notes;
  out["interrupted"] = c.interrupted;
  out["error"] = c.error.empty() ? ordered_json(nullptr) : ordered_json(c.error);
  return out;
}

}  // namespace tlscmp::report
