// RoPE (rotate_half layout): identity at position 0, hand-computed angles, the pair layout,
// strided rows whose tail is left alone, and a larger case against a double formula.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/rope.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

TEST(Rope, PositionZeroIsTheIdentity) {
  const int n_heads = 3, head_dim = 8;
  std::vector<float> x = test::random_floats(n_heads * head_dim, 11);
  const std::vector<float> before = x;
  const int32_t position = 0;
  rope(x.data(), 1, n_heads * head_dim, n_heads, head_dim, &position, 10000.0f);
  EXPECT_EQ(x, before);  // cos 0 = 1 and sin 0 = 0 exactly
}

TEST(Rope, HandComputedAnglesAndRotateHalfPairs) {
  // head_dim 4, theta 10000: pair 0 has frequency 1, pair 1 has 10000^(-2/4) = 0.01.
  // At position 3 the angles are 3 and 0.03. Pair i is (x[i], x[i + 2]), not (x[2i], x[2i+1]).
  std::vector<float> x = {1.0f, 0.0f, 0.0f, 2.0f};  // pair 0 = (1, 0), pair 1 = (0, 2)
  const int32_t position = 3;
  rope(x.data(), 1, 4, 1, 4, &position, 10000.0f);
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-7);          //  a cos - b sin with a = 1, b = 0
  EXPECT_NEAR(x[2], std::sin(3.0), 1e-7);          //  b cos + a sin
  EXPECT_NEAR(x[1], -2.0 * std::sin(0.03), 1e-7);  // a = 0, b = 2
  EXPECT_NEAR(x[3], 2.0 * std::cos(0.03), 1e-7);
}

TEST(Rope, EveryHeadOfARowGetsTheSameRotation) {
  const int n_heads = 4, head_dim = 6;
  const std::vector<float> head = {1, 2, 3, 4, 5, 6};
  std::vector<float> x;
  for (int h = 0; h < n_heads; ++h) x.insert(x.end(), head.begin(), head.end());
  const int32_t position = 17;
  rope(x.data(), 1, n_heads * head_dim, n_heads, head_dim, &position, 500.0f);
  for (int h = 1; h < n_heads; ++h) {
    for (int i = 0; i < head_dim; ++i) EXPECT_EQ(x[h * head_dim + i], x[i]) << "head " << h;
  }
}

TEST(Rope, RowStrideSkipsTheTailOfEachRow) {
  // Rotates the first 2 heads of rows laid out as [2 heads | 3 floats that must not change].
  const int n_rows = 3, n_heads = 2, head_dim = 4, stride = n_heads * head_dim + 3;
  std::vector<float> x = test::random_floats(n_rows * stride, 12);
  const std::vector<float> before = x;
  const std::vector<int32_t> positions = {5, 0, 9};
  rope(x.data(), n_rows, stride, n_heads, head_dim, positions.data(), 10000.0f);
  for (int r = 0; r < n_rows; ++r) {
    for (int i = n_heads * head_dim; i < stride; ++i)
      EXPECT_EQ(x[r * stride + i], before[r * stride + i]);
  }
  // Row 1 is at position 0, so it is unchanged; rows 0 and 2 are rotated.
  for (int i = 0; i < stride; ++i) EXPECT_EQ(x[stride + i], before[stride + i]);
  EXPECT_NE(x[0], before[0]);
  EXPECT_NE(x[2 * stride], before[2 * stride]);
}

TEST(Rope, MatchesADoubleFormulaAtModelSizes) {
  const int n_rows = 19, n_heads = 32, head_dim = 128, stride = n_heads * head_dim;
  const float theta = 1000000.0f;
  std::vector<float> x = test::random_floats(n_rows * stride, 13);
  std::vector<int32_t> positions(n_rows);
  for (int r = 0; r < n_rows; ++r) positions[r] = r * 113;  // up to 2034
  std::vector<float> ref(x.size());
  const int half = head_dim / 2;
  for (int r = 0; r < n_rows; ++r) {
    for (int h = 0; h < n_heads; ++h) {
      for (int i = 0; i < half; ++i) {
        const double angle = positions[r] * std::pow(double(theta), -2.0 * i / head_dim);
        const double a = x[r * stride + h * head_dim + i];
        const double b = x[r * stride + h * head_dim + i + half];
        ref[r * stride + h * head_dim + i] = float(a * std::cos(angle) - b * std::sin(angle));
        ref[r * stride + h * head_dim + i + half] =
            float(b * std::cos(angle) + a * std::sin(angle));
      }
    }
  }
  rope(x.data(), n_rows, stride, n_heads, head_dim, positions.data(), theta);
  EXPECT_TRUE(test::all_close(x, ref, 1e-6, 1e-6));
}

}  // namespace
}  // namespace llmbench::cpu
