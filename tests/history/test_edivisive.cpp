// E-divisive means (tools/history/edivisive.h): the statistic against hand-computed values and
// a brute-force sum, then the detection targets of issue 41 on seeded synthetic series.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "kernels/common/error.h"
#include "tests/history/synthetic_series.h"
#include "tools/history/edivisive.h"

namespace llmbench {
namespace {

using testing::step_series;

// Q(tau) on x[0..kappa) by the definition, summing every pair.
double brute_q(const std::vector<double>& x, int tau, int kappa) {
  double cross = 0, a = 0, b = 0;
  for (int i = 0; i < kappa; ++i)
    for (int j = i + 1; j < kappa; ++j) {
      const double d = std::fabs(x[std::size_t(i)] - x[std::size_t(j)]);
      if (j < tau) a += d;
      else if (i >= tau) b += d;
      else cross += d;
    }
  const double m = tau, k = kappa - tau;
  return m * k / (m + k) * (2 * cross / (m * k) - 2 * a / (m * (m - 1)) - 2 * b / (k * (k - 1)));
}

TEST(EDivisive, StatisticOfHandComputedSeries) {
  // X = {0, 0}, Y = {1, 1}: the cross term 2 * 4 / 4 = 2, no scatter inside; Q = 4/4 * 2 = 2.
  EXPECT_DOUBLE_EQ(energy_q({0, 0, 1, 1}, 2)[2], 2.0);
  // X = {1, 2, 3}, Y = {10, 11, 12}: cross sum 81, within sums 4 and 4:
  // E = 2 * 81 / 9 - 2 * 4 / 6 - 2 * 4 / 6 = 46/3, Q = 9/6 * 46/3 = 23.
  const auto q = energy_q({1, 2, 3, 10, 11, 12}, 3);
  EXPECT_DOUBLE_EQ(q[3], 23.0);
  EXPECT_EQ(q[2], 0.0);  // below min_size: not evaluated
  const Split s = best_split({1, 2, 3, 10, 11, 12}, 3);
  EXPECT_EQ(s.tau, 3);
  EXPECT_DOUBLE_EQ(s.q, 23.0);
  // Too short for two segments of min_size: no split.
  EXPECT_EQ(best_split({1, 2, 3, 4, 5}, 3).tau, -1);
}

TEST(EDivisive, StatisticEqualsTheBruteForceMaximumOverRightEnds) {
  const std::vector<double> x = step_series(5, 37, 10, 1, {{11, 2}, {25, -3}});
  for (int min_size : {2, 3, 5}) {
    const std::vector<double> q = energy_q(x, min_size);
    ASSERT_EQ(q.size(), x.size() + 1);
    for (int tau = 0; tau <= 37; ++tau) {
      double want = 0;
      for (std::size_t j = 1; j <= kRightEnds; ++j) {
        const int kappa = int(37 * j / kRightEnds);
        if (tau >= std::max(min_size, 2) && kappa - tau >= std::max(min_size, 2))
          want = std::max(want, brute_q(x, tau, kappa));
      }
      EXPECT_NEAR(q[std::size_t(tau)], want, 1e-9 * std::max(1.0, want)) << "tau " << tau;
    }
  }
}

TEST(EDivisive, TiesAndConstantSeries) {
  // Equal values are 0 apart whatever their rank order: a constant series has Q = 0 everywhere
  // and no change point.
  const std::vector<double> flat(30, 7.0);
  for (double v : energy_q(flat, 3)) EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(e_divisive(flat).empty());
  // A clean step of tied values is found exactly, with the smallest p-value R permutations allow.
  std::vector<double> x(20, 1.0);
  for (int i = 10; i < 20; ++i) x[std::size_t(i)] = 2.0;
  const auto cps = e_divisive(x);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 10);
  EXPECT_DOUBLE_EQ(cps[0].p_value, 1.0 / 200.0);
}

TEST(EDivisive, DeterministicForASeedAndRejectsBadInput) {
  const auto x = step_series(11, 80, 5, 1, {{30, 1.5}});
  EDivisiveOptions o;
  const auto a = e_divisive(x, o), b = e_divisive(x, o);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
  EXPECT_THROW(e_divisive({1, 2, NAN, 4}), Error);
  EXPECT_THROW(e_divisive({1, 2, INFINITY, 4}), Error);
  o.permutations = 0;
  EXPECT_THROW(e_divisive(x, o), Error);
  o = {};
  o.min_size = 1;
  EXPECT_THROW(e_divisive(x, o), Error);
  o = {};
  o.max_p = 0;
  EXPECT_THROW(e_divisive(x, o), Error);
}

// Issue 41's targets, each over 100 seeded series (the counts are printed: docs/ci.md quotes
// them). A 3-sigma step's index is known only to about a point: even the least-squares fit
// that knows there is exactly one Gaussian step puts it within one index in 96% of such series.
TEST(EDivisive, SingleThreeSigmaStepIn40PointsFoundWithinOneIndex) {
  int found = 0;
  for (std::uint64_t s = 0; s < 100; ++s) {
    const auto cps = e_divisive(step_series(1000 + s, 40, 100, 2, {{20, 6}}));
    for (const ChangePoint& c : cps)
      if (std::abs(c.index - 20) <= 1) {
        ++found;
        break;
      }
  }
  std::printf("3-sigma step at index 20 of 40 found within one index: %d of 100\n", found);
  EXPECT_GE(found, 95);
}

TEST(EDivisive, AaSeriesOf100PointsRarelyGiveAChangePoint) {
  int false_alarms = 0;
  for (std::uint64_t s = 0; s < 100; ++s)
    if (!e_divisive(step_series(2000 + s, 100, 100, 2, {})).empty()) ++false_alarms;
  std::printf("A/A series of 100 points with a change point: %d of 100\n", false_alarms);
  EXPECT_LE(false_alarms, 5);
}

TEST(EDivisive, TwoStepsOfOppositeSignAreBothFound) {
  int both = 0;
  for (std::uint64_t s = 0; s < 100; ++s) {
    // Up by 3 sigma at 20, back down at 40: an excursion that a single split cannot describe.
    const auto cps = e_divisive(step_series(3000 + s, 60, 100, 2, {{20, 6}, {40, -6}}));
    bool up = false, down = false;
    for (const ChangePoint& c : cps) {
      up = up || std::abs(c.index - 20) <= 1;
      down = down || std::abs(c.index - 40) <= 1;
    }
    both += up && down;
  }
  std::printf("two opposite 3-sigma steps (20 and 40 of 60) both found within one index: %d of 100\n",
              both);
  EXPECT_GE(both, 90);
}

}  // namespace
}  // namespace llmbench
