// Per-row argmax: plain rows, ties to the lowest index, the first NaN wins, infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/argmax.h"

namespace llmbench::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<int32_t> argmax_of(const std::vector<float>& x, int n_rows, int n_cols) {
  std::vector<int32_t> out(n_rows, -1);
  argmax_rows(out.data(), x.data(), n_rows, n_cols);
  return out;
}

TEST(ArgmaxRows, PicksTheLargestOfEachRow) {
  const std::vector<float> x = {1,  5,  3,   // row 0 -> 1
                                -4, -9, -2,  // row 1 -> 2 (all negative)
                                7,  0,  6};  // row 2 -> 0
  EXPECT_EQ(argmax_of(x, 3, 3), (std::vector<int32_t>{1, 2, 0}));
}

TEST(ArgmaxRows, TiesGoToTheLowestIndex) {
  const std::vector<float> x = {2, 9, 9, 9,   // -> 1
                                0, 0, 0, 0};  // -> 0
  EXPECT_EQ(argmax_of(x, 2, 4), (std::vector<int32_t>{1, 0}));
}

TEST(ArgmaxRows, TheFirstNanWins) {
  const std::vector<float> x = {1,   kInf, NAN, 3, NAN,   // -> 2, even though an Inf comes first
                                NAN, 5,    6,   7, 8,     // -> 0
                                1,   2,    3,   4, NAN};  // -> 4
  EXPECT_EQ(argmax_of(x, 3, 5), (std::vector<int32_t>{2, 0, 4}));
}

TEST(ArgmaxRows, InfinitiesCompareAsNumbers) {
  const std::vector<float> x = {-kInf, -kInf, -5,     // -> 2
                                -kInf, kInf,  kInf};  // -> 1
  EXPECT_EQ(argmax_of(x, 2, 3), (std::vector<int32_t>{2, 1}));
}

TEST(ArgmaxRows, VocabSizedRows) {
  // Two rows of 32000 with the maximum placed near the end and a tie placed after it.
  const int n_cols = 32000;
  std::vector<float> x(2 * n_cols, 0.0f);
  x[31000] = 3.0f;
  x[31999] = 3.0f;
  x[n_cols + 17] = 1.0f;
  EXPECT_EQ(argmax_of(x, 2, n_cols), (std::vector<int32_t>{31000, 17}));
}

}  // namespace
}  // namespace llmbench::cpu
