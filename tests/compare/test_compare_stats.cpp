// Rank statistics of `llmbench compare` (tools/compare/compare_stats.h) against known values: scipy
// 1.10 scipy.stats.mannwhitneyu (method="exact" and "asymptotic") and an independent
// brute-force Hodges-Lehmann computation (itertools over every rank arrangement), both run
// once by hand with the inputs below; and the exact null distribution against enumeration.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/error.h"
#include "tools/compare/compare_stats.h"

using namespace llmbench;

namespace {

// scipy's documentation example (males / females).
const std::vector<double> kDocX = {19, 22, 16, 29, 24};
const std::vector<double> kDocY = {20, 11, 17, 12};
// Ten against ten, no ties, clearly shifted.
const std::vector<double> kTenA = {10.1, 10.4, 9.8, 10.0, 10.3, 10.7, 9.9, 10.2, 10.5, 10.6};
const std::vector<double> kTenB = {10.9, 11.2, 10.35, 11.0, 10.8, 11.4, 10.65, 11.1, 10.95, 11.3};

// Counts arrangements by enumerating every subset of n1 ranks out of n1 + n2 (bit masks).
std::vector<std::uint64_t> brute_force_counts(int n1, int n2) {
  const int n = n1 + n2;
  std::vector<std::uint64_t> counts(std::size_t(n1 * n2) + 1, 0);
  for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != n1) continue;
    int rank_sum = 0;
    for (int r = 0; r < n; ++r)
      if (mask & (1u << r)) rank_sum += r + 1;
    ++counts[std::size_t(rank_sum - n1 * (n1 + 1) / 2)];
  }
  return counts;
}

}  // namespace

TEST(CompareStats, ExactPValueMatchesScipyDocExample) {
  const MannWhitney m = mann_whitney_u(kDocX, kDocY);
  EXPECT_DOUBLE_EQ(m.u, 17.0);
  EXPECT_TRUE(m.exact);
  EXPECT_NEAR(m.p_value, 0.1111111111111111, 1e-15);
}

TEST(CompareStats, ExactPValueMatchesScipyTenVersusTen) {
  const MannWhitney m = mann_whitney_u(kTenA, kTenB);
  EXPECT_DOUBLE_EQ(m.u, 5.0);
  EXPECT_TRUE(m.exact);
  EXPECT_NEAR(m.p_value, 0.00020567667626491154, 1e-15);
  // Swapping the samples mirrors U and keeps the two-sided p.
  const MannWhitney swapped = mann_whitney_u(kTenB, kTenA);
  EXPECT_DOUBLE_EQ(swapped.u, 95.0);
  EXPECT_NEAR(swapped.p_value, m.p_value, 1e-15);
}

TEST(CompareStats, TiesUseNormalApproximationWithTieAndContinuityCorrection) {
  const std::vector<double> x = {1, 2, 2, 3, 3, 3, 4, 5};
  const std::vector<double> y = {3, 4, 4, 5, 5, 6, 6, 7, 8};
  const MannWhitney m = mann_whitney_u(x, y);
  EXPECT_DOUBLE_EQ(m.u, 7.5);
  EXPECT_FALSE(m.exact);
  EXPECT_NEAR(m.p_value, 0.0063731338380858728, 1e-12);  // scipy method="asymptotic"
}

TEST(CompareStats, LargeSamplesUseNormalApproximation) {
  const std::vector<double> x = {101.727921, 104.108091, 101.652185, 93.484214,  104.526779,
                                 102.231873, 97.315234,  102.905591, 101.822862, 101.470662,
                                 100.142111, 102.733565, 96.31773,   99.18545,   97.589403,
                                 102.994231, 100.198611, 98.537716,  96.090458,  98.714039,
                                 100.040711, 98.621985,  106.470319, 105.033622, 86.444188};
  const std::vector<double> y = {94.554934,  103.12614,  101.889048, 105.068215, 105.08661,
                                 114.589194, 98.439896,  102.111975, 114.213858, 107.233515,
                                 107.315317, 101.429968, 95.759624,  104.837324, 104.54507,
                                 97.86324,   100.583867, 103.639782, 99.276242,  103.50865,
                                 104.477415, 104.177931, 101.468542, 106.96874,  108.455835,
                                 105.604242, 99.908849,  107.658261, 101.4928,   108.395803};
  const MannWhitney m = mann_whitney_u(x, y);
  EXPECT_DOUBLE_EQ(m.u, 202.0);
  EXPECT_FALSE(m.exact);
  EXPECT_NEAR(m.p_value, 0.0035479810787650747, 1e-12);
}

TEST(CompareStats, AsymptoticMatchesScipyOnDocExampleWhenForced) {
  // The doc example with one tie added (y's 17 -> 16) forces the normal approximation; scipy
  // 1.10 asymptotic on these values: U = 17.5, p = 0.0851...
  const std::vector<double> y = {20, 11, 16, 12};
  const MannWhitney m = mann_whitney_u(kDocX, y);
  EXPECT_DOUBLE_EQ(m.u, 17.5);
  EXPECT_FALSE(m.exact);
  EXPECT_NEAR(m.p_value, 0.085099932515670745, 1e-12);
}

TEST(CompareStats, AllValuesEqualGivePOne) {
  const MannWhitney m = mann_whitney_u({5, 5, 5, 5}, {5, 5, 5, 5, 5});
  EXPECT_DOUBLE_EQ(m.u, 10.0);
  EXPECT_DOUBLE_EQ(m.p_value, 1.0);
}

TEST(CompareStats, ExactNullDistributionMatchesBruteForceEnumeration) {
  for (int n1 : {1, 2, 3, 5, 7})
    for (int n2 : {1, 4, 6, 9}) {
      const auto dp = mann_whitney_null_counts(n1, n2);
      const auto bf = brute_force_counts(n1, n2);
      ASSERT_EQ(dp.size(), bf.size()) << n1 << "x" << n2;
      for (std::size_t u = 0; u < dp.size(); ++u) EXPECT_EQ(dp[u], bf[u]) << n1 << "x" << n2 << " U=" << u;
    }
}

TEST(CompareStats, ExactNullDistributionSumsToBinomialAtTheLargestSize) {
  const auto c = mann_whitney_null_counts(kExactMaxN, kExactMaxN);
  std::uint64_t total = 0;
  for (auto v : c) total += v;
  EXPECT_EQ(total, 137846528820ull);  // C(40, 20)
  EXPECT_EQ(c.front(), 1u);
  EXPECT_EQ(c.back(), 1u);
  EXPECT_EQ(c[1], 1u);  // only one arrangement has exactly one inversion
  for (std::size_t u = 0; u < c.size(); ++u) EXPECT_EQ(c[u], c[c.size() - 1 - u]);  // symmetric
}

TEST(CompareStats, ExactPValueEqualsBruteForceTailForEveryU) {
  // p = 2 P(U >= max(U, n1 n2 - U)) for each possible U of 4 vs 5 samples, built by placing
  // x's values among y's.
  const int n1 = 4, n2 = 5;
  const auto bf = brute_force_counts(n1, n2);
  double total = 0;
  for (auto v : bf) total += double(v);
  for (std::uint32_t mask = 0; mask < (1u << (n1 + n2)); ++mask) {
    if (__builtin_popcount(mask) != n1) continue;
    std::vector<double> x, y;
    for (int r = 0; r < n1 + n2; ++r) (mask & (1u << r) ? x : y).push_back(r + 1.0);
    const MannWhitney m = mann_whitney_u(x, y);
    const auto big = std::size_t(std::max(m.u, n1 * n2 - m.u));
    double tail = 0;
    for (std::size_t u = big; u < bf.size(); ++u) tail += double(bf[u]);
    EXPECT_NEAR(m.p_value, std::min(1.0, 2 * tail / total), 1e-15);
  }
}

TEST(CompareStats, MinimumPValue) {
  EXPECT_NEAR(mann_whitney_min_p(3, 3), 0.1, 1e-15);         // 2 / C(6, 3)
  EXPECT_NEAR(mann_whitney_min_p(4, 4), 2.0 / 70, 1e-15);    // 2 / C(8, 4)
  EXPECT_NEAR(mann_whitney_min_p(10, 10), 2.0 / 184756, 1e-18);
  EXPECT_DOUBLE_EQ(mann_whitney_min_p(1, 1), 1.0);
  EXPECT_LT(mann_whitney_min_p(30, 30), 1e-9);
}

TEST(CompareStats, NormalTailAndItsInverse) {
  EXPECT_NEAR(normal_sf(0), 0.5, 1e-15);
  EXPECT_NEAR(normal_sf(1.959963984540054), 0.025, 1e-12);
  EXPECT_NEAR(normal_isf(0.025), 1.959963984540054, 1e-9);
  EXPECT_NEAR(normal_isf(0.5), 0.0, 1e-12);
  EXPECT_NEAR(normal_isf(0.975), -1.959963984540054, 1e-9);
}

TEST(CompareStats, HodgesLehmannRatioAndExactIntervalMatchBruteForce) {
  // Reference: median of sorted log ratios; k = smallest u with P(U <= u) >= alpha/2 from the
  // enumerated distribution (k = 24 for 10 vs 10 at alpha 0.05, R's qwilcox(0.025, 10, 10)).
  const RatioEstimate e = hodges_lehmann_ratio(kTenA, kTenB, 0.05);
  EXPECT_NEAR(e.ratio, 1.0689671368485572, 1e-12);
  EXPECT_NEAR(e.ci_low, 1.0380952380952382, 1e-12);
  EXPECT_NEAR(e.ci_high, 1.1020408163265305, 1e-12);
  EXPECT_DOUBLE_EQ(e.confidence, 0.95);

  const RatioEstimate doc = hodges_lehmann_ratio(kDocX, kDocY, 0.05);  // k = 2
  EXPECT_NEAR(doc.ratio, 0.68857674302468475, 1e-12);
  EXPECT_NEAR(doc.ci_low, 0.41379310344827586, 1e-12);
  EXPECT_NEAR(doc.ci_high, 1.0625, 1e-12);
  const RatioEstimate wide = hodges_lehmann_ratio(kDocX, kDocY, 0.2);  // k = 5: narrower
  EXPECT_NEAR(wide.ratio, 0.68857674302468475, 1e-12);
  EXPECT_NEAR(wide.ci_low, 0.5, 1e-12);
  EXPECT_NEAR(wide.ci_high, 0.89473684210526316, 1e-12);
}

TEST(CompareStats, HodgesLehmannOfAScaledSampleIsTheScale) {
  std::vector<double> base = {3.1, 2.9, 3.4, 3.0, 3.3, 2.8, 3.2}, cand;
  for (double b : base) cand.push_back(1.25 * b);
  const RatioEstimate e = hodges_lehmann_ratio(base, cand, 0.05);
  EXPECT_NEAR(e.ratio, 1.25, 1e-12);
  EXPECT_LE(e.ci_low, 1.25);
  EXPECT_GE(e.ci_high, 1.25);
  // Large samples take the normal-approximation interval; it still brackets the estimate.
  std::vector<double> big_base, big_cand;
  for (int i = 0; i < 40; ++i) {
    big_base.push_back(100 + (i * 37 % 41));
    big_cand.push_back(1.1 * (100 + (i * 53 % 43)));
  }
  const RatioEstimate big = hodges_lehmann_ratio(big_base, big_cand, 0.05);
  EXPECT_LT(big.ci_low, big.ratio);
  EXPECT_GT(big.ci_high, big.ratio);
}

TEST(CompareStats, RejectsEmptyAndNonPositiveSamples) {
  EXPECT_THROW(mann_whitney_u({}, {1.0}), Error);
  EXPECT_THROW(hodges_lehmann_ratio({1.0}, {}, 0.05), Error);
  EXPECT_THROW(hodges_lehmann_ratio({1.0, 0.0}, {1.0}, 0.05), Error);
  EXPECT_THROW(hodges_lehmann_ratio({1.0}, {1.0}, 1.0), Error);
}
