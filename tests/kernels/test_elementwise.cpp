// Residual add, per-row bias add and row gather: exact small cases.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

TEST(AddInplace, AddsElementwise) {
  std::vector<float> x = {1.0f, -2.0f, 0.5f};
  const std::vector<float> y = {10.0f, 2.0f, 0.25f};
  add_inplace(x.data(), y.data(), x.size());
  EXPECT_EQ(x, (std::vector<float>{11.0f, 0.0f, 0.75f}));
}

TEST(AddInplace, LargeInputMatchesAScalarLoop) {
  const std::size_t n = (1 << 17) + 3;  // above the parallel threshold, odd length
  std::vector<float> x = test::random_floats(n, 41);
  const std::vector<float> y = test::random_floats(n, 42);
  std::vector<float> expected = x;
  for (std::size_t i = 0; i < n; ++i) expected[i] += y[i];
  add_inplace(x.data(), y.data(), n);
  EXPECT_EQ(x, expected);
}

TEST(AddBiasRows, AddsTheBiasToTheFirstNOfEachStridedRow) {
  // Two rows of stride 4; the bias covers the first 3 values of each row.
  std::vector<float> x = {0, 0, 0, 9, 1, 2, 3, 9};
  const std::vector<float> bias = {10, 20, 30};
  add_bias_rows(x.data(), 2, 4, bias.data(), 3);
  EXPECT_EQ(x, (std::vector<float>{10, 20, 30, 9, 11, 22, 33, 9}));
}

TEST(GatherRows, PicksRowsInOrderWithRepeats) {
  const std::vector<float> x = {0, 1, 10, 11, 20, 21};  // 3 rows of 2
  const std::vector<int32_t> rows = {2, 2, 0};
  std::vector<float> out(6);
  gather_rows(out.data(), x.data(), rows.data(), 3, 2);
  EXPECT_EQ(out, (std::vector<float>{20, 21, 20, 21, 0, 1}));
}

}  // namespace
}  // namespace llmbench::cpu
