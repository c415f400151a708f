#include "results/sweep.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "error.hpp"
#include "kinds/kind.hpp"

namespace tlscmp::results {

session::ClientConfig point_config(const session::ClientConfig& base, const SweepGridPoint& point) {
  session::ClientConfig c = base;
  for (const auto& [axis, value] : point)
    value->apply(c);
  // Values that cannot run together are refused here, before anything runs.
  const std::string where =
      point.empty() ? std::string("the sweep")
                    : fmt::format("the point {}={}", point.front().first->name, point.front().second->text);
  for (Mode mode : c.modes) {
    try {
      kinds::check_test(c.test, mode);
    } catch (const spec::Invalid& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
  }
  try {
    kinds::check_host(c);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", where, e.what()));
  }
  if (!c.tls_policy.cipher.empty() && std::none_of(c.modes.begin(), c.modes.end(), [](Mode m) { return facts(m).tls_over_tcp; })) {
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
