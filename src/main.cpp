// tlscmp: what TLS costs over plain TCP. Parses the command line, runs the
// subcommand, and maps every failure to one line on stderr and an exit code.

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <variant>

#include <fmt/format.h>

#include "app/client.hpp"
#include "app/commands.hpp"
#include "app/speed.hpp"
#include "app/sweep.hpp"
#include "cli/options.hpp"
#include "error.hpp"
#include "kinds/kind.hpp"
#include "measure/clock.hpp"
#include "report/compare.hpp"
#include "report/html.hpp"
#include "report/live.hpp"
#include "report/merge.hpp"
#include "report/report.hpp"
#include "report/speed.hpp"
#include "report/sweep.hpp"
#include "results/result_file.hpp"
#include "transport/descriptors.hpp"

namespace {

constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it

// Through stdio, not a stream, for errno: a full disk is named as such. The
// last of the text may fail only as the file is closed.
void write_file(const std::string& path, const std::string& text) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) throw tlscmp::Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const int write_errno = errno;
  if (std::fclose(out) != 0 || !wrote) {
    throw tlscmp::Error(
        fmt::format("cannot write '{}': {}", path, std::strerror(wrote ? errno : write_errno)));
  }
}

// The report on standard output, checked: a full disk or a closed pipe is a
// failure, not a silent exit 0. A short report sits in stdio's buffer until
// the flush, so the flush is checked too, and the error flag that failed -i
// lines left.
void print_stdout(const std::string& text) {
  errno = 0;
  const bool wrote = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  const bool flushed = std::fflush(stdout) == 0;
  if (wrote && flushed && std::ferror(stdout) == 0) return;
  throw tlscmp::Error(fmt::format("cannot write to standard output: {}",
                                  errno != 0 ? std::strerror(errno) : "an earlier write failed"));
}

// --html and tlscmp report: the page, from results as JSON.
void write_report(const std::string& path, std::vector<tlscmp::report::ReportInput> inputs) {
  write_file(path, tlscmp::report::render_html(inputs));
  fmt::print(stderr, "wrote the report {}\n", path);
}

// --html FILE: refused before a run that could not keep its page, not after it.
void check_writable(const std::string& path) {
  const bool existed = std::filesystem::exists(path);
  std::ofstream probe(path, std::ios::binary | std::ios::app);
  if (!probe) {
    throw tlscmp::UsageError(fmt::format(
        "--html {}: cannot write there ({}): give a path in a writable folder", path, std::strerror(errno)));
  }
  probe.close();
  if (!existed) std::filesystem::remove(path);
}

tlscmp::report::ReportInput input_of(const std::string& label, const std::string& json_text) {
  return {label, nlohmann::json::parse(json_text)};
}

int run_report(const tlscmp::cli::ReportCommand& command) {
  using namespace tlscmp;
  std::vector<report::ReportInput> inputs;
  for (const std::string& path : command.paths) {
    nlohmann::json j = results::read_json_file(path);
    if (const std::string problem = report::report_problem(j); !problem.empty()) {
      throw UsageError(
          fmt::format("'{}' cannot be drawn: {}; give results of tlscmp client -J or sweep --out "
                      "from this tlscmp",
                      path, problem));
    }
    inputs.push_back({std::filesystem::path(path).stem().string(), std::move(j)});
  }
  write_report(command.out, std::move(inputs));
  return 0;
}

// Settings that run, but badly: said before the run, not noticed after it.
void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings)
    fmt::print(stderr, "tlscmp: {}\n", warning);
}

// --start-at: when the first run starts, in UTC and in this host's time, and
// how far off, so that a wait is not taken for a hang. A time already past
// says nothing here: the client refuses it, or starts within --max-skew.
void print_start_time(std::int64_t start_ns) {
  const double in_s = static_cast<double>(start_ns - tlscmp::measure::wall_ns()) / 1e9;
  if (in_s <= 0) return;
  const std::int64_t start_ms = (start_ns + 500'000) / 1'000'000;  // @1796117400.25 is 0.2499999 s in
  const auto whole = static_cast<std::time_t>(start_ms / 1000);
  const std::int64_t ms = start_ms % 1000;
  std::tm utc{};
  std::tm local{};
  ::gmtime_r(&whole, &utc);
  ::localtime_r(&whole, &local);
  char utc_text[32] = {};
  char local_text[48] = {};
  std::strftime(utc_text, sizeof utc_text, "%Y-%m-%d %H:%M:%S", &utc);
  std::strftime(local_text, sizeof local_text,
                local.tm_mday == utc.tm_mday ? "%H:%M:%S %Z" : "%Y-%m-%d %H:%M:%S %Z", &local);
  const auto left_s = static_cast<long>(std::lround(in_s));
  const std::string left = left_s >= 3600 ? fmt::format(" ({} h {} min)", left_s / 3600, left_s % 3600 / 60)
                           : left_s >= 60 ? fmt::format(" ({} min {} s)", left_s / 60, left_s % 60)
                                          : "";
  fmt::print(stderr, "tlscmp: the first run starts at {}{} UTC ({} here), in {} s{}\n", utc_text,
             ms != 0 ? fmt::format(".{:03}", ms) : "", local_text, left_s, left);
}

int run_sweep(const tlscmp::cli::SweepCommand& sweep) {
  using namespace tlscmp;
  if (!sweep.html_path.empty()) check_writable(sweep.html_path);
  print_warnings(sweep.warnings);
  std::unique_ptr<measure::TransferObserver> live;
  if (::isatty(STDERR_FILENO) != 0) {
    const kinds::LiveGoal goal = kinds::live_goal(sweep.config.base.test);
    live = std::make_unique<report::ProgressBar>(stderr, goal.bytes, goal.seconds, goal.transactions);
  }
  const std::vector<results::SweepPoint> points = app::run_sweep(sweep.config, live.get());
  print_stdout(report::render_sweep_markdown(points));
  write_file(sweep.out_prefix + ".csv", report::render_sweep_csv(points));
  write_file(sweep.out_prefix + ".json", report::render_sweep_json(points));
  print_stdout(fmt::format("\nwrote {}.csv and {}.json\n", sweep.out_prefix, sweep.out_prefix));
  if (!sweep.html_path.empty())
    write_report(sweep.html_path, {input_of(sweep.out_prefix, report::render_sweep_json(points))});
  for (const results::SweepPoint& point : points) {
    if (point.comparison.interrupted) {
      fmt::print(stderr, "tlscmp: interrupted; the files hold the points measured until then\n");
      return kExitInterrupted;
    }
    if (!point.comparison.error.empty()) {
      fmt::print(stderr, "tlscmp: error: {}\n", point.comparison.error);
      return kExitRunFailed;
    }
  }
  return 0;
}

// Live views are for people: none with -J or --csv, a bar only on a terminal.
std::unique_ptr<tlscmp::measure::TransferObserver> live_view(const tlscmp::cli::ClientCommand& client) {
  using namespace tlscmp;
  const session::ClientConfig& config = client.config;
  std::unique_ptr<measure::TransferObserver> live;
  if (client.format == session::OutputFormat::json_stream) {
    live = std::make_unique<report::JsonStream>(stdout, config.test.interval());
  } else if (client.format == session::OutputFormat::text) {
    if (config.test.interval().count() > 0) {
      live = std::make_unique<report::IntervalLines>(
          stdout, config.test.interval(),
          kinds::direction_of(config.test) == Direction::client_to_server ? "sent" : "received");
    } else if (::isatty(STDERR_FILENO) != 0) {
      // The bar follows the streams that go the test's way, added up.
      const kinds::LiveGoal goal = kinds::live_goal(config.test);
      live = std::make_unique<report::ProgressBar>(stderr, goal.bytes, goal.seconds, goal.transactions);
    }
  }
  return live;
}

// The comparison as the client's format asks: -J, --json-stream's last line, --csv or the text.
void print_comparison(const tlscmp::cli::ClientCommand& client,
                      const tlscmp::measure::Comparison& comparison) {
  using namespace tlscmp;
  const session::ClientConfig& config = client.config;
  switch (client.format) {
    case session::OutputFormat::json:
      print_stdout(report::render_json(comparison));
      break;
    case session::OutputFormat::json_stream:
      print_stdout(report::render_json_stream_end(comparison));
      break;
    case session::OutputFormat::csv:
      print_stdout(report::render_csv(comparison));
      break;
    case session::OutputFormat::text:
      // With -i the header came first, before the live lines.
      print_stdout(config.test.interval().count() > 0 ? report::render_text_body(comparison)
                                                      : report::render_text(comparison));
      break;
  }
}

// kTLS asked for where a kernel cannot do it: say so in one line; the runs
// went on in user space, and the results say so per direction.
void note_no_ktls(const tlscmp::measure::Comparison& comparison) {
  using namespace tlscmp;
  const measure::Environment& e = comparison.environment;
  std::string sides;
  std::string ulps;
  for (const auto& [side, list] :
       {std::pair{"client", e.client_tls_ulps}, std::pair{"server", e.server_tls_ulps}}) {
    if (list.empty() || (" " + list + " ").find(" tls ") != std::string::npos) continue;
    sides += sides.empty() ? side : std::string(" and ") + side;
    ulps = list;
  }
  if (!sides.empty()) {
    fmt::print(stderr,
               "tlscmp: kTLS: no tls ULP in the kernel of the {} (tcp_available_ulp: {}), so TLS ran in "
               "user space\n",
               sides, ulps);
  }
}

int run_client_command(const tlscmp::cli::ClientCommand& client) {
  using namespace tlscmp;
  const session::ClientConfig& config = client.config;
  if (!client.html_path.empty()) check_writable(client.html_path);
  print_warnings(client.warnings);
  if (config.start_at_ns) print_start_time(*config.start_at_ns);
  const std::unique_ptr<measure::TransferObserver> live = live_view(client);
  const measure::Comparison comparison = app::run_client(config, live.get());
  print_comparison(client, comparison);
  if (!client.html_path.empty())
    write_report(client.html_path, {input_of("result", report::render_json(comparison))});
  if (config.tls_policy.ktls) note_no_ktls(comparison);
  if (comparison.interrupted) {
    fmt::print(stderr, "tlscmp: interrupted; the report holds what was measured until then\n");
    return kExitInterrupted;
  }
  if (!comparison.error.empty()) {
    fmt::print(stderr, "tlscmp: error: {}\n", comparison.error);
    return kExitRunFailed;
  }
  return 0;
}

// tlscmp speed: a progress line on a terminal while it measures, then the figures.
int run_speed(const tlscmp::cli::SpeedCommand& command) {
  using namespace tlscmp;
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const std::vector<measure::SpeedResults> results =
      app::run_speed(command.config, [terminal](const std::string& figure, int number, int figures) {
        if (terminal) fmt::print(stderr, "\r\033[Kspeed: {} ({}/{})", figure, number, figures);
      });
  if (terminal) fmt::print(stderr, "\r\033[K");
  print_stdout(command.json ? report::render_speed_json(results) : report::render_speed_text(results));
  return 0;
}

int run(const tlscmp::cli::Command& command) {
  using namespace tlscmp;
  if (const auto* help = std::get_if<cli::HelpRequest>(&command)) {
    print_stdout(help->text);
    return help->exit_code;
  }
  if (const auto* certs = std::get_if<session::CertsConfig>(&command)) {
    app::write_certificates(*certs);
    return 0;
  }
  if (const auto* server = std::get_if<session::ServerConfig>(&command)) {
    app::run_server(*server);
    return 0;
  }
  if (const auto* sweep = std::get_if<cli::SweepCommand>(&command)) return run_sweep(*sweep);
  if (const auto* page = std::get_if<cli::ReportCommand>(&command)) return run_report(*page);
  if (const auto* speed = std::get_if<cli::SpeedCommand>(&command)) return run_speed(*speed);
  if (const auto* merge = std::get_if<cli::MergeCommand>(&command)) {
    const results::MergeResult result = results::merge_results(merge->config);
    print_stdout(merge->json ? report::render_merge_json(result) : report::render_merge_text(result));
    return 0;
  }
  if (const auto* compare = std::get_if<cli::CompareCommand>(&command)) {
    const results::CompareResult result = results::compare_results(compare->config);
    print_stdout(compare->json ? report::render_compare_json(result) : report::render_compare_text(result));
    return result.failed ? kExitRunFailed : 0;
  }
  return run_client_command(std::get<cli::ClientCommand>(command));
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that vanishes must be an EPIPE error, never a fatal signal (OpenSSL
  // writes to the socket with write(2), which raises SIGPIPE).
  std::signal(SIGPIPE, SIG_IGN);
  // A socket per connection: the server's --max-connections (held to the
  // hard limit as it is parsed), a client's connectors, or both in one
  // process with the embedded server; the default soft limit is often 1,024.
  tlscmp::raise_descriptor_limit();
  try {
    return run(tlscmp::cli::parse_command_line(argc, argv));
  } catch (const tlscmp::UsageError& e) {
    fmt::print(stderr, "tlscmp: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tlscmp: error: {}\n", e.what());
    return kExitRunFailed;
  }
}
