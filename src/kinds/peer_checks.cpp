#include "kinds/peer_checks.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <numeric>

namespace tlscmp::kinds {

double PeerJudge::allowed_us(double at_least_us) const {
  return std::max(wall_us_, at_least_us) * (1 + kPeerClockRateSlack) + kPeerClockSlackUs;
}

std::string PeerJudge::disagree(std::string_view claim, std::string_view seen, std::string_view field,
                                std::uint32_t part) const {
  return fmt::format("the {} reports {}, but {}: the peer's figures disagree ({}_results{} {})", peer_name(),
                     claim, seen, peer_name(), parts_ > 1 ? fmt::format("[{}]", part) : "", field);
}

std::string PeerJudge::check_window(std::string_view claim, double elapsed_us, double end_us, bool moved,
                                    std::string_view field, std::uint32_t part, double at_least_us) const {
  if (moved && elapsed_us <= 0) return disagree(claim, "nothing moves in no time", field, part);
  const double allowed = allowed_us(at_least_us);
  if (elapsed_us > allowed || end_us > allowed) {
    const std::string ends = end_us > elapsed_us ? fmt::format(", ending at {:.0f} us", end_us) : "";
    return disagree(fmt::format("{}{}", claim, ends),
                    fmt::format("the whole run took {:.0f} us on {}", wall_us_, here()), field, part);
  }
  return {};
}

std::string PeerJudge::check_cpu(double user_s, double system_s, std::uint32_t threads, std::string_view what,
                                 std::uint32_t part) const {
  const double cpu_s = user_s + system_s;
  const double allowed_s = allowed_us() / 1e6 * std::max<std::uint32_t>(threads, 1);
  if (user_s >= 0 && system_s >= 0 && cpu_s <= allowed_s) return {};
  return disagree(
      fmt::format("{:.3f} s of CPU {}", cpu_s, what),
      fmt::format("the whole run took {:.3f} s on {}, and a thread uses no more CPU than wall time",
                  wall_us_ / 1e6, here()),
      "cpu_user_s + cpu_system_s", part);
}

std::string check_intervals(const PeerJudge& judge, const SideResult& theirs) {
  if (theirs.intervals.empty()) return {};
  std::uint64_t sum = 0;
  for (const ByteInterval& i : theirs.intervals)
    sum += i.bytes;
  const double last_end_us = theirs.intervals.back().end_us;
  if (sum == theirs.bytes && last_end_us <= judge.allowed_us()) return {};
  return judge.disagree(
      fmt::format("{} intervals of {} bytes in all, the last ending at {:.0f} us", theirs.intervals.size(),
                  sum, last_end_us),
      fmt::format("they must add up to the {} bytes it reports, within the {:.0f} us the run took on {}",
                  theirs.bytes, judge.wall_us(), judge.here()),
      "intervals", theirs.stream);
}

}  // namespace tlscmp::kinds
