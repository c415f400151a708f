#include "kinds/kind.hpp"
#include "report/report.hpp"

namespace tlscmp::report {

std::string render_csv(const measure::Comparison& c) {
  const kinds::KindSlice& kind = kinds::slice_of(c.parameters.test.kind);
  return kind.csv != nullptr ? kind.csv(c) : std::string();
}

}  // namespace tlscmp::report
