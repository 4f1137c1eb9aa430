// avx2::gemm_half and avx2::gemm_f32 (kernels/cpu/gemm_avx2.h), the AVX2 kernel for bf16, fp16
// and fp32 weights at prefill and batched-decode row counts, each weight type a test parameter:
// against matmul_half_reference / matmul_reference on ragged shapes (every edge tile, k around
// the 8-value step and the kGemmBlockK block, NaN-padded x rows), its x rounding at ties, NaN
// and infinities (fp32: passed through), row independence across m (bit for bit, also across
// its 256-row passes), and matmul_half's / matmul's dispatch to it at batch-16 and prefill row
// counts. Skipped on CPUs without AVX2 + FMA + F16C (and under LLMBENCH_CPU_ISA=portable).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_half.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

// `count` weights uniform in [-1, 1) from `seed`, as the bits of dtype t.
std::vector<std::uint16_t> random_weights(std::size_t count, unsigned seed, DType t) {
  const std::vector<float> values = test::random_floats(count, seed);
  std::vector<std::uint16_t> bits(count);
  narrow_to_half(bits.data(), values.data(), std::int64_t(count), t);
  return bits;
}

// Weights of dtype t (kFp32, kBf16 or kFp16): `values` kept as fp32 or narrowed to 16 bits.
struct Weights {
  DType t;
  std::vector<float> f32;
  std::vector<std::uint16_t> bits;
  Weights(DType type, const std::vector<float>& values) : t(type) {
    if (t == DType::kFp32) {
      f32 = values;
    } else {
      bits.resize(values.size());
      narrow_to_half(bits.data(), values.data(), std::int64_t(values.size()), t);
    }
  }
};

// `count` weights uniform in [-1, 1) from `seed`.
Weights random_weights_of(DType t, std::size_t count, unsigned seed) {
  return Weights(t, test::random_floats(count, seed));
}

// The kernel under test: gemm_f32 or gemm_half by the weights' dtype.
void gemm(float* out, const float* x, int lda, const Weights& w, int m, int n, int k) {
  if (w.t == DType::kFp32)
    avx2::gemm_f32(out, x, lda, w.f32.data(), m, n, k);
  else
    avx2::gemm_half(out, x, lda, w.bits.data(), w.t, m, n, k);
}

// The spec of the same product (x rows lda apart).
void reference(float* out, const float* x, int lda, const Weights& w, int m, int n, int k) {
  if (w.t == DType::kFp32)
    matmul_reference(out, x, w.f32.data(), m, n, k, lda);
  else
    matmul_half_reference(out, x, w.bits.data(), w.t, m, n, k, lda);
}

// What the engine runs for the same product: matmul or matmul_half.
void engine(float* out, const float* x, int lda, const Weights& w, int m, int n, int k) {
  if (w.t == DType::kFp32)
    matmul(out, x, w.f32.data(), m, n, k, lda);
  else
    matmul_half(out, x, w.bits.data(), w.t, m, n, k, lda);
}

class GemmAvx2 : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  }
};

// The kernel against the reference for one shape: x rows lda = k + 3 apart, NaN past k.
::testing::AssertionResult matches_reference(DType t, int m, int n, int k, double atol) {
  const int lda = k + 3;
  const auto x = test::padded_rows(m, k, lda, 2000u + m * 7 + n * 3 + k);
  const Weights w = random_weights_of(t, std::size_t(n) * k, 99u + n + k);
  std::vector<float> got(std::size_t(m) * n, -5.0f), want(got.size());
  gemm(got.data(), x.data(), lda, w, m, n, k);
  reference(want.data(), x.data(), lda, w, m, n, k);
  return test::all_close(got, want, atol, 1e-4)
         << " (m=" << m << " n=" << n << " k=" << k << ")";
}

TEST_P(GemmAvx2, MatchesTheReferenceOnRaggedShapes) {
  // m: one tile of 16 rows (of two 8-row vectors) and remainders of it; n: one panel of 6
  // weight rows and every remainder; k: below, at and past the 8-value step and the 512-value
  // block.
  for (int m : {1, 3, 8, 9, 16, 17, 25, 35})
    for (int n : {1, 2, 3, 4, 5, 6, 7, 11, 19, 38})
      for (int k : {1, 15, 16, 17, 40, 511, 512, 513, 1100})
        ASSERT_TRUE(matches_reference(GetParam(), m, n, k, 2e-4));
}

TEST_P(GemmAvx2, LargeShapesMatchTheReference) {
  // Model-like shapes on the threaded path (both threads' panel ranges, several k blocks).
  ASSERT_TRUE(matches_reference(GetParam(), 21, 301, 2100, 5e-4));
  ASSERT_TRUE(matches_reference(GetParam(), 128, 67, 2048, 5e-4));
  // More rows than one 256-row pass: a second pass with a ragged last tile.
  ASSERT_TRUE(matches_reference(GetParam(), 301, 29, 700, 5e-4));
}

// The product of `rows` random x rows, then each (first row, row count) of `parts` computed on
// its own and compared with the same rows of the whole product, bit for bit.
::testing::AssertionResult rows_match_in_parts(DType t, int rows, int n, int k, unsigned seed,
                                               const std::vector<std::pair<int, int>>& parts) {
  const auto x = test::random_floats(std::size_t(rows) * k, seed);
  const Weights w = random_weights_of(t, std::size_t(n) * k, seed + 1);
  std::vector<float> all(std::size_t(rows) * n);
  gemm(all.data(), x.data(), k, w, rows, n, k);
  for (const auto& [i, m] : parts) {
    std::vector<float> part(std::size_t(m) * n);
    gemm(part.data(), x.data() + std::size_t(i) * k, k, w, m, n, k);
    if (!std::equal(part.begin(), part.end(), all.begin() + std::ptrdiff_t(i) * n))
      return ::testing::AssertionFailure() << "rows " << i << " + " << m << " of " << rows;
  }
  return ::testing::AssertionSuccess();
}

TEST_P(GemmAvx2, EachRowIsIndependentOfTheRowCount) {
  // Row i of a 37-row product (a last tile of 5 rows) equals that row computed in products of
  // 1 to 6 rows (other tile shapes, other positions in a tile), bit for bit: a sequence's
  // logits do not depend on its batch neighbours.
  std::vector<std::pair<int, int>> parts;
  for (int i = 0; i < 37; i += 2) parts.emplace_back(i, std::min(37 - i, 1 + i % 6));
  EXPECT_TRUE(rows_match_in_parts(GetParam(), 37, 41, 1300, 71, parts));
}

TEST_P(GemmAvx2, RowsPastTheFirstPassAreIndependentOfTheRowCount) {
  // A 530-row product (passes of 256, 256 and 18 rows, each too large for the panel-major
  // order) against the same rows in products of 9, 20, 21 (panel-major) and 300 rows, starting
  // at pass and tile boundaries and between them, bit for bit.
  EXPECT_TRUE(rows_match_in_parts(GetParam(), 530, 13, 600, 73,
                                  {{250, 9}, {256, 20}, {230, 300}, {509, 21}}));
}

TEST_P(GemmAvx2, RoundsActivationsLikeTheReference) {
  // x values at bf16/fp16 rounding ties, NaN and infinities, at every position of 33 (four
  // 8-value vectors and a tail): one weight of 1 shows the rounded x (fp32: x itself), in
  // every row of a 5-row product.
  const DType t = GetParam();
  const std::vector<float> values = {
      1.0f + 1.0f / 256,    // bf16 tie between 1 and 1 + 2^-7: to even (1)
      1.0f + 3.0f / 256,    // bf16 tie: to even (1 + 2^-6)
      -1.0f - 1.0f / 4096,  // fp16 below half an ulp: to -1
      1.0f + 1.0f / 2048,   // fp16 tie: to even (1)
      65520.0f,             // fp16: rounds to infinity
      3.0e38f,              // bf16: near the top of the range
      1e-30f,               // fp16: to zero
      -0.0f, NAN, INFINITY};
  const int m = 5, k = 33;
  for (float v : values) {
    for (int at = 0; at < k; ++at) {
      std::vector<float> x(std::size_t(m) * k, 0.0f);
      for (int i = 0; i < m; ++i) x[std::size_t(i) * k + at] = v;
      std::vector<float> one(k, 0.0f);
      one[at] = 1.0f;
      const Weights w(t, one);
      std::vector<float> out(m), ref(m);
      gemm(out.data(), x.data(), k, w, m, 1, k);
      reference(ref.data(), x.data(), k, w, m, 1, k);
      for (int i = 0; i < m; ++i) {
        if (std::isnan(ref[i]))
          EXPECT_TRUE(std::isnan(out[i])) << "value " << v << " at " << at;
        else
          EXPECT_EQ(out[i], ref[i]) << "value " << v << " at " << at << " row " << i;
      }
    }
  }
}

TEST_P(GemmAvx2, TheEngineTakesItAtBatchAndPromptRowCounts) {
  // matmul_half / matmul at 9 rows (the first past the decode kernels), 16 (batch-16 decode),
  // 128 (one prompt) and 300 (more than one pass) give the kernel's bits on a CPU without
  // AVX-512 (with it, other kernels take some of them).
  const DType t = GetParam();
  if (cpu_isa().avx512) GTEST_SKIP() << "AVX-512 paths (" << cpu_isa_name() << ")";
  const int n = 67, k = 700;
  const Weights w = random_weights_of(t, std::size_t(n) * k, 81);
  for (int m : {9, 16, 128, 300}) {
    const auto x = test::padded_rows(m, k, k + 1, 82u + m);
    std::vector<float> ran(std::size_t(m) * n), direct(ran.size());
    engine(ran.data(), x.data(), k + 1, w, m, n, k);
    gemm(direct.data(), x.data(), k + 1, w, m, n, k);
    EXPECT_EQ(ran, direct) << "m " << m;
  }
}

TEST_P(GemmAvx2, EmptySumGivesZeros) {
  std::vector<float> out(6, 7.0f);
  if (GetParam() == DType::kFp32)
    avx2::gemm_f32(out.data(), nullptr, 1, nullptr, 2, 3, 0);
  else
    avx2::gemm_half(out.data(), nullptr, 1, nullptr, GetParam(), 2, 3, 0);
  EXPECT_EQ(out, std::vector<float>(6, 0.0f));
}

TEST(MatmulHalfTiledSgemm, MatchesTheReference) {
  // The portable prefill path, public for bench_kernels: n crosses a kHalfTileRows tile.
  for (DType t : {DType::kBf16, DType::kFp16}) {
    const int m = 19, n = kHalfTileRows + 13, k = 301;
    const auto x = test::padded_rows(m, k, k + 2, 91);
    const auto w = random_weights(std::size_t(n) * k, 92, t);
    std::vector<float> out(std::size_t(m) * n), ref(out.size());
    matmul_half_tiled_sgemm(out.data(), x.data(), w.data(), t, m, n, k, k + 2);
    matmul_half_reference(ref.data(), x.data(), w.data(), t, m, n, k, k + 2);
    EXPECT_TRUE(test::all_close(out, ref, 2e-4, 1e-4)) << dtype_name(t);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GemmAvx2,
                         ::testing::Values(DType::kBf16, DType::kFp16, DType::kFp32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace llmbench::cpu
