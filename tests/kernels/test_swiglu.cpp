// SwiGLU: hand-computed silu values, the [gate | up] row layout, and saturation at large |g|.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/swiglu.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

TEST(SwiGlu, HandComputedRow) {
  // gate = [0, 1, -2], up = [5, 2, 3].
  // silu(0) = 0, silu(1) = 1 / (1 + e^-1), silu(-2) = -2 / (1 + e^2).
  const std::vector<float> gate_up = {0.0f, 1.0f, -2.0f, 5.0f, 2.0f, 3.0f};
  std::vector<float> out(3);
  swiglu(out.data(), gate_up.data(), 1, 3);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 2.0 / (1.0 + std::exp(-1.0)), 1e-6);  // 1.462117...
  EXPECT_NEAR(out[2], -6.0 / (1.0 + std::exp(2.0)), 1e-6);  // -0.715365...
}

TEST(SwiGlu, RowsAreGateThenUp) {
  // Two rows of ffn_dim 2; large gates saturate: silu(30) = 30 (to float), silu(-200) = -0.
  const std::vector<float> gate_up = {30.0f, -200.0f, 1.0f, 4.0f,    // row 0: gate | up
                                      0.0f,  30.0f,   9.0f, -0.5f};  // row 1
  std::vector<float> out(4);
  swiglu(out.data(), gate_up.data(), 2, 2);
  EXPECT_EQ(out[0], 30.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_FALSE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], -15.0f);
}

TEST(SwiGlu, MatchesADoubleFormula) {
  const int n_rows = 7, ffn_dim = 733;
  const std::vector<float> gate_up = test::random_floats(n_rows * 2 * ffn_dim, 31, -8.0f, 8.0f);
  std::vector<float> out(n_rows * ffn_dim), ref(out.size());
  swiglu(out.data(), gate_up.data(), n_rows, ffn_dim);
  for (int r = 0; r < n_rows; ++r) {
    for (int i = 0; i < ffn_dim; ++i) {
      const double g = gate_up[r * 2 * ffn_dim + i], u = gate_up[r * 2 * ffn_dim + ffn_dim + i];
      ref[r * ffn_dim + i] = float(g / (1.0 + std::exp(-g)) * u);
    }
  }
  EXPECT_TRUE(test::all_close(out, ref, 1e-6, 1e-6));
}

}  // namespace
}  // namespace llmbench::cpu
