// RMSNorm: hand-computed rows, eps, aliasing, and identical results for 1 and 2 threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/rmsnorm.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

TEST(RmsNorm, HandComputedRow) {
  // x = [3, 4]: mean of squares = (9 + 16) / 2 = 12.5, rms = sqrt(12.5).
  const std::vector<float> x = {3.0f, 4.0f}, weight = {1.0f, 2.0f};
  std::vector<float> out(2);
  rmsnorm(out.data(), x.data(), weight.data(), 1, 2, 0.0f);
  const double rms = std::sqrt(12.5);
  EXPECT_NEAR(out[0], 3.0 / rms, 1e-6);  // 0.848528...
  EXPECT_NEAR(out[1], 8.0 / rms, 1e-6);  // 2.262741...
}

TEST(RmsNorm, ExactWhenTheRmsIsAPowerOfTwo) {
  // Row 0: all 2 -> rms 2 -> ones times weight. Row 1: [-4, 4, 4, -4] -> rms 4.
  const std::vector<float> x = {2, 2, 2, 2, -4, 4, 4, -4}, weight = {1, 0.5f, -3, 10};
  std::vector<float> out(8);
  rmsnorm(out.data(), x.data(), weight.data(), 2, 4, 0.0f);
  EXPECT_EQ(out, (std::vector<float>{1, 0.5f, -3, 10, -1, 0.5f, -3, -10}));
}

TEST(RmsNorm, EpsIsAddedToTheMeanOfSquares) {
  // x = [1, 1]: mean 1, with eps 3 the divisor is sqrt(4) = 2.
  const std::vector<float> x = {1.0f, 1.0f}, weight = {1.0f, 1.0f};
  std::vector<float> out(2);
  rmsnorm(out.data(), x.data(), weight.data(), 1, 2, 3.0f);
  EXPECT_EQ(out, (std::vector<float>{0.5f, 0.5f}));
}

TEST(RmsNorm, OutMayAliasX) {
  const int n_rows = 5, dim = 19;
  const std::vector<float> x = test::random_floats(n_rows * dim, 2);
  const std::vector<float> weight = test::random_floats(dim, 3);
  std::vector<float> expected(x.size());
  rmsnorm(expected.data(), x.data(), weight.data(), n_rows, dim, 1e-5f);
  std::vector<float> in_place = x;
  rmsnorm(in_place.data(), in_place.data(), weight.data(), n_rows, dim, 1e-5f);
  EXPECT_EQ(in_place, expected);
}

TEST(RmsNorm, MatchesADoublePrecisionFormula) {
  const int n_rows = 7, dim = 733;
  const std::vector<float> x = test::random_floats(n_rows * dim, 4, -3.0f, 3.0f);
  const std::vector<float> weight = test::random_floats(dim, 5);
  std::vector<float> out(x.size()), ref(x.size());
  rmsnorm(out.data(), x.data(), weight.data(), n_rows, dim, 1e-6f);
  for (int r = 0; r < n_rows; ++r) {
    double sum_sq = 0.0;
    for (int i = 0; i < dim; ++i) sum_sq += double(x[r * dim + i]) * x[r * dim + i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / dim + 1e-6);
    for (int i = 0; i < dim; ++i) ref[r * dim + i] = float(x[r * dim + i] * inv_rms * weight[i]);
  }
  EXPECT_TRUE(test::all_close(out, ref, 1e-6, 1e-6));
}

TEST(RmsNorm, SameBitsWithOneAndTwoThreads) {
  // Large enough to pass the kernel's parallel threshold.
  const int n_rows = 64, dim = 2048;
  const std::vector<float> x = test::random_floats(n_rows * dim, 6);
  const std::vector<float> weight = test::random_floats(dim, 7);
  std::vector<float> one(x.size()), two(x.size());
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  rmsnorm(one.data(), x.data(), weight.data(), n_rows, dim, 1e-5f);
  omp_set_num_threads(2);
  rmsnorm(two.data(), x.data(), weight.data(), n_rows, dim, 1e-5f);
  omp_set_num_threads(saved);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace llmbench::cpu
