#include <doctest/doctest.h>

#include <vector>

#include "kinds/stream/results.hpp"
#include "measure/results.hpp"
#include "measure/run_stats.hpp"
#include "measure/stats.hpp"

using namespace tlscmp;
using namespace tlscmp::measure;
using namespace tlscmp::kinds;

TEST_CASE("summary of an odd-sized sample") {
  const std::vector<double> v{5, 1, 4, 2, 3};
  const Summary s = summarize(v);
  CHECK(s.count == 5);
  CHECK(s.min == 1);
  CHECK(s.median == 3);
  CHECK(s.max == 5);
  CHECK(s.mean == doctest::Approx(3));
  CHECK(s.stddev == doctest::Approx(1.5811388));  // sqrt(2.5)
}

TEST_CASE("the median of an even-sized sample is the mean of the middle two") {
  const std::vector<double> v{10, 40, 20, 30};
  const Summary s = summarize(v);
  CHECK(s.median == doctest::Approx(25));
  CHECK(s.mean == doctest::Approx(25));
}

TEST_CASE("the 99th percentile interpolates between the closest ranks") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i)
    v.push_back(i);  // 1..100, given in reverse
  const Summary s = summarize(v);
  // Rank 0.99 * 99 = 98.01: between 99 and 100.
  CHECK(s.p99 == doctest::Approx(99.01));
  CHECK(summarize(std::vector<double>{5, 1, 4, 2, 3}).p99 == doctest::Approx(4.96));  // rank 3.96
  CHECK(summarize(std::vector<double>{7}).p99 == 7);
}

TEST_CASE("one value and no values") {
  const std::vector<double> one{7};
  const Summary s = summarize(one);
  CHECK(s.count == 1);
  CHECK(s.median == 7);
  CHECK(s.stddev == 0);
  CHECK(summarize(std::vector<double>{}).count == 0);
}

namespace {

// The headline ratio of stream results: the headline variant's ratio to the baseline, or null.
const measure::PairedRatio* headline(Comparison& c) {
  const auto& streams = c.as<kinds::StreamResults>();
  for (const kinds::StreamStats& s : streams.stats) {
    if (s.variant == streams.headline && s.over_baseline) return &*s.over_baseline;
  }
  return nullptr;
}

// A complete stream run of 10^6 bytes in `us`.
StreamRun run(int round, Mode mode, double us) {
  StreamRun r;
  r.round = round;
  r.mode = mode;
  r.bytes = 1'000'000;
  r.transfer_us = us;
  return r;
}

}  // namespace

TEST_CASE("statistics per mode, and TLS/TCP ratios paired by round") {
  Comparison c;
  c.parameters.modes = {Mode::tcp, Mode::tls};
  // Round 2 is slow for both modes: pairing keeps its ratio at 2, where the
  // ratio of the unpaired medians would not tell.
  c.as<kinds::StreamResults>().runs = {run(1, Mode::tcp, 100),  run(1, Mode::tls, 150),
                                       run(2, Mode::tcp, 1000), run(2, Mode::tls, 2000),
                                       run(3, Mode::tcp, 200),  run(3, Mode::tls, 500)};
  compute_statistics(c);
  REQUIRE(c.as<kinds::StreamResults>().stats.size() == 2);
  CHECK(c.as<kinds::StreamResults>().stats[0].mode == Mode::tcp);
  CHECK(c.as<kinds::StreamResults>().stats[0].transfer_us.median == 200);
  CHECK(c.as<kinds::StreamResults>().stats[1].transfer_us.median == 500);
  CHECK(c.as<kinds::StreamResults>().stats[0].mbytes_per_s.max ==
        doctest::Approx(10000));  // 1e6 bytes in 100 us
  CHECK(c.as<kinds::StreamResults>().headline == "tls");
  REQUIRE(headline(c) != nullptr);
  CHECK(headline(c)->ratio.count == 3);
  CHECK(headline(c)->ratio.min == doctest::Approx(1.5));
  CHECK(headline(c)->ratio.median == doctest::Approx(2));
  CHECK(headline(c)->ratio.max == doctest::Approx(2.5));
  CHECK_FALSE(c.as<kinds::StreamResults>().stats[0].over_baseline.has_value());  // tcp is the baseline
}

TEST_CASE("--tls-lib: another library's variant is paired with the first library's of the same label") {
  Comparison c;
  c.parameters.modes = {Mode::tcp, Mode::tls};
  c.parameters.variants = {"tcp", "tls", "tls boringssl"};
  auto& runs = c.as<kinds::StreamResults>().runs;
  for (int round = 1; round <= 2; ++round) {
    // Round 2 is slow for every variant: paired, boringssl's ratio to tls stays 0.8.
    const double slow = round == 2 ? 10 : 1;
    runs.push_back(run(round, Mode::tcp, 100 * slow));
    runs.push_back(run(round, Mode::tls, 250 * slow));
    runs.back().variant = "tls";
    runs.back().tls.library = "openssl";
    runs.push_back(run(round, Mode::tls, 200 * slow));
    runs.back().variant = "tls boringssl";
    runs.back().tls.library = "boringssl";
  }
  compute_statistics(c);
  const auto& stats = c.as<kinds::StreamResults>().stats;
  REQUIRE(stats.size() == 3);
  CHECK_FALSE(stats[1].over_tls.has_value());  // the first library's own
  REQUIRE(stats[2].over_tls.has_value());
  CHECK(stats[2].over_tls->ratio.count == 2);
  CHECK(stats[2].over_tls->ratio.median == doctest::Approx(0.8));
  CHECK(stats[2].over_baseline->ratio.median == doctest::Approx(2));
  CHECK(measure::twin_label(runs[2]) == "tls");
  CHECK(measure::twin_label(runs[1]).empty());
}

TEST_CASE("the first mode is the baseline: --mode tls,tcp gives tcp's ratio to tls") {
  Comparison c;
  c.parameters.modes = {Mode::tls, Mode::tcp};
  c.as<kinds::StreamResults>().runs = {run(1, Mode::tls, 300), run(1, Mode::tcp, 100), run(2, Mode::tls, 400),
                                       run(2, Mode::tcp, 100)};
  compute_statistics(c);
  REQUIRE(c.as<kinds::StreamResults>().stats.size() == 2);
  CHECK(c.as<kinds::StreamResults>().stats[0].variant == "tls");
  CHECK_FALSE(c.as<kinds::StreamResults>().stats[0].over_baseline.has_value());
  CHECK(c.as<kinds::StreamResults>().headline == "tcp");
  REQUIRE(headline(c) != nullptr);
  CHECK(headline(c)->ratio.median == doctest::Approx(0.2917).epsilon(0.001));  // 1/3 and 1/4
}

TEST_CASE("the headline variant: the one compared, else the other mode's plain variant, else none") {
  measure::TestParameters two;
  two.modes = {Mode::tcp, Mode::tls};
  CHECK(measure::headline_variant(two, {"tls"}) == "tls");
  CHECK(measure::headline_variant(two, {"TLS_AES_128_GCM_SHA256"}) == "TLS_AES_128_GCM_SHA256");
  CHECK(measure::headline_variant(two, {"tls", "tls-resumed"}) == "tls");  // crr: full handshakes lead
  CHECK(measure::headline_variant(two, {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"}).empty());
  CHECK(measure::headline_variant(two, {"tls X25519", "tls P-256"}).empty());
  CHECK(measure::headline_variant(two, {}).empty());
  measure::TestParameters one;
  one.modes = {Mode::tls};
  CHECK(measure::headline_variant(one, {"tls"}).empty());
  CHECK_FALSE(one.baseline().has_value());
  CHECK(two.baseline() == Mode::tcp);
}

TEST_CASE("no ratio without both modes") {
  Comparison c;
  c.parameters.modes = {Mode::tls};
  StreamRun r;
  r.round = 1;
  r.mode = Mode::tls;
  r.transfer_us = 10;
  c.as<kinds::StreamResults>().runs = {r};
  compute_statistics(c);
  CHECK(c.as<kinds::StreamResults>().stats.size() == 1);
  CHECK(headline(c) == nullptr);
  CHECK(c.as<kinds::StreamResults>().headline.empty());
}

TEST_CASE("bootstrap interval of the median: a case worked by hand") {
  // Resampling {1, 3} gives medians 1, 2, 3 with chances 1/4, 1/2, 1/4, so
  // the 2.5th and 97.5th percentiles are 1 and 3.
  const std::vector<double> two{1, 3};
  const auto ci = bootstrap_median_ci(two);
  REQUIRE(ci.has_value());
  CHECK(ci->low == doctest::Approx(1));
  CHECK(ci->high == doctest::Approx(3));
}

TEST_CASE("bootstrap interval: bounds, degenerate samples and repeatability") {
  const std::vector<double> v{1.2, 1.5, 1.3, 1.9, 1.4, 1.35, 1.45};
  const auto ci = bootstrap_median_ci(v);
  REQUIRE(ci.has_value());
  const Summary s = summarize(v);
  CHECK(ci->low <= s.median);
  CHECK(ci->high >= s.median);
  CHECK(ci->low >= s.min);
  CHECK(ci->high <= s.max);
  CHECK(ci->high < s.max);  // the outlier 1.9 is not a plausible median
  const auto again = bootstrap_median_ci(v);
  CHECK(again->low == ci->low);
  CHECK(again->high == ci->high);

  const std::vector<double> same{2, 2, 2};
  CHECK(bootstrap_median_ci(same)->low == 2);
  CHECK(bootstrap_median_ci(same)->high == 2);
  CHECK_FALSE(bootstrap_median_ci(std::vector<double>{5}).has_value());
}

TEST_CASE("warm-up and partial runs are left out of the statistics, with CPU per GiB and core share") {
  Comparison c;
  c.parameters.modes = {Mode::tcp};
  StreamRun counted;
  counted.round = 1;
  counted.mode = Mode::tcp;
  counted.bytes = std::uint64_t{1} << 30;
  counted.transfer_us = 2e6;
  counted.client.window_us = 2e6;  // 1 CPU second over 2 s for 1 GiB
  counted.client.cpu_user_s = 0.5;
  counted.client.cpu_system_s = 0.5;
  StreamRun warmup = counted;
  warmup.warmup = true;
  warmup.transfer_us = 1;
  StreamRun partial = counted;
  partial.partial = true;
  partial.transfer_us = 1;
  c.as<kinds::StreamResults>().runs = {warmup, counted, partial};
  compute_statistics(c);
  REQUIRE(c.as<kinds::StreamResults>().stats.size() == 1);
  CHECK(c.as<kinds::StreamResults>().stats[0].transfer_us.count == 1);
  CHECK(c.as<kinds::StreamResults>().stats[0].transfer_us.median == 2e6);
  CHECK(c.as<kinds::StreamResults>().stats[0].client_cpu_s_per_gib.median == doctest::Approx(1.0));
  CHECK(c.as<kinds::StreamResults>().stats[0].client_core_share.median == doctest::Approx(0.5));
}

TEST_CASE("duration runs compare time per byte") {
  Comparison c;
  c.parameters.modes = {Mode::tcp, Mode::tls};
  StreamRun tcp;
  tcp.round = 1;
  tcp.mode = Mode::tcp;
  tcp.bytes = 2000;
  tcp.transfer_us = 1000;
  StreamRun tls = tcp;
  tls.mode = Mode::tls;
  tls.bytes = 1000;  // half the bytes in the same time: twice the time per byte
  c.as<kinds::StreamResults>().runs = {tcp, tls};
  compute_statistics(c);
  REQUIRE(headline(c) != nullptr);
  CHECK(headline(c)->ratio.median == doctest::Approx(2));
}
