#include "app/sweep.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "app/client.hpp"
#include "error.hpp"
#include "protocol/messages.hpp"

namespace tlscmp::app {

session::ClientConfig point_config(const session::ClientConfig& base, const SweepGridPoint& point) {
  session::ClientConfig c = base;
  for (const auto& [axis, value] : point)
    value->apply(c);
  // Values that cannot run together are refused here, before anything runs.
  const std::string where =
      point.empty() ? std::string("the sweep")
                    : fmt::format("the point {}={}", point.front().first->name, point.front().second->text);
  if (c.framing == framing::Framing::len4 && c.msg_size == 0) {
    throw UsageError(fmt::format("{}: len4 framing needs a message size (--msg-size)", where));
  }
  if (c.rr_request_bytes > 0 && (c.msg_size > 0 || c.framing != framing::Framing::raw || c.read_size > 0)) {
    throw UsageError(
        fmt::format("{}: request/response tests (--rr) take no message size, framing or read size", where));
  }
  if (c.msg_size > c.max_msg) throw UsageError(fmt::format("{}: the message size is above --max-msg", where));
  if (!c.tls_policy.cipher.empty() && std::find(c.modes.begin(), c.modes.end(), Mode::tls) == c.modes.end()) {
    throw UsageError(fmt::format("{}: a cipher needs the tls mode", where));
  }
  return c;
}

std::vector<SweepGridPoint> sweep_grid(const SweepConfig& sweep) {
  std::vector<SweepGridPoint> grid{{}};
  for (const SweepAxis& axis : sweep.axes) {
    std::vector<SweepGridPoint> next;
    for (const SweepGridPoint& point : grid) {
      for (const SweepValue& value : axis.values) {
        SweepGridPoint extended = point;
        extended.emplace_back(&axis, &value);
        next.push_back(std::move(extended));
      }
    }
    grid = std::move(next);
  }
  return grid;
}

std::vector<SweepPoint> run_sweep(const SweepConfig& sweep, measure::TransferObserver* observer) {
  const auto grid = sweep_grid(sweep);
  std::vector<session::ClientConfig> configs;
  for (const SweepGridPoint& point : grid)
    configs.push_back(point_config(sweep.base, point));  // all checked first

  std::vector<SweepPoint> points;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    std::vector<std::pair<std::string, std::string>> settings;
    for (const auto& [axis, value] : grid[i])
      settings.emplace_back(axis->name, value->text);
    points.push_back({std::move(settings), run_client(configs[i], observer)});
    const measure::Comparison& c = points.back().comparison;
    if (c.interrupted || !c.error.empty()) break;
  }
  return points;
}

}  // namespace tlscmp::app
