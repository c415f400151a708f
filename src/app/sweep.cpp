#include "app/sweep.hpp"

#include "app/client.hpp"

namespace tlscmp::app {

using results::SweepGridPoint;
using results::SweepPoint;

std::vector<SweepPoint> run_sweep(const results::SweepConfig& sweep, measure::TransferObserver* observer) {
  const auto grid = results::sweep_grid(sweep);
  std::vector<session::ClientConfig> configs;
  for (const SweepGridPoint& point : grid)
    configs.push_back(results::point_config(sweep.base, point));  // all checked first

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
