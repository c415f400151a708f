#include "report/live.hpp"
#include "render/render.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "report/report.hpp"
#include "version.hpp"

namespace tlscmp::report {

using render::format_bytes;

void IntervalLines::begin_comparison(const measure::TestParameters& parameters) {
  fmt::print(out_, "{}\n", render_text_header(parameters, kVersion));
  std::fflush(out_);
}

void IntervalLines::on_tick(const measure::Interval& last, std::uint64_t) {
  fmt::print(out_, "[{}] {:>16} {:>14} bytes {:>9.1f} MB/s {}\n", label_,
             fmt::format("{:.2f}-{:.2f} s", last.start_s, last.end_s), last.bytes, last.mbytes_per_s(),
             verb_);
  std::fflush(out_);
}

void IntervalLines::on_transactions(const measure::TransactionTick& tick) {
  fmt::print(out_, "[{}] {:>16} {:>14} transactions {:>9.0f} tx/s p99 {}\n", label_,
             fmt::format("{:.2f}-{:.2f} s", tick.start_s, tick.end_s), tick.transactions, tick.per_second(),
             tick.transactions > 0 ? fmt::format("{:.1f} us", tick.p99_us) : "-");
  std::fflush(out_);
}

void ProgressBar::draw(double fraction, const std::string& figures) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  constexpr std::size_t kWidth = 30;
  const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(kWidth));
  fmt::print(out_, "\r\x1b[K[{}] [{}{}] {:3.0f}% {}", label_, std::string(filled, '#'),
             std::string(kWidth - filled, '.'), fraction * 100, figures);
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::on_tick(const measure::Interval& last, std::uint64_t total_bytes) {
  if (last.end_s < 1.0) return;  // short runs go by without a bar
  const double done = run_bytes_ > 0 ? static_cast<double>(total_bytes) / static_cast<double>(run_bytes_)
                                     : last.end_s / run_seconds_;
  draw(done, fmt::format("{} {:.1f} MB/s", format_bytes(total_bytes), last.mbytes_per_s()));
}

void ProgressBar::on_transactions(const measure::TransactionTick& tick) {
  if (tick.end_s < 1.0) return;
  const double done = run_transactions_ > 0
                          ? static_cast<double>(tick.total) / static_cast<double>(run_transactions_)
                          : (run_seconds_ > 0 ? tick.end_s / run_seconds_ : 0);
  draw(done, fmt::format("{} transactions, {:.0f} tx/s", tick.total, tick.per_second()));
}

void ProgressBar::on_end() {
  if (!drawn_) return;
  fmt::print(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
}

void JsonStream::line(const nlohmann::ordered_json& event) {
  fmt::print(out_, "{}\n", event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::fflush(out_);
}

void JsonStream::begin_comparison(const measure::TestParameters& parameters) {
  line({{"event", "start"}, {"test", test_json(parameters)}});
}

void JsonStream::begin_run(const std::string& label) {
  label_ = label;
  line({{"event", "run_start"}, {"run", label}});
}

void JsonStream::on_tick(const measure::Interval& last, std::uint64_t total_bytes) {
  line({{"event", "interval"},
        {"run", label_},
        {"start_s", last.start_s},
        {"end_s", last.end_s},
        {"bytes", last.bytes},
        {"mbytes_per_s", last.mbytes_per_s()},
        {"total_bytes", total_bytes}});
}

void JsonStream::on_transactions(const measure::TransactionTick& tick) {
  line({{"event", "interval"},
        {"run", label_},
        {"start_s", tick.start_s},
        {"end_s", tick.end_s},
        {"transactions", tick.transactions},
        {"transactions_per_s", tick.per_second()},
        {"p99_us",
         tick.transactions > 0 ? nlohmann::ordered_json(tick.p99_us) : nlohmann::ordered_json(nullptr)},
        {"total_transactions", tick.total}});
}

void JsonStream::end_run(const measure::Comparison& comparison) {
  line({{"event", "run"}, {"run", label_}, {"result", last_run_json(comparison)}});
}

std::string render_json_stream_end(const measure::Comparison& comparison) {
  const nlohmann::ordered_json all = comparison_json(comparison);
  nlohmann::ordered_json end = {{"event", "end"}};
  for (const auto& [key, value] : all.items())
    end[key] = value;
  return end.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace tlscmp::report
