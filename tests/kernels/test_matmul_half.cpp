// matmul_half (bf16/fp16 weights, fp32 activations rounded to the weight dtype, fp32
// accumulation): the reference against hand-computed products that show the activation
// rounding, then the engine's version (few-row path and tiled-sgemm path) against the reference
// on odd shapes with padded x rows, for both dtypes; the conversions against kernels/common/half.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_avx2.h"
#include "kernels/cpu/matmul_half.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

std::vector<std::uint16_t> narrow(const std::vector<float>& v, DType t) {
  std::vector<std::uint16_t> h(v.size());
  narrow_to_half(h.data(), v.data(), std::int64_t(v.size()), t);
  return h;
}

class MatmulHalfDtypes : public ::testing::TestWithParam<DType> {};

TEST_P(MatmulHalfDtypes, ReferenceRoundsTheActivationsToTheWeightDtype) {
  const DType t = GetParam();
  // 1 + eps/4 of the dtype rounds to 1 (below half an ulp); 1 + 3 eps/4 rounds to 1 + eps.
  const float eps = t == DType::kBf16 ? 0x1p-7f : 0x1p-10f;
  const std::vector<float> x = {1.0f + eps / 4, 1.0f + 3 * eps / 4, 2.0f};
  const auto w = narrow({1.0f, 1.0f, 0.5f, 0.0f, 0.0f, -1.0f}, t);  // [2, 3]
  std::vector<float> out(2);
  matmul_half_reference(out.data(), x.data(), w.data(), t, 1, 2, 3, 3);
  EXPECT_EQ(out[0], 1.0f + (1.0f + eps) + 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  // The engine's version agrees exactly on these representable sums.
  std::vector<float> fast(2);
  matmul_half(fast.data(), x.data(), w.data(), t, 1, 2, 3, 3);
  EXPECT_EQ(fast, out);
}

TEST_P(MatmulHalfDtypes, ReferenceWidensTheWeightsExactly) {
  const DType t = GetParam();
  // A weight that is not a float-of-the-dtype gets rounded once at narrowing; the product
  // with x = 1 is then exactly the widened weight.
  const std::vector<float> x = {1.0f};
  const auto w = narrow({0.1f, -3.3f, 1e-3f}, t);
  std::vector<float> out(3);
  matmul_half_reference(out.data(), x.data(), w.data(), t, 1, 3, 1, 1);
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(out[j], t == DType::kBf16 ? bf16_to_fp32(w[j]) : fp16_to_fp32(w[j])) << j;
}

TEST_P(MatmulHalfDtypes, MatchesTheReferenceOnOddShapes) {
  const DType t = GetParam();
  // n = 300 crosses a kHalfTileRows tile boundary in the prefill path; m = 9 and 33 take it,
  // m <= 8 the few-row path (with an n % 4 tail for n = 3, 7, 19, 733).
  for (int m : {1, 2, 3, 7, 8, 9, 33}) {
    for (int n : {1, 3, 7, 19, 300, 733}) {
      for (int k : {1, 7, 19, 733}) {
        const int lda = k + 3;
        const auto x = test::random_floats(std::size_t(m) * lda, 1000u + m + n + k);
        const auto w = narrow(test::random_floats(std::size_t(n) * k, 77u + n * k), t);
        std::vector<float> out(std::size_t(m) * n), ref(out.size());
        matmul_half(out.data(), x.data(), w.data(), t, m, n, k, lda);
        matmul_half_reference(ref.data(), x.data(), w.data(), t, m, n, k, lda);
        SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) +
                     " k=" + std::to_string(k));
        EXPECT_TRUE(test::all_close(out, ref, 1e-4, 1e-4));
      }
    }
  }
}

TEST_P(MatmulHalfDtypes, EachRowIsIndependentOfTheRowCountWithinAPath) {
  // The few-row path: row i of an m-row product is bit-for-bit row i of a smaller product
  // taking the same path (bf16 reads 1-2 rows' weights in place and 3-8 through tiles; fp16
  // always through tiles), so a sequence's logits do not depend on its batch neighbours.
  const DType t = GetParam();
  const int n = 37, k = 129;
  const auto x = test::random_floats(std::size_t(kFewRowsMax) * k, 5);
  const auto w = narrow(test::random_floats(std::size_t(n) * k, 6), t);
  for (auto [big, small] : {std::pair{kFewRowsMax, 3}, std::pair{2, 1}}) {
    std::vector<float> a(static_cast<std::size_t>(big) * n), b(static_cast<std::size_t>(small) * n);
    matmul_half(a.data(), x.data(), w.data(), t, big, n, k, k);
    matmul_half(b.data(), x.data(), w.data(), t, small, n, k, k);
    for (std::size_t e = 0; e < b.size(); ++e) ASSERT_EQ(a[e], b[e]) << big << " vs " << small;
  }
}

TEST_P(MatmulHalfDtypes, MatchesTheReferenceOverSeveralChunksOfK) {
  // k = 2100 spans several 2 KB chunks of weights (the AVX-512 kernels sum k chunk by chunk)
  // with a tail; every row count of decode and some of prefill.
  const DType t = GetParam();
  const int n = 23, k = 2100, lda = 2105;
  const auto w = narrow(test::random_floats(std::size_t(n) * k, 21), t);
  for (int m : {1, 2, 3, 4, 5, 8, 16, 17, 32, 33, 70, 129}) {
    const auto x = test::random_floats(std::size_t(m) * lda, 300u + m);
    std::vector<float> out(std::size_t(m) * n), ref(out.size());
    matmul_half(out.data(), x.data(), w.data(), t, m, n, k, lda);
    matmul_half_reference(ref.data(), x.data(), w.data(), t, m, n, k, lda);
    SCOPED_TRACE("m=" + std::to_string(m));
    EXPECT_TRUE(test::all_close(out, ref, 2e-4, 1e-4));
  }
}

TEST_P(MatmulHalfDtypes, AvxRowsAreIndependentOfTheRowCountUpToTheCrossover) {
  // The AVX-512 kernels compute every output by the same operations at every row count: bf16
  // (vdpbf16ps) for decode and prefill alike, fp16 up to kFp16StreamRowsMax. So row i of a
  // 40-row (bf16) or kFp16StreamRowsMax-row (fp16) product equals that row computed in a
  // smaller product, bit for bit.
  const DType t = GetParam();
  if (!(t == DType::kBf16 ? cpu_isa().avx512_bf16 : cpu_isa().avx512))
    GTEST_SKIP() << "portable path (" << cpu_isa_name() << ")";
  const int n = 29, k = 1500, rows = t == DType::kBf16 ? 40 : kFp16StreamRowsMax;
  const auto x = test::random_floats(std::size_t(rows) * k, 31);
  const auto w = narrow(test::random_floats(std::size_t(n) * k, 32), t);
  std::vector<float> all(std::size_t(rows) * n);
  matmul_half(all.data(), x.data(), w.data(), t, rows, n, k, k);
  for (int i = 0; i < rows; i += 3) {
    const int m = std::min(rows - i, 1 + i % 6);
    std::vector<float> part(std::size_t(m) * n);
    matmul_half(part.data(), x.data() + std::size_t(i) * k, w.data(), t, m, n, k, k);
    for (std::size_t e = 0; e < part.size(); ++e)
      ASSERT_EQ(part[e], all[std::size_t(i) * n + e]) << "row " << i << " m " << m;
  }
}

TEST_P(MatmulHalfDtypes, Avx2KernelMatchesTheReferenceAndIgnoresTheRowCount) {
  // The AVX2 decode kernel called directly (matmul_half takes it only on CPUs without the
  // AVX-512 path): odd n (one weight row to a few panels of 16), k below, at and around the
  // 32-weight step and long with a tail, padded x rows; then row i of the 8-row product against
  // the same row computed alone or in a 3-row product, bit for bit (the tiles differ: x rows in
  // pairs, a last odd row alone).
  const DType t = GetParam();
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  for (int m : {1, 2, 3, 5, 8}) {
    for (int n : {1, 3, 17, 37}) {
      for (int k : {1, 15, 16, 31, 32, 33, 2100, 4133}) {
        const int lda = k + 5;
        const auto x = test::random_floats(std::size_t(m) * lda, 900u + m + n + k);
        const auto w = narrow(test::random_floats(std::size_t(n) * k, 41u + n + k), t);
        std::vector<float> out(std::size_t(m) * n), ref(out.size());
        avx2::matmul_half_rows(out.data(), x.data(), lda, w.data(), t, m, n, k);
        matmul_half_reference(ref.data(), x.data(), w.data(), t, m, n, k, lda);
        SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) +
                     " k=" + std::to_string(k));
        EXPECT_TRUE(test::all_close(out, ref, 2e-4, 1e-4));
      }
    }
  }
  const int n = 37, k = 129;
  const auto x = test::random_floats(std::size_t(8) * k, 15);
  const auto w = narrow(test::random_floats(std::size_t(n) * k, 16), t);
  std::vector<float> all(std::size_t(8) * n);
  avx2::matmul_half_rows(all.data(), x.data(), k, w.data(), t, 8, n, k);
  for (int i : {0, 3, 5, 7}) {
    for (int m : {1, 3}) {
      if (i + m > 8) continue;
      std::vector<float> part(std::size_t(m) * n);
      avx2::matmul_half_rows(part.data(), x.data() + std::size_t(i) * k, k, w.data(), t, m, n, k);
      for (std::size_t e = 0; e < part.size(); ++e)
        ASSERT_EQ(part[e], all[std::size_t(i) * n + e]) << "row " << i << " m " << m;
    }
  }
}

TEST_P(MatmulHalfDtypes, Avx2KernelGivesTheSameBitsWithSixteenBitActivations) {
  // Past 16 KiB of fp32 x per row (k > 4096), one or two x rows are held as 16-bit values and
  // widened like the weights; more rows keep fp32 x. Both are the same fp32 vectors, so row i
  // of the 8-row product (fp32 x) equals the row computed alone or in a pair (16-bit x), bit
  // for bit, at a k with a tail (5000 = 156 steps of 32 + 8).
  const DType t = GetParam();
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  const int n = 37, k = 5000;
  const auto x = test::random_floats(std::size_t(8) * k, 17);
  const auto w = narrow(test::random_floats(std::size_t(n) * k, 18), t);
  std::vector<float> all(std::size_t(8) * n);
  avx2::matmul_half_rows(all.data(), x.data(), k, w.data(), t, 8, n, k);
  for (int i : {0, 3, 6}) {
    for (int m : {1, 2}) {
      std::vector<float> part(std::size_t(m) * n);
      avx2::matmul_half_rows(part.data(), x.data() + std::size_t(i) * k, k, w.data(), t, m, n, k);
      for (std::size_t e = 0; e < part.size(); ++e)
        ASSERT_EQ(part[e], all[std::size_t(i) * n + e]) << "row " << i << " m " << m;
    }
  }
}

TEST_P(MatmulHalfDtypes, Avx2KernelRoundsActivationsLikeTheReference) {
  // x values at bf16/fp16 rounding ties, NaN and infinities: the kernel's vector rounding is
  // fp32_to_bf16 / fp32_to_fp16 of kernels/common/half.h (one weight of 1 shows the rounded x).
  const DType t = GetParam();
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  const std::vector<float> values = {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -1.0f - 1.0f / 4096,
                                     1.0f + 1.0f / 2048, 65520.0f, 3.0e38f, 1e-30f, -0.0f};
  // k = 16: fp32 x; k = 4112: x held as 16-bit values (the first and last 16 places).
  for (int k : {16, 4112}) {
    for (float v : values) {
      for (int at = 0; at < k; at = at == 15 ? std::max(16, k - 16) : at + 1) {
        std::vector<float> x(k, 0.0f);
        x[at] = v;
        std::vector<std::uint16_t> w(k, 0);
        narrow_to_half(&w[at], std::vector<float>{1.0f}.data(), 1, t);
        float out = 0.0f, ref = 0.0f;
        avx2::matmul_half_rows(&out, x.data(), k, w.data(), t, 1, 1, k);
        matmul_half_reference(&ref, x.data(), w.data(), t, 1, 1, k, k);
        EXPECT_EQ(out, ref) << "value " << v << " at " << at << " k " << k;
      }
    }
  }
}

TEST_P(MatmulHalfDtypes, EmptySumGivesZeros) {
  std::vector<float> out(6, 7.0f);
  matmul_half(out.data(), nullptr, nullptr, GetParam(), 2, 3, 0, 1);
  EXPECT_EQ(out, std::vector<float>(6, 0.0f));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MatmulHalfDtypes, ::testing::Values(DType::kBf16, DType::kFp16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(WidenHalf, EveryFp16AndBf16BitPatternMatchesEngineHalf) {
  // The vectorised widening (F16C for fp16 where present) against the scalar spec, all 2^16
  // patterns, at an odd length so the scalar tail runs too.
  std::vector<std::uint16_t> bits(65536 + 3);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = std::uint16_t(i);
  std::vector<float> got(bits.size());
  for (DType t : {DType::kFp16, DType::kBf16}) {
    widen_half(got.data(), bits.data(), std::int64_t(bits.size()), t);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const float want = t == DType::kBf16 ? bf16_to_fp32(bits[i]) : fp16_to_fp32(bits[i]);
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(got[i])) << i;
      else
        ASSERT_EQ(got[i], want) << dtype_name(t) << " bits " << i;
    }
  }
}

TEST(RoundToHalf, IsNarrowThenWiden) {
  const auto x = test::random_floats(1001, 9, -70000.0f, 70000.0f);
  std::vector<float> r(x.size());
  for (DType t : {DType::kFp16, DType::kBf16}) {
    round_to_half(r.data(), x.data(), std::int64_t(x.size()), t);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float want = t == DType::kBf16 ? bf16_to_fp32(fp32_to_bf16(x[i]))
                                           : fp16_to_fp32(fp32_to_fp16(x[i]));
      ASSERT_EQ(r[i], want) << i;  // includes fp16 overflow to inf beyond 65520
    }
  }
}

}  // namespace
}  // namespace llmbench::cpu
