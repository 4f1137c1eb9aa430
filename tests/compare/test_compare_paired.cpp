// Paired statistics of the interleaved gate (tools/compare/compare_paired.h) with exact values:
// Wilcoxon signed-rank statistics and p-values (the exact ones by enumeration of the 2^n sign
// assignments, the normal ones from the tie-corrected formula; both as
// scipy.stats.wilcoxon(d) gives them with its defaults, zero_method="wilcox",
// correction=False), the Hodges-Lehmann pseudo-median, and the paired bootstrap interval on a
// fixed seed (the expected bounds were computed by an independent Python implementation of
// std::mt19937_64 and the same resampling, which also reproduces the standard's check value:
// the 10000th output of a default-seeded mt19937_64 is 9981545732273789042).
#include <gtest/gtest.h>

#include <random>

#include "kernels/common/error.h"
#include "tools/compare/compare_paired.h"

using namespace llmbench;

TEST(SignedRank, NullCountsAreTheSubsetSumsOfOneToN) {
  // n = 3: the 8 sign assignments give W+ = 0, 1, 2, 3, 3, 4, 5, 6.
  EXPECT_EQ(signed_rank_null_counts(3), (std::vector<std::uint64_t>{1, 1, 1, 2, 1, 1, 1}));
  const auto c50 = signed_rank_null_counts(50);
  std::uint64_t total = 0;
  for (auto x : c50) total += x;
  EXPECT_EQ(total, std::uint64_t(1) << 50);
  EXPECT_EQ(c50.size(), 50u * 51u / 2u + 1u);
}

TEST(SignedRank, AllPositiveIsTheSmallestPValue) {
  const SignedRank s = wilcoxon_signed_rank({1, 2, 3, 4, 5, 6});
  EXPECT_DOUBLE_EQ(s.w_plus, 21);
  EXPECT_DOUBLE_EQ(s.statistic, 0);
  EXPECT_EQ(s.n, 6);
  EXPECT_TRUE(s.exact);
  EXPECT_DOUBLE_EQ(s.p_value, 0.03125);  // 2 / 2^6
  EXPECT_DOUBLE_EQ(signed_rank_min_p(6), 0.03125);
  EXPECT_DOUBLE_EQ(signed_rank_min_p(5), 0.0625);  // 5 rounds cannot reach p < 0.05
  // The sign flips the statistic's side, not the two-sided p.
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank({-1, -2, -3, -4, -5, -6}).p_value, 0.03125);
}

TEST(SignedRank, ExactPValueCountsSubsetsAtOrBelowT) {
  // Ranks 1 and 4 negative: W- = 5, W+ = 31; 10 of the 256 subsets of {1..8} sum to <= 5.
  const SignedRank s = wilcoxon_signed_rank({-1, 2, 3, -4, 5, 6, 7, 8});
  EXPECT_DOUBLE_EQ(s.w_plus, 31);
  EXPECT_DOUBLE_EQ(s.statistic, 5);
  EXPECT_TRUE(s.exact);
  EXPECT_DOUBLE_EQ(s.p_value, 0.078125);  // 2 x 10 / 256
}

TEST(SignedRank, ZerosAreDropped) {
  // n = 4 after dropping the zero: |d| ranks 0.25 -> 1 (negative), 0.5, 1.5, 2.5 -> 2, 3, 4.
  const SignedRank s = wilcoxon_signed_rank({0, 0.5, -0.25, 1.5, 2.5});
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.w_plus, 9);
  EXPECT_DOUBLE_EQ(s.statistic, 1);
  EXPECT_DOUBLE_EQ(s.p_value, 0.25);  // 2 x 2 / 16
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank({0, 0, 0}).p_value, 1.0);
}

TEST(SignedRank, TiesUseTheTieCorrectedNormalApproximation) {
  // |d| = 1, 1, 1, 2, 3, 3, 4, 5: mid-ranks 2, 2, 2, 4, 5.5, 5.5, 7, 8; the -1 has rank 2.
  // sigma^2 = 8 x 9 x 17 / 24 - (24 + 6) / 48 = 50.375; z = (2 - 18) / sqrt(50.375).
  const SignedRank s = wilcoxon_signed_rank({1, 1, -1, 2, 3, 3, 4, 5});
  EXPECT_FALSE(s.exact);
  EXPECT_DOUBLE_EQ(s.w_plus, 34);
  EXPECT_DOUBLE_EQ(s.statistic, 2);
  EXPECT_NEAR(s.p_value, 0.02417705919026827, 1e-12);

  const SignedRank t =
      wilcoxon_signed_rank({0.05, -0.01, 0.02, 0.03, -0.02, 0.04, 0.06, 0.01, 0.07, -0.03});
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.w_plus, 44.5);
  EXPECT_DOUBLE_EQ(t.statistic, 10.5);
  EXPECT_NEAR(t.p_value, 0.08253096390220212, 1e-12);
}

TEST(SignedRank, LargeSamplesUseTheNormalApproximation) {
  // d_i = +-(i + 1), negative for every third: W- = 1 + 4 + ... + 58 = 590 of 1830.
  std::vector<double> d;
  for (int i = 0; i < 60; ++i) d.push_back((i + 1) * (i % 3 ? 1.0 : -1.0));
  const SignedRank s = wilcoxon_signed_rank(d);
  EXPECT_FALSE(s.exact);
  EXPECT_DOUBLE_EQ(s.w_plus, 1240);
  EXPECT_DOUBLE_EQ(s.statistic, 590);
  EXPECT_NEAR(s.p_value, 0.01673307160770345, 1e-12);
}

TEST(PseudoMedian, IsTheMedianOfTheWalshAverages) {
  // Walsh averages of {1, 2, 4}: 1, 1.5, 2.5, 2, 3, 4 -> median (2 + 2.5) / 2.
  EXPECT_DOUBLE_EQ(pseudo_median({1, 2, 4}), 2.25);
  EXPECT_DOUBLE_EQ(pseudo_median({0.7}), 0.7);
  EXPECT_DOUBLE_EQ(pseudo_median({3, -1}), 1.0);  // -1, 1, 3
  // Robust: one wild round moves it by one Walsh position, not by its size.
  EXPECT_DOUBLE_EQ(pseudo_median({0.01, 0.02, 0.03, 0.02, 5.0}), 0.025);
  EXPECT_THROW(pseudo_median({}), Error);
}

TEST(PairedBootstrap, FixedSeedGivesTheReferenceInterval) {
  const std::vector<double> d = {0.05, -0.01, 0.02, 0.03, -0.02, 0.04, 0.06, 0.01, 0.07, -0.03};
  const BootstrapInterval ci = paired_bootstrap(d, 0.05, 2000, 20261124);
  EXPECT_DOUBLE_EQ(ci.low, 0.0);
  EXPECT_DOUBLE_EQ(ci.high, 0.045000000000000005);
  EXPECT_DOUBLE_EQ(ci.confidence, 0.95);
  EXPECT_EQ(ci.resamples, 2000);
  // The same seed, the same interval; the estimate lies inside.
  const BootstrapInterval again = paired_bootstrap(d, 0.05, 2000, 20261124);
  EXPECT_EQ(again.low, ci.low);
  EXPECT_EQ(again.high, ci.high);
  EXPECT_LE(ci.low, pseudo_median(d));
  EXPECT_GE(ci.high, pseudo_median(d));
}

TEST(PairedBootstrap, DegenerateSamplesHaveKnownIntervals) {
  // Every resample of a constant sample has the same estimate.
  const BootstrapInterval c = paired_bootstrap({0.1, 0.1, 0.1}, 0.05, 500, 1);
  EXPECT_DOUBLE_EQ(c.low, 0.1);
  EXPECT_DOUBLE_EQ(c.high, 0.1);
  // Two rounds {a, b}: resamples {a,a}, {a,b}, {b,a}, {b,b} with estimates a, (a+b)/2, (a+b)/2,
  // b, so the 2.5% and 97.5% points are a and b.
  const BootstrapInterval two = paired_bootstrap({0.1, 0.3}, 0.05, 2000, 20261124);
  EXPECT_DOUBLE_EQ(two.low, 0.1);
  EXPECT_DOUBLE_EQ(two.high, 0.3);
  EXPECT_THROW(paired_bootstrap({}, 0.05, 10, 1), Error);
  EXPECT_THROW(paired_bootstrap({1.0}, 0.0, 10, 1), Error);
}

TEST(PairedBootstrap, UsesTheStandardMersenneTwisterStream) {
  // The index draw relies on std::mt19937_64's output, which the standard fixes.
  std::mt19937_64 rng;  // default seed 5489
  rng.discard(9999);
  EXPECT_EQ(rng(), 9981545732273789042ull);
}
