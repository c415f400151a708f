#include "measure/change.hpp"

namespace tlscmp::measure {

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::no_change:
      return "no significant change";
    case Verdict::not_comparable:
      return "no change to measure from a median of 0";
    case Verdict::too_few_runs:
      break;
  }
  return "too few runs";
}

Change estimate_change(std::span<const double> base, std::span<const double> next, bool higher_is_better) {
  Change c;
  c.base = summarize(base);
  c.next = summarize(next);
  c.higher_is_better = higher_is_better;
  if (c.base.count == 0 || c.next.count == 0) return c;
  if (c.base.median <= 0) {
    c.verdict = Verdict::not_comparable;
    return c;
  }
  c.change = c.next.median / c.base.median - 1;
  const std::optional<Interval95> ratio = bootstrap_median_ratio_ci(base, next);
  if (!ratio) return c;
  c.ci = Interval95{ratio->low - 1, ratio->high - 1};
  const bool up = c.ci->low > 0;
  const bool down = c.ci->high < 0;
  if (!up && !down) {
    c.verdict = Verdict::no_change;
  } else {
    c.verdict = up == higher_is_better ? Verdict::faster : Verdict::slower;
  }
  return c;
}

}  // namespace tlscmp::measure
