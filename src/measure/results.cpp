#include "measure/results.hpp"

#include <algorithm>

namespace tlscmp::measure {

std::string headline_variant(const TestParameters& parameters, const std::vector<std::string>& compared) {
  if (parameters.modes.size() != 2) return {};
  if (compared.size() == 1) return compared.front();
  const std::string plain = to_string(parameters.modes.back());
  return std::find(compared.begin(), compared.end(), plain) != compared.end() ? plain : std::string();
}

void compute_statistics(Comparison& comparison) {
  comparison.results.compute_statistics(comparison);
}

}  // namespace tlscmp::measure
