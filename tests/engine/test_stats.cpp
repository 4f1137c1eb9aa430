// Summary statistics: exact expected values (numpy's default percentile definition).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/error.h"
#include "engine/bench/stats.h"

namespace llmbench {

TEST(Stats, MeanMedianOddAndEven) {
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 10}), 4.0);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(Stats, PercentileInterpolatesBetweenRanks) {
  // numpy.percentile([10, 20, 30, 40, 50], p): rank = p/100 * 4
  const std::vector<double> xs = {50, 10, 40, 20, 30};
  EXPECT_DOUBLE_EQ(percentile(xs, 0), 10.0);
  EXPECT_DOUBLE_EQ(percentile(xs, 100), 50.0);
  EXPECT_DOUBLE_EQ(percentile(xs, 90), 46.0);
  EXPECT_DOUBLE_EQ(percentile(xs, 99), 49.6);
  EXPECT_DOUBLE_EQ(percentile(xs, 25), 20.0);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7.0);
}

TEST(Stats, SampleStdev) {
  EXPECT_DOUBLE_EQ(stdev({2, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(stdev({3}), 0.0);
}

TEST(Stats, EmptyInputIsAnError) {
  EXPECT_THROW(mean({}), Error);
  EXPECT_THROW(percentile({}, 50), Error);
  EXPECT_THROW(percentile({1}, 101), Error);
}

}  // namespace llmbench
