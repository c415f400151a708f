#include "report/live.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "report/report.hpp"
#include "version.hpp"

namespace tlscmp::report {

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

void ProgressBar::on_tick(const measure::Interval& last, std::uint64_t total_bytes) {
  if (last.end_s < 1.0) return;  // short runs go by without a bar
  const double done = run_bytes_ > 0 ? static_cast<double>(total_bytes) / static_cast<double>(run_bytes_)
                                     : last.end_s / run_seconds_;
  const double fraction = std::clamp(done, 0.0, 1.0);
  constexpr std::size_t kWidth = 30;
  const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(kWidth));
  fmt::print(out_, "\r\x1b[K[{}] [{}{}] {:3.0f}% {} {:.1f} MB/s", label_, std::string(filled, '#'),
             std::string(kWidth - filled, '.'), fraction * 100, format_bytes(total_bytes),
             last.mbytes_per_s());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::on_end() {
  if (!drawn_) return;
  fmt::print(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace tlscmp::report
