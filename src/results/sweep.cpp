#include "results/sweep.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "error.hpp"

namespace tlscmp::results {

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
  if (is_request_response(c.kind) &&
      (c.msg_size > 0 || c.framing != framing::Framing::raw || c.read_size > 0)) {
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

}  // namespace tlscmp::results
