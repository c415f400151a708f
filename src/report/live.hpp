#pragma once

// Live views of a run as it goes, for people: never with -J or --csv.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/intervals.hpp"

namespace tlscmp::report {

// -i: one line per interval of this side's view, as the run goes: what
// this side sent (as sender) or received (as receiver) in each interval.
class IntervalLines final : public measure::TransferObserver {
 public:
  // `verb` says what this side does with the bytes: "sent" or "received".
  IntervalLines(std::FILE* out, std::chrono::milliseconds period, std::string verb)
      : out_(out), period_(period), verb_(std::move(verb)) {}
  // The report's first lines, so that they come before the live ones.
  void begin_comparison(const measure::TestParameters& parameters) override;
  void begin_run(const std::string& label) override { label_ = label; }
  std::chrono::milliseconds tick_period() const override { return period_; }
  void on_tick(const measure::Interval& last, std::uint64_t total_bytes) override;
  void on_transactions(const measure::TransactionTick& tick) override;
  void on_end() override {}

 private:
  std::FILE* out_;
  std::chrono::milliseconds period_;
  std::string verb_;
  std::string label_;
};

// A one-line progress bar on a terminal, redrawn four times a second once a
// run has taken a second, and wiped when the run ends.
class ProgressBar final : public measure::TransferObserver {
 public:
  // One of the three is non-zero: the bytes of a run, its seconds (-t), or
  // its transactions (--rr -n).
  ProgressBar(std::FILE* out, std::uint64_t run_bytes, double run_seconds, std::uint64_t run_transactions = 0)
      : out_(out), run_bytes_(run_bytes), run_seconds_(run_seconds), run_transactions_(run_transactions) {}
  void begin_run(const std::string& label) override { label_ = label; }
  std::chrono::milliseconds tick_period() const override { return std::chrono::milliseconds(250); }
  void on_tick(const measure::Interval& last, std::uint64_t total_bytes) override;
  void on_transactions(const measure::TransactionTick& tick) override;
  void on_end() override;

 private:
  void draw(double fraction, const std::string& figures);

  std::FILE* out_;
  std::uint64_t run_bytes_;
  double run_seconds_;
  std::uint64_t run_transactions_;
  std::string label_;
  bool drawn_ = false;
};

// --json-stream: a JSON object per line as the comparison goes, for a
// dashboard to follow: "start" (the test), "run_start", "interval" (with -i),
// "run" (each run as -J lists it); main prints the "end" line (all of -J).
class JsonStream final : public measure::TransferObserver {
 public:
  JsonStream(std::FILE* out, std::chrono::milliseconds period) : out_(out), period_(period) {}
  void begin_comparison(const measure::TestParameters& parameters) override;
  void begin_run(const std::string& label) override;
  std::chrono::milliseconds tick_period() const override { return period_; }
  void on_tick(const measure::Interval& last, std::uint64_t total_bytes) override;
  void on_transactions(const measure::TransactionTick& tick) override;
  void on_end() override {}
  void end_run(const measure::Comparison& comparison) override;

 private:
  void line(const nlohmann::ordered_json& event);

  std::FILE* out_;
  std::chrono::milliseconds period_;
  std::string label_;
};

// The "end" line of --json-stream: the whole -J object, on one line.
std::string render_json_stream_end(const measure::Comparison& comparison);

}  // namespace tlscmp::report
