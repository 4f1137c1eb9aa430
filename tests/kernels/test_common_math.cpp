// The host/device math in kernels/common/op_math.h, run on the host: hand-computed values, and
// bit-for-bit agreement with the CPU references it was written from (so the formulas the CUDA
// kernels run are the reference's own). The argmax rule is also folded in the order a CUDA block
// folds it (strided per-thread scans, then a butterfly tree) and must give the reference's answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/op_math.h"
#include "kernels/cpu/argmax.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/swiglu.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(CommonMath, IsNan) {
  EXPECT_TRUE(is_nan(NAN));
  EXPECT_TRUE(is_nan(-NAN));
  EXPECT_FALSE(is_nan(kInf));
  EXPECT_FALSE(is_nan(-kInf));
  EXPECT_FALSE(is_nan(0.0f));
}

TEST(CommonMath, SiluHandValues) {
  EXPECT_EQ(silu(0.0f), 0.0f);
  EXPECT_NEAR(silu(1.0f), 1.0 / (1.0 + std::exp(-1.0)), 1e-7);
  EXPECT_NEAR(silu(-2.0f), -2.0 / (1.0 + std::exp(2.0)), 1e-7);
  EXPECT_EQ(silu(100.0f), 100.0f);  // exp(-100) vanishes next to 1
  // exp(200) overflows to inf: the result is -0, not NaN.
  const float very_negative = silu(-200.0f);
  EXPECT_EQ(very_negative, 0.0f);
  EXPECT_TRUE(std::signbit(very_negative));
}

TEST(CommonMath, SwigluValueIsTheCpuReferenceBitForBit) {
  const int n_rows = 7, ffn_dim = 733;
  std::vector<float> gate_up = test::random_floats(2 * n_rows * ffn_dim, 101, -12.0f, 12.0f);
  gate_up[0] = -200.0f;  // exp overflow
  gate_up[1] = 200.0f;
  std::vector<float> ref(n_rows * ffn_dim);
  cpu::swiglu_reference(ref.data(), gate_up.data(), n_rows, ffn_dim);
  for (int r = 0; r < n_rows; ++r) {
    for (int i = 0; i < ffn_dim; ++i) {
      const float* row = &gate_up[r * 2 * ffn_dim];
      ASSERT_EQ(swiglu_value(row[i], row[ffn_dim + i]), ref[r * ffn_dim + i])
          << "row " << r << " col " << i;
    }
  }
}

TEST(CommonMath, RmsnormInvRmsHandValue) {
  // Row (3, 4): mean of squares 12.5, eps 0 -> 1/sqrt(12.5).
  EXPECT_EQ(rmsnorm_inv_rms(25.0, 2, 0.0f), static_cast<float>(1.0 / std::sqrt(12.5)));
}

TEST(CommonMath, RmsnormInvRmsIsTheCpuReferenceBitForBit) {
  for (const int dim : {1, 7, 733, 4096}) {
    const int n_rows = 3;
    const float eps = 1e-5f;
    const std::vector<float> x = test::random_floats(n_rows * dim, 102, -3.0f, 3.0f);
    const std::vector<float> weight = test::random_floats(dim, 103, 0.5f, 1.5f);
    std::vector<float> ref(x.size());
    cpu::rmsnorm(ref.data(), x.data(), weight.data(), n_rows, dim, eps);
    for (int r = 0; r < n_rows; ++r) {
      double sum_sq = 0.0;  // the reference's order: sequential, in double
      for (int i = 0; i < dim; ++i) sum_sq += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
      const float scale = rmsnorm_inv_rms(sum_sq, dim, eps);
      for (int i = 0; i < dim; ++i)
        ASSERT_EQ(x[r * dim + i] * scale * weight[i], ref[r * dim + i]) << "dim " << dim;
    }
  }
}

TEST(CommonMath, RopeHandValues) {
  // head_dim 4, theta 10000: pair 0 has frequency 1, pair 1 has 10000^(-1/2) = 0.01.
  EXPECT_EQ(rope_inv_freq(0, 4, 10000.0f), 1.0);
  EXPECT_DOUBLE_EQ(rope_inv_freq(1, 4, 10000.0f), 0.01);
  float c = 0.0f, s = 0.0f;
  rope_cos_sin(3, 1.0, &c, &s);
  EXPECT_EQ(c, static_cast<float>(std::cos(3.0)));
  EXPECT_EQ(s, static_cast<float>(std::sin(3.0)));
  // Rotating (1, 0) by a quarter turn gives (0, 1); (0, 2) gives (-2, 0).
  float a = 1.0f, b = 0.0f;
  rope_rotate_pair(&a, &b, 0.0f, 1.0f);
  EXPECT_EQ(a, 0.0f);
  EXPECT_EQ(b, 1.0f);
  a = 0.0f, b = 2.0f;
  rope_rotate_pair(&a, &b, 0.0f, 1.0f);
  EXPECT_EQ(a, -2.0f);
  EXPECT_EQ(b, 0.0f);
}

TEST(CommonMath, RopeHelpersAreTheCpuReferenceBitForBit) {
  struct Case {
    int n_heads, head_dim;
    float theta;
  };
  for (const Case c : {Case{32, 64, 10000.0f}, Case{14, 128, 1000000.0f}, Case{3, 6, 500.0f}}) {
    const int n_rows = 19, stride = c.n_heads * c.head_dim + 3, half = c.head_dim / 2;
    const std::vector<float> x = test::random_floats(n_rows * stride, 104);
    std::vector<int32_t> positions(n_rows);
    std::mt19937 rng(105);
    for (int32_t& p : positions) p = static_cast<int32_t>(rng() % 32768);
    std::vector<float> ref = x;
    cpu::rope(ref.data(), n_rows, stride, c.n_heads, c.head_dim, positions.data(), c.theta);
    std::vector<float> got = x;
    for (int r = 0; r < n_rows; ++r) {
      for (int i = 0; i < half; ++i) {
        float cos_i = 0.0f, sin_i = 0.0f;
        rope_cos_sin(positions[r], rope_inv_freq(i, c.head_dim, c.theta), &cos_i, &sin_i);
        for (int h = 0; h < c.n_heads; ++h) {
          float* lo = &got[r * stride + h * c.head_dim + i];
          rope_rotate_pair(lo, lo + half, cos_i, sin_i);
        }
      }
    }
    EXPECT_EQ(got, ref) << "head_dim " << c.head_dim;
  }
}

TEST(CommonMath, AttentionScale) {
  EXPECT_EQ(attention_scale(64), 0.125f);
  EXPECT_EQ(attention_scale(128), static_cast<float>(1.0 / std::sqrt(128.0)));
  EXPECT_EQ(attention_scale(1), 1.0f);
}

TEST(CommonMath, ArgmaxRuleHandCases) {
  EXPECT_TRUE(argmax_prefers(2.0f, 5, 1.0f, 0));    // larger value
  EXPECT_FALSE(argmax_prefers(1.0f, 0, 2.0f, 5));
  EXPECT_TRUE(argmax_prefers(3.0f, 1, 3.0f, 4));    // tie: lower index
  EXPECT_FALSE(argmax_prefers(3.0f, 4, 3.0f, 1));
  EXPECT_TRUE(argmax_prefers(-0.0f, 1, 0.0f, 2));   // -0 == +0: a tie
  EXPECT_TRUE(argmax_prefers(NAN, 9, kInf, 0));     // NaN beats everything
  EXPECT_FALSE(argmax_prefers(kInf, 0, NAN, 9));
  EXPECT_TRUE(argmax_prefers(NAN, 2, NAN, 3));      // the first NaN
  EXPECT_FALSE(argmax_prefers(NAN, 3, NAN, 2));
  // The identity of the GPU reduction loses to any real column, even -inf.
  EXPECT_TRUE(argmax_prefers(-kInf, 7, -kInf, INT32_MAX));
  EXPECT_FALSE(argmax_prefers(-kInf, INT32_MAX, -kInf, 7));
}

// The argmax of one row folded the way kernels/cuda/argmax.cu folds it: `threads` strided
// scans (each stops at its first NaN), then a butterfly over the thread candidates.
int32_t argmax_like_a_block(const float* row, int n_cols, int threads) {
  struct Candidate {
    float value;
    int32_t index;
  };
  std::vector<Candidate> best(threads, Candidate{-kInf, INT32_MAX});
  for (int t = 0; t < threads; ++t) {
    for (int j = t; j < n_cols; j += threads) {
      if (argmax_prefers(row[j], j, best[t].value, best[t].index)) best[t] = {row[j], j};
      if (is_nan(row[j])) break;
    }
  }
  for (int offset = threads / 2; offset > 0; offset /= 2) {
    std::vector<Candidate> next(threads);
    for (int t = 0; t < threads; ++t) {
      const Candidate a = best[t], b = best[t ^ offset];
      next[t] = argmax_prefers(a.value, a.index, b.value, b.index) ? a : b;
    }
    best = next;
  }
  return best[0].index;
}

TEST(CommonMath, ArgmaxRuleFoldedLikeABlockIsTheCpuReference) {
  std::mt19937 rng(106);
  const int n_cols = 733;
  for (int trial = 0; trial < 200; ++trial) {
    // Few distinct values, so ties are common; sometimes infinities and NaNs.
    std::vector<float> row(n_cols);
    for (float& v : row) v = static_cast<float>(static_cast<int>(rng() % 9) - 4);
    const int extras = static_cast<int>(rng() % 4);
    for (int e = 0; e < extras; ++e) {
      const float special = (rng() % 3 == 0) ? NAN : (rng() % 2 ? kInf : -kInf);
      row[rng() % n_cols] = special;
    }
    if (trial == 0) std::fill(row.begin(), row.end(), -kInf);
    if (trial == 1) std::fill(row.begin(), row.end(), 2.0f);
    int32_t ref = -1;
    cpu::argmax_rows(&ref, row.data(), 1, n_cols);
    for (const int threads : {1, 32, 256}) {
      ASSERT_EQ(argmax_like_a_block(row.data(), n_cols, threads), ref)
          << "trial " << trial << ", threads " << threads;
    }
  }
}

}  // namespace
}  // namespace llmbench
