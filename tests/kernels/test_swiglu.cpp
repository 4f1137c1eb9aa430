// SwiGLU: hand-computed silu values, the [gate | up] row layout, saturation at large |g|, and
// the AVX-512 and AVX2 versions against the reference: within 4 ulp everywhere, the same inf / 0 /
// NaN; the two vector versions give the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/cpu/swiglu_avx2.h"
#include "kernels/cpu/swiglu_avx512.h"
#include "tests/kernels/avx512_under_test.h"
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

// Distance in units in the last place between two finite floats of the same sign (or zeros).
std::int64_t ulp_distance(float a, float b) {
  std::int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = std::numeric_limits<std::int32_t>::min() - ia;  // monotone over the sign
  if (ib < 0) ib = std::numeric_limits<std::int32_t>::min() - ib;
  return std::abs(std::int64_t(ia) - std::int64_t(ib));
}

using SwigluFn = void (*)(float*, const float*, int, int);

// The gates of the ulp sweep: a dense sweep over [-110, 110] (past both ends of exp's float
// range), the edges of the clamp, tiny and special values; ups: a fixed spread of magnitudes and
// signs. Its length is not a multiple of 16 or 8, so each vector version's tail runs too.
std::vector<float> sweep_gates() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> gates;
  for (int i = -220000; i <= 220000; ++i) gates.push_back(float(i) * 5e-4f);
  for (float g : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, 87.3f, -87.3f, 88.7f, -88.7f, 89.0f,
                  -89.0f, 103.9f, -103.9f, 104.0f, -104.0f, 150.0f, -150.0f, 3e38f, -3e38f,
                  kInf, -kInf, kNan})
    gates.push_back(g);
  return gates;
}

std::vector<float> sweep_gate_up(const std::vector<float>& gates) {
  const int ffn_dim = int(gates.size());
  std::vector<float> gate_up(2 * std::size_t(ffn_dim));
  for (int i = 0; i < ffn_dim; ++i) {
    gate_up[std::size_t(i)] = gates[std::size_t(i)];
    gate_up[std::size_t(ffn_dim + i)] = (i % 7 - 3) * 0.37f + (i % 2 ? 1e-3f : 11.0f);
  }
  return gate_up;
}

// fn against swiglu_reference over the sweep: within 4 ulp, the same inf / signed zero / NaN.
void expect_within_four_ulp(SwigluFn fn) {
  const std::vector<float> gates = sweep_gates(), gate_up = sweep_gate_up(gates);
  const int ffn_dim = int(gates.size());
  std::vector<float> ref(static_cast<std::size_t>(ffn_dim)), got(ref.size());
  swiglu_reference(ref.data(), gate_up.data(), 1, ffn_dim);
  fn(got.data(), gate_up.data(), 1, ffn_dim);
  std::int64_t worst = 0;
  for (int i = 0; i < ffn_dim; ++i) {
    const float r = ref[std::size_t(i)], o = got[std::size_t(i)];
    SCOPED_TRACE(::testing::Message() << "gate " << gates[std::size_t(i)] << " ref " << r
                                      << " got " << o);
    ASSERT_EQ(std::isnan(r), std::isnan(o));
    if (std::isnan(r)) continue;
    ASSERT_EQ(std::isinf(r), std::isinf(o));
    ASSERT_EQ(std::signbit(r), std::signbit(o));
    if (std::isinf(r) || r == 0.0f) {
      ASSERT_EQ(r, o);
      continue;
    }
    const std::int64_t d = ulp_distance(r, o);
    ASSERT_LE(d, 4);
    worst = std::max(worst, d);
  }
  ::testing::Test::RecordProperty("worst_ulp", int(worst));
}

TEST(SwiGlu, Avx512IsWithinFourUlpOfTheReference) {
  if (!test::avx512_kernels_run()) GTEST_SKIP() << "no AVX-512 on this CPU";
  expect_within_four_ulp(LLMBENCH_AVX512_NS::swiglu_f32);
}

TEST(SwiGlu, Avx2IsWithinFourUlpOfTheReference) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  expect_within_four_ulp(avx2::swiglu_f32);
}

TEST(SwiGlu, Avx2GivesTheAvx512VersionsBits) {
  if (!test::avx512_kernels_run()) GTEST_SKIP() << "no AVX-512 on this CPU";
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  const std::vector<float> gates = sweep_gates(), gate_up = sweep_gate_up(gates);
  const int ffn_dim = int(gates.size());
  std::vector<float> a(static_cast<std::size_t>(ffn_dim)), b(a.size());
  LLMBENCH_AVX512_NS::swiglu_f32(a.data(), gate_up.data(), 1, ffn_dim);
  avx2::swiglu_f32(b.data(), gate_up.data(), 1, ffn_dim);
  for (int i = 0; i < ffn_dim; ++i)
    ASSERT_EQ(std::memcmp(&a[std::size_t(i)], &b[std::size_t(i)], 4), 0)
        << "gate " << gates[std::size_t(i)] << ": " << a[std::size_t(i)] << " vs "
        << b[std::size_t(i)];
}

TEST(SwiGlu, EngineVersionDoesNotDependOnTheRowCount) {
  const int ffn_dim = 5632, n_rows = 9;
  const std::vector<float> gate_up = test::random_floats(n_rows * 2 * ffn_dim, 32, -20.0f, 20.0f);
  std::vector<float> all(static_cast<std::size_t>(n_rows) * ffn_dim), one(static_cast<std::size_t>(ffn_dim));
  swiglu(all.data(), gate_up.data(), n_rows, ffn_dim);  // parallel: 9 x 5632 > 2^15
  for (int r = 0; r < n_rows; ++r) {
    swiglu(one.data(), gate_up.data() + std::size_t(r) * 2 * ffn_dim, 1, ffn_dim);
    for (int i = 0; i < ffn_dim; ++i)
      ASSERT_EQ(one[std::size_t(i)], all[std::size_t(r) * ffn_dim + i]) << r << " " << i;
  }
}

}  // namespace
}  // namespace llmbench::cpu
