// The verdict rule of `llmbench compare` (tools/compare/compare_verdict.h) on hand-made samples:
// direction per metric, the threshold's exact boundaries, significance, too few samples, n/a;
// and the --metric parser.
#include <gtest/gtest.h>

#include "kernels/common/error.h"
#include "tools/compare/compare_verdict.h"

using namespace llmbench;

namespace {

const std::vector<double> kBase = {100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.7};

std::vector<double> scaled(const std::vector<double>& xs, double f) {
  std::vector<double> out;
  for (double x : xs) out.push_back(x * f);
  return out;
}

std::vector<double> reciprocal(const std::vector<double>& xs) {
  std::vector<double> out;
  for (double x : xs) out.push_back(1000.0 / x);
  return out;
}

Verdict verdict(Metric m, const std::vector<double>& base, const std::vector<double>& cand,
                double threshold_pct = 5, double alpha = 0.05) {
  CompareSettings s;
  s.threshold = threshold_pct / 100;
  s.alpha = alpha;
  return compare_samples(m, base, cand, s).verdict;
}

}  // namespace

TEST(CompareVerdict, SlowerOnlyBeyondTheThresholdFactor) {
  // Every pairwise ratio's median is exactly the scale: U separates fully, p is tiny.
  EXPECT_EQ(verdict(Metric::kTtft, kBase, scaled(kBase, 1.06)), Verdict::kSlower);
  EXPECT_EQ(verdict(Metric::kTtft, kBase, scaled(kBase, 1.06), /*threshold=*/6.5), Verdict::kSame);
  EXPECT_EQ(verdict(Metric::kTtft, kBase, scaled(kBase, 1.0501)), Verdict::kSlower);
  EXPECT_EQ(verdict(Metric::kTtft, kBase, scaled(kBase, 1.0499)), Verdict::kSame);
}

TEST(CompareVerdict, FasterBelowTheReciprocalFactor) {
  // "Faster" needs r < 1 / 1.05 = 0.952381 (symmetric with "slower" on a log scale).
  EXPECT_EQ(verdict(Metric::kE2e, kBase, scaled(kBase, 0.9523)), Verdict::kFaster);
  EXPECT_EQ(verdict(Metric::kE2e, kBase, scaled(kBase, 0.9525)), Verdict::kSame);
  EXPECT_EQ(verdict(Metric::kE2e, kBase, scaled(kBase, 0.5)), Verdict::kFaster);
}

TEST(CompareVerdict, ThroughputIsHigherIsBetterAndAgreesWithItsLatency) {
  for (double f : {0.5, 0.9523, 0.9525, 1.0, 1.0499, 1.0501, 1.2}) {
    const auto cand = scaled(kBase, f);
    const Verdict latency = verdict(Metric::kE2e, kBase, cand);
    const Verdict throughput = verdict(Metric::kThroughput, reciprocal(kBase), reciprocal(cand));
    EXPECT_EQ(latency, throughput) << "scale " << f;
  }
  EXPECT_EQ(verdict(Metric::kThroughput, kBase, scaled(kBase, 0.8)), Verdict::kSlower);
  EXPECT_EQ(verdict(Metric::kThroughput, kBase, scaled(kBase, 1.2)), Verdict::kFaster);
}

TEST(CompareVerdict, LargeChangeWithoutSignificanceIsSame) {
  // Overlapping, very noisy samples: the median moved 20% but the test cannot tell.
  const std::vector<double> base = {50, 150, 90, 120, 70, 130};
  const std::vector<double> cand = {60, 180, 108, 144, 84, 100};
  CompareSettings s;
  const MetricComparison c = compare_samples(Metric::kTtft, base, cand, s);
  EXPECT_EQ(c.verdict, Verdict::kSame);
  ASSERT_TRUE(c.test && c.ratio);
  EXPECT_GE(c.test->p_value, 0.05);
  EXPECT_GT(c.ratio->ratio, 1.05);
}

TEST(CompareVerdict, TooFewSamplesAndNotApplicable) {
  const std::vector<double> two = {1.0, 1.1}, three = {1.0, 1.1, 1.2}, slow3 = {2.0, 2.1, 2.2};
  EXPECT_EQ(verdict(Metric::kTtft, two, scaled(two, 2)), Verdict::kTooFew);
  // 3 vs 3 cannot reach p < 0.05 (smallest p = 0.1), but can at alpha 0.2.
  EXPECT_EQ(verdict(Metric::kTtft, three, slow3), Verdict::kTooFew);
  EXPECT_EQ(verdict(Metric::kTtft, three, slow3, 5, 0.2), Verdict::kSlower);
  EXPECT_EQ(verdict(Metric::kTtft, kBase, scaled(kBase, 2)), Verdict::kSlower);  // 8 vs 8

  CompareSettings s;
  const MetricComparison tpot = compare_samples(Metric::kTpot, std::nullopt, std::nullopt, s);
  EXPECT_EQ(tpot.verdict, Verdict::kNotApplicable);
  EXPECT_FALSE(tpot.median_base.has_value());
  const MetricComparison few = compare_samples(Metric::kTtft, two, two, s);
  EXPECT_EQ(few.verdict, Verdict::kTooFew);
  ASSERT_TRUE(few.median_base.has_value());  // medians are still reported
  EXPECT_DOUBLE_EQ(*few.median_base, 1.05);
  EXPECT_FALSE(few.test.has_value());
  EXPECT_STREQ(verdict_name(Verdict::kTooFew), "too few samples");
}

TEST(CompareVerdict, ZeroSamplesGiveMediansAndNoRatio) {
  // A server whose tokens all arrive in one read measures TPOT 0: a real sample, but no ratio.
  std::vector<double> with_zero = kBase;
  with_zero[3] = 0.0;
  CompareSettings s;
  const MetricComparison c = compare_samples(Metric::kTpot, kBase, with_zero, s);
  EXPECT_EQ(c.verdict, Verdict::kNotApplicable);
  EXPECT_TRUE(c.median_cand.has_value());
  EXPECT_FALSE(c.ratio.has_value());
  EXPECT_EQ(compare_samples(Metric::kTpot, with_zero, kBase, s).verdict,
            Verdict::kNotApplicable);
}
