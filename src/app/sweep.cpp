#include "app/sweep.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "app/client.hpp"
#include "cli/size.hpp"
#include "error.hpp"
#include "protocol/messages.hpp"

namespace tlscmp::app {

ClientConfig point_config(const SweepConfig& sweep,
                          const std::vector<std::pair<std::string, std::string>>& settings) {
  ClientConfig c = sweep.base;
  auto buffer = [](const std::string& value, const char* flag) {
    return static_cast<std::uint32_t>(cli::parse_size(value, flag, 1024, protocol::kMaxSocketBufferBytes));
  };
  for (const auto& [name, value] : settings) {
    if (name == "msg-size") {
      c.msg_size = cli::parse_size(value, "--msg-size", 1, framing::kMaxMessageBytes);
    } else if (name == "length") {
      c.chunk_bytes =
          static_cast<std::uint32_t>(cli::parse_size(value, "--length", 1, protocol::kMaxChunkBytes));
    } else if (name == "framing") {
      if (value != "raw" && value != "len4")
        throw UsageError(fmt::format("--framing '{}': raw or len4", value));
      c.framing = value == "len4" ? framing::Framing::len4 : framing::Framing::raw;
    } else if (name == "window") {
      c.sndbuf_bytes = c.rcvbuf_bytes = buffer(value, "--window");
    } else if (name == "sndbuf") {
      c.sndbuf_bytes = buffer(value, "--sndbuf");
    } else if (name == "rcvbuf") {
      c.rcvbuf_bytes = buffer(value, "--rcvbuf");
    } else if (name == "read-size") {
      c.read_size =
          static_cast<std::uint32_t>(cli::parse_size(value, "--read-size", 1, protocol::kMaxChunkBytes));
    } else if (name == "cipher") {
      c.tls_policy.cipher = value;
    } else if (name == "mode") {
      if (value != "tcp" && value != "tls") throw UsageError(fmt::format("--mode '{}': tcp or tls", value));
      c.modes = {value == "tls" ? Mode::tls : Mode::tcp};
    } else {
      throw UsageError(fmt::format("cannot sweep '{}'", name));
    }
  }
  // Values that cannot run together are refused here, before anything runs.
  const std::string where =
      settings.empty() ? std::string("the sweep")
                       : fmt::format("the point {}={}", settings.front().first, settings.front().second);
  if (c.framing == framing::Framing::len4 && c.msg_size == 0) {
    throw UsageError(fmt::format("{}: len4 framing needs a message size (--msg-size)", where));
  }
  if (c.msg_size > c.max_msg) throw UsageError(fmt::format("{}: the message size is above --max-msg", where));
  if (!c.tls_policy.cipher.empty() && std::find(c.modes.begin(), c.modes.end(), Mode::tls) == c.modes.end()) {
    throw UsageError(fmt::format("{}: a cipher needs the tls mode", where));
  }
  return c;
}

std::vector<std::vector<std::pair<std::string, std::string>>> sweep_grid(const SweepConfig& sweep) {
  std::vector<std::vector<std::pair<std::string, std::string>>> grid{{}};
  for (const SweepAxis& axis : sweep.axes) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& point : grid) {
      for (const std::string& value : axis.values) {
        auto extended = point;
        extended.emplace_back(axis.name, value);
        next.push_back(std::move(extended));
      }
    }
    grid = std::move(next);
  }
  return grid;
}

std::vector<SweepPoint> run_sweep(const SweepConfig& sweep, measure::TransferObserver* observer) {
  const auto grid = sweep_grid(sweep);
  std::vector<ClientConfig> configs;
  for (const auto& settings : grid)
    configs.push_back(point_config(sweep, settings));  // all checked first

  std::vector<SweepPoint> points;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    points.push_back({grid[i], run_client(configs[i], observer)});
    const measure::Comparison& c = points.back().comparison;
    if (c.interrupted || !c.error.empty()) break;
  }
  return points;
}

}  // namespace tlscmp::app
