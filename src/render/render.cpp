#include "render/render.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <cmath>

#include "measure/stats.hpp"

namespace tlscmp::render {

using nlohmann::ordered_json;

ordered_json summary_json(const measure::Summary& s) {
  return {{"count", s.count}, {"min", s.min},       {"median", s.median}, {"max", s.max},
          {"mean", s.mean},   {"stddev", s.stddev}, {"p99", s.p99}};
}

ordered_json ratio_json(const measure::Summary& ratios, const std::optional<measure::Interval95>& ci) {
  ordered_json out = summary_json(ratios);
  out["ci95_low"] = ci ? ordered_json(ci->low) : ordered_json(nullptr);
  out["ci95_high"] = ci ? ordered_json(ci->high) : ordered_json(nullptr);
  return out;
}

ordered_json ratio_json(const std::optional<measure::PairedRatio>& r) {
  if (!r) return nullptr;
  return ratio_json(r->ratio, r->ci);
}

std::string library_line(const std::string& library, const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    out += (out.empty() ? "" : "; ") + part;
  }
  return out.empty() ? std::string() : fmt::format("{}: {}\n", library, out);
}

std::string against_first(double mine, double first, const std::string& whose, const std::string& what) {
  if (!(mine > 0) || !(first > 0)) return {};
  return fmt::format("{:.2f}x {} {}", mine / first, whose, what);
}

ordered_json over_twin_json(Mode mode, const std::string& variant, const char* figure,
                            const std::optional<measure::PairedRatio>& ratio) {
  if (!ratio) return nullptr;
  return {{"variant", twin_of(mode, variant)}, {figure, ratio_json(ratio)}};
}

ordered_json latency_json(const measure::LatencySummary& l) {
  return {{"min", l.min},   {"p50", l.p50}, {"p90", l.p90},  {"p99", l.p99},
          {"p999", l.p999}, {"max", l.max}, {"mean", l.mean}};
}

std::string figure_text(double value) {
  if (std::isnan(value)) return "-";
  if (value == 0) return "0";
  // Rounded to four significant digits, then as many decimals as keep them
  // (999.96 rounds to 1,000: its magnitude is taken again).
  const auto magnitude = [](double v) { return static_cast<int>(std::floor(std::log10(std::fabs(v)))); };
  const double scale = std::pow(10.0, magnitude(value) - 3);
  value = std::round(value / scale) * scale;
  const int decimals = std::max(0, 3 - magnitude(value));
  const std::string text = fmt::format("{:.{}f}", value, decimals);
  // Commas between groups of three integer digits.
  const std::size_t sign = text[0] == '-' ? 1 : 0;
  const std::size_t point = std::min(text.find('.'), text.size());
  std::string grouped = text.substr(0, sign);
  for (std::size_t i = sign; i < point; ++i) {
    if (i > sign && (point - i) % 3 == 0) grouped += ',';
    grouped += text[i];
  }
  return grouped + text.substr(point);
}

std::string ratio_text(const std::optional<measure::PairedRatio>& r) {
  if (!r) return "-";
  return fmt::format("{:.2f}x", r->ratio.median);
}

std::string pairs_text(std::size_t pairs) {
  return fmt::format("({} pair{}{})", pairs, pairs == 1 ? "" : "s",
                     pairs == 1 ? "; --repeat for an interval" : ", bootstrap");
}

std::string ratio_sentence(const char* what, const std::optional<measure::PairedRatio>& r) {
  if (!r) return "";
  std::string text = fmt::format("{} {:.2f}x", what, r->ratio.median);
  if (r->ci) text += fmt::format(" (95% CI {:.2f}x - {:.2f}x)", r->ci->low, r->ci->high);
  return text;
}

ordered_json tls_or_null(const std::string& value, Mode mode) {
  if (!is_tls_stream(mode)) return nullptr;
  return value;
}

ComparedModes compared_modes(const measure::TestParameters& p, Mode usual_baseline, Mode usual_other) {
  if (p.modes.size() == 2 && is_datagram(p.modes.front()) == is_datagram(usual_baseline))
    return {to_string(p.modes.front()), to_string(p.modes.back())};
  return {to_string(usual_baseline), to_string(usual_other)};
}

std::string ComparedModes::title() const {
  std::string text = other + "/" + baseline;
  for (char& c : text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string ci_method() {
  return "percentile bootstrap of the median over the paired rounds, " +
         std::to_string(measure::kBootstrapResamples) + " resamples";
}

std::string rounds_text(const measure::TestParameters& p) {
  if (!p.auto_repeat) return fmt::format("{} round{}", p.rounds, p.rounds == 1 ? "" : "s");
  const measure::AutoRepeat& a = *p.auto_repeat;
  return fmt::format(
      "{} to {} rounds until each {} ratio's 95% CI is within {:g}% of its median (--repeat "
      "auto{})",
      a.min_rounds, compared_modes(p, Mode::tcp, Mode::tls).title(), a.max_rounds, 100 * a.ci_target,
      a.max_time_s > 0 ? fmt::format(", at most {:g} s", a.max_time_s) : "");
}

std::string render_auto_repeat(const measure::AutoRepeatOutcome& o) {
  const measure::StopDecision& d = o.decision;
  const std::string width = d.widest ? fmt::format("the widest, {}'s, is within {:.1f}% of its median",
                                                   d.widest_label, 100 * *d.widest)
                                     : "no ratio has an interval yet";
  const std::string rounds = fmt::format("{} round{}", o.rounds, o.rounds == 1 ? "" : "s");
  switch (d.reason) {
    case measure::StopReason::ci_target:
      return fmt::format("--repeat auto: {}: every ratio's 95% CI is within the {:g}% target; {}\n", rounds,
                         100 * o.rule.ci_target, width);
    case measure::StopReason::max_rounds:
      return fmt::format(
          "--repeat auto: stopped at --max-rounds {} short of the {:g}% target: {}; the runs "
          "vary too much to say it closer: more rounds (--max-rounds), -A, or a quieter machine\n",
          o.rule.max_rounds, 100 * o.rule.ci_target, width);
    case measure::StopReason::max_time:
      return fmt::format(
          "--repeat auto: stopped after {} at --max-time {:g} s, short of the {:g}% target: {}\n", rounds,
          o.rule.max_time_s, 100 * o.rule.ci_target, width);
    case measure::StopReason::none:
      break;
  }
  return fmt::format("--repeat auto: ended after {} (interrupted or failed); {}\n", rounds, width);
}

std::string thousands(double value) {
  if (value < 100) return fmt::format("{:.1f}", value);
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace tlscmp::render
