#pragma once

#include <cstddef>
#include <span>

namespace tlscmp::measure {

// Summary of a sample. An empty sample gives count 0 and zeros.
struct Summary {
  std::size_t count = 0;
  double min = 0;
  double median = 0;  // middle value; the mean of the two middle values for an even count
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for fewer than two values
};

Summary summarize(std::span<const double> values);

}  // namespace tlscmp::measure
