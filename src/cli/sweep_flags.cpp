#include "cli/sweep_flags.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <functional>
#include <tuple>

#include "error.hpp"

namespace tlscmp::cli {
namespace {

// The settings every kind shares that a sweep takes lists of, with their
// place among the kinds' (kinds::SweepSetting::order).
struct SweepList {
  const char* name;
  const char* flags;
  std::vector<std::string> SweepFlags::*values;
  const char* help;
  int order;
};
constexpr SweepList kSharedLists[] = {
    {"length", "-l,--length", &SweepFlags::lengths, "Chunk sizes", 20},
    {"window", "-w,--window", &SweepFlags::windows, "SO_SNDBUF and SO_RCVBUF on both ends", 30},
    {"sndbuf", "--sndbuf", &SweepFlags::sndbufs, "SO_SNDBUF on both ends", 40},
    {"rcvbuf", "--rcvbuf", &SweepFlags::rcvbufs, "SO_RCVBUF on both ends", 50},
    {"cipher", "--cipher", &SweepFlags::ciphers, "TLS suites or TLS 1.2 cipher lists", 80},
};

// A kind's setting that a sweep takes lists of, by its name; null if none is.
const kinds::SweepSetting* kind_setting(const std::string& name) {
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    for (const kinds::SweepSetting& setting : kind->sweep_settings) {
      if (name == setting.name) return &setting;
    }
  }
  return nullptr;
}

// A swept setting's values, each parsed and checked as its flag would be,
// and kept typed: the sweep applies them without parsing again.
results::SweepAxis sweep_axis(const std::string& name, const std::vector<std::string>& texts) {
  results::SweepAxis axis{name, {}};
  const std::string flag = "--" + name;
  for (const std::string& text : texts) {
    std::function<void(session::ClientConfig&)> apply;
    if (name == "length") {
      const auto n = static_cast<std::uint32_t>(parse_size(text, flag, 1, protocol::kMaxChunkBytes));
      apply = [n](session::ClientConfig& c) { c.test.chunk_bytes = n; };
    } else if (name == "window" || name == "sndbuf" || name == "rcvbuf") {
      const auto n =
          static_cast<std::uint32_t>(parse_size(text, flag, 1024, protocol::kMaxSocketBufferBytes));
      const bool send = name != "rcvbuf";
      const bool receive = name != "sndbuf";
      apply = [n, send, receive](session::ClientConfig& c) {
        if (send) c.test.sndbuf_bytes = n;
        if (receive) c.test.rcvbuf_bytes = n;
      };
    } else if (name == "cipher") {
      apply = [text](session::ClientConfig& c) { c.tls_policy.cipher = text; };
    } else if (const kinds::SweepSetting* setting = kind_setting(name)) {
      apply = setting->value(text);
    } else {
      throw UsageError(fmt::format("cannot sweep '{}'", name));
    }
    axis.values.push_back({text, std::move(apply)});
  }
  return axis;
}

// A sweep's lists of them: one warning naming every value that will crawl, or "".
std::string slow_buffers_warning(const SweepFlags& flags) {
  std::string given;
  for (const auto& [flag, texts] : {std::pair{"-w", &flags.windows}, std::pair{"--sndbuf", &flags.sndbufs},
                                    std::pair{"--rcvbuf", &flags.rcvbufs}}) {
    for (const std::string& text : *texts) {
      if (slow_socket_buffer(
              static_cast<std::uint32_t>(parse_size(text, flag, 1024, protocol::kMaxSocketBufferBytes))))
        given += fmt::format("{}{} {}", given.empty() ? "" : ", ", flag, text);
    }
  }
  return given.empty() ? std::string() : cli::slow_buffers_warning(given);
}

}  // namespace

void add_sweep_command(CLI::App& app, SweepFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run the comparison over a grid of settings; print a Markdown table, write CSV and JSON");
  ClientFlags& c = flags.client;
  cmd->add_option("host", c.target, "Server host name or address (none: an embedded server on loopback)");
  cmd->add_option("-p,--port", c.port, "Server port")->check(CLI::Range(1, 65535))->capture_default_str();
  cmd->add_option("--mode", c.mode, "tcp, tls, or both")
      ->check(CLI::IsMember({"tcp", "tls", "both"}))
      ->capture_default_str();
  CLI::Option* bytes = cmd->add_option("-n,--bytes", c.bytes,
                                       "Payload bytes per run (default 1G); with --rr transactions per run")
                           ->type_name("SIZE");
  cmd->add_option("-t,--time", c.time_s, "Seconds per run instead of -n")
      ->check(NumberRange(0.001, kMaxSeconds))
      ->excludes(bytes);
  cmd->add_option("-P,--parallel", c.test.streams, "Parallel streams")
      ->check(CLI::Range(1, static_cast<int>(protocol::kMaxStreams)));
  cmd->add_option("--repeat", c.repeat, "Rounds per point (default 5)")->check(CLI::Range(1, kMaxRounds));
  cmd->add_option("--warmup", c.warmup_rounds, "Warm-up rounds per point")->check(CLI::Range(0, kMaxRounds));
  CLI::Option* ca =
      cmd->add_option("--ca", c.ca_file, "Trust the CA certificates in this PEM file")->type_name("FILE");
  cmd->add_flag("--insecure", c.insecure, "Do not verify the server's certificate")->excludes(ca);
  cmd->add_flag("--verify", c.test.verify, "Check every byte on the receiver");
  cmd->add_option("--html", c.html, "Also write a report page of the sweep to FILE (as tlscmp report makes)")
      ->type_name("FILE");
  // Each kind's flags a sweep takes as they are (-R, --threads).
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    if (kind->add_sweep_flags != nullptr) kind->add_sweep_flags(*cmd, c);
  }
  const auto list = [&](const std::string& name, std::vector<std::string>& values, const char* what) {
    cmd->add_option(name, values, what)->delimiter(',')->type_name("LIST");
  };
  for (const SweepList& shared : kSharedLists)
    list(shared.flags, flags.*shared.values, shared.help);
  // Each kind's settings, as its entry names them (--msg-size, --rr, --flows).
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    for (const kinds::SweepSetting& setting : kind->sweep_settings)
      list("--" + std::string(setting.name), flags.kind_lists[setting.name], setting.help);
  }
  cmd->add_option("--out", flags.out, "Write PREFIX.csv and PREFIX.json")
      ->type_name("PREFIX")
      ->capture_default_str();
  add_timeout_flags(cmd, c.timeouts);
}

// tlscmp sweep: the base settings as a client takes them, and the lists made
// axes, each point checked before anything runs.
SweepCommand to_sweep_command(const SweepFlags& sweep_flags, const std::string& command_line) {
  SweepCommand sweep;
  ClientFlags base_flags = sweep_flags.client;
  // A kind's swept setting makes every point a test of its kind: the base
  // is one, with the first value (in table order: rr's sizes before the
  // flows that make transactions of them).
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    for (const kinds::SweepSetting& setting : kind->sweep_settings) {
      const auto given = sweep_flags.kind_lists.find(setting.name);
      if (setting.base != nullptr && given != sweep_flags.kind_lists.end() && !given->second.empty())
        setting.base(given->second.front(), base_flags);
    }
  }
  sweep.config.base = to_client_command(base_flags).config;
  sweep.config.base.command_line = command_line;
  sweep.out_prefix = sweep_flags.out;
  sweep.html_path = sweep_flags.client.html;
  if (const std::string slow = slow_buffers_warning(sweep_flags); !slow.empty())
    sweep.warnings.push_back(slow);
  // The first axis given, in the order of the settings' `order`, makes the rows of the table.
  std::vector<std::tuple<int, const char*, const std::vector<std::string>*>> lists;
  for (const SweepList& shared : kSharedLists)
    lists.emplace_back(shared.order, shared.name, &(sweep_flags.*shared.values));
  for (const kinds::KindSlice* kind : kinds::all_kinds()) {
    for (const kinds::SweepSetting& setting : kind->sweep_settings) {
      if (const auto given = sweep_flags.kind_lists.find(setting.name); given != sweep_flags.kind_lists.end())
        lists.emplace_back(setting.order, setting.name, &given->second);
    }
  }
  std::stable_sort(lists.begin(), lists.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  // A list of one is a setting like any other, not a column of the table.
  results::SweepConfig fixed;
  for (const auto& [order, name, texts] : lists) {
    if (texts->empty()) continue;
    results::SweepAxis axis = sweep_axis(name, *texts);
    (texts->size() == 1 ? fixed.axes : sweep.config.axes).push_back(std::move(axis));
  }
  for (const results::SweepAxis& axis : fixed.axes)
    axis.values.front().apply(sweep.config.base);  // judged with the swept values, point by point
  if (sweep.config.axes.empty()) {
    (void)results::point_config(sweep.config.base, {});  // settings that cannot work say so first
    throw UsageError(
        "sweep: give at least one list of two values or more, e.g. --msg-size 10,1K (a single value is a "
        "setting, as tlscmp client takes it)");
  }
  for (const results::SweepGridPoint& point : results::sweep_grid(sweep.config))
    (void)results::point_config(sweep.config.base, point);
  return sweep;
}

}  // namespace tlscmp::cli
