// matmul: the reference against hand-computed products, then the OpenBLAS path (sgemv for one
// row, sgemm otherwise) against the reference on odd shapes, with padded x rows (lda > k); the
// few-row, AVX-512 and AVX2 decode kernels against the reference and across row counts.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <tuple>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_avx2.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

using test::padded_rows;

TEST(MatmulReference, HandComputedProduct) {
  // x: [2, 2], w: [3, 2] (nn.Linear layout), out[i, j] = x_i . w_j.
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> w = {1, 0, 0, 1, 1, -1};
  std::vector<float> out(6);
  matmul_reference(out.data(), x.data(), w.data(), 2, 3, 2, 2);
  EXPECT_EQ(out, (std::vector<float>{1, 2, -1, 3, 4, -1}));
}

TEST(MatmulReference, ReadsOnlyKValuesOfEachStridedRow) {
  // lda 3 > k 2: the third value of each x row is NaN and must not be read.
  const std::vector<float> x = {1, 2, NAN, 3, 4, NAN};
  const std::vector<float> w = {5, 6};
  std::vector<float> out(2);
  matmul_reference(out.data(), x.data(), w.data(), 2, 1, 2, 3);
  EXPECT_EQ(out, (std::vector<float>{17, 39}));
}

TEST(MatmulReference, AccumulatesInDouble) {
  // 1e8 + 1 - 1e8 loses the 1 in float accumulation but not in double.
  const std::vector<float> x = {1e8f, 1.0f, -1e8f};
  const std::vector<float> w = {1.0f, 1.0f, 1.0f};
  float out = 0.0f;
  matmul_reference(&out, x.data(), w.data(), 1, 1, 3, 3);
  EXPECT_EQ(out, 1.0f);
}

TEST(AllClose, RejectsNanAndInf) {
  EXPECT_TRUE(test::all_close({1.0f, 2.0f}, {1.0f, 2.0f}, 0.0, 0.0));
  EXPECT_FALSE(test::all_close({1.0f, NAN}, {1.0f, 2.0f}, 1.0, 1.0));
  EXPECT_FALSE(test::all_close({1.0f, INFINITY}, {1.0f, INFINITY}, 1.0, 1.0));
  EXPECT_FALSE(test::all_close({1.0f, 2.5f}, {1.0f, 2.0f}, 0.1, 0.1));
}

struct MatmulShape {
  int m, n, k, lda;
};

TEST(Matmul, MatchesTheReferenceOnOddShapes) {
  const std::vector<MatmulShape> shapes = {
      // m = 1: the sgemv path (lda unused).
      {1, 1, 1, 1}, {1, 733, 19, 19}, {1, 19, 733, 740}, {1, 7, 3, 3},
      // m > 1: the sgemm path, some with padded x rows (lda > k).
      {3, 7, 19, 19}, {7, 19, 3, 5}, {19, 733, 7, 8}, {2, 733, 733, 733}, {733, 19, 733, 733},
      {733, 3, 19, 24}, {3, 733, 733, 750}, {19, 19, 19, 19}, {733, 733, 1, 1}, {16, 1, 733, 737},
      // k = 0: the empty sum, on both paths.
      {1, 5, 0, 1}, {3, 5, 0, 2},
  };
  unsigned seed = 51;
  for (const MatmulShape& sh : shapes) {
    SCOPED_TRACE(testing::Message()
                 << "m=" << sh.m << " n=" << sh.n << " k=" << sh.k << " lda=" << sh.lda);
    const std::vector<float> x = padded_rows(sh.m, sh.k, sh.lda, seed++);
    const std::vector<float> w = test::random_floats(static_cast<std::size_t>(sh.n) * sh.k, seed++);
    std::vector<float> out(static_cast<std::size_t>(sh.m) * sh.n, NAN), ref(out.size());
    matmul_reference(ref.data(), x.data(), w.data(), sh.m, sh.n, sh.k, sh.lda);
    matmul(out.data(), x.data(), w.data(), sh.m, sh.n, sh.k, sh.lda);
    // Inputs in [-1, 1): float rounding over k products stays far below 1e-4 for k <= 733.
    EXPECT_TRUE(test::all_close(out, ref, 1e-4, 1e-4));
  }
}

}  // namespace
}  // namespace llmbench::cpu

namespace llmbench::cpu {
namespace {

TEST(MatmulFewRows, MatchesTheReferenceOnOddShapes) {
  // Every m the engine sends here (2..kFewRowsMax), and m = 1 and 16 for good measure; n not a
  // multiple of 4 exercises the one-row tail; padded x rows (lda > k) hold NaN.
  unsigned seed = 7;
  for (int m : {1, 2, 3, 5, 7, 8, 16})
    for (const auto& [n, k, lda] : {std::tuple{1, 1, 1}, {3, 19, 19}, {7, 733, 740}, {733, 19, 24},
                                   {19, 733, 733}, {4, 3, 3}})
    {
      SCOPED_TRACE(testing::Message() << "m=" << m << " n=" << n << " k=" << k << " lda=" << lda);
      const std::vector<float> x = padded_rows(m, k, lda, seed++);
      const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, seed++);
      std::vector<float> out(static_cast<std::size_t>(m) * n, NAN), ref(out.size());
      matmul_reference(ref.data(), x.data(), w.data(), m, n, k, lda);
      matmul_few_rows(out.data(), x.data(), w.data(), m, n, k, lda);
      EXPECT_TRUE(test::all_close(out, ref, 1e-4, 1e-4));
    }
}

TEST(MatmulFewRows, EachRowIsIndependentOfTheRowCount) {
  // Row i of an m-row product is bit-identical to the same row computed alone, whether it was
  // paired with a neighbour or not (batch invariance of decode).
  const int n = 37, k = 211;
  const std::vector<float> x = test::random_floats(static_cast<std::size_t>(7) * k, 3);
  const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, 4);
  std::vector<float> all(static_cast<std::size_t>(7) * n);
  matmul_few_rows(all.data(), x.data(), w.data(), 7, n, k, k);
  for (int i = 0; i < 7; ++i) {
    std::vector<float> one(n);
    matmul_few_rows(one.data(), x.data() + static_cast<std::size_t>(i) * k, w.data(), 1, n, k, k);
    for (int j = 0; j < n; ++j) ASSERT_EQ(one[j], all[static_cast<std::size_t>(i) * n + j]) << i << "," << j;
  }
}

}  // namespace
}  // namespace llmbench::cpu

namespace llmbench::cpu {
namespace {

TEST(MatmulStreaming, MatchesTheReferenceAtEveryDecodeRowCount) {
  // matmul() for 1..kStreamRowsMax rows (the AVX-512 weight-streaming kernel where the CPU has
  // it, else sgemv / few-rows / sgemm): k = 1100 spans three 512-float chunks with a tail, n
  // leaves a column remainder, padded x rows hold NaN.
  const int n = 37, k = 1100, lda = 1103;
  const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, 11);
  for (int m = 1; m <= kStreamRowsMax + 1; ++m) {
    SCOPED_TRACE(testing::Message() << "m=" << m);
    const std::vector<float> x = padded_rows(m, k, lda, 100u + m);
    std::vector<float> out(static_cast<std::size_t>(m) * n, NAN), ref(out.size());
    matmul_reference(ref.data(), x.data(), w.data(), m, n, k, lda);
    matmul(out.data(), x.data(), w.data(), m, n, k, lda);
    EXPECT_TRUE(test::all_close(out, ref, 1e-4, 1e-4));
  }
}

TEST(MatmulAvx2, F32KernelMatchesTheReferenceAndIgnoresTheRowCount) {
  // The AVX2 fp32 decode kernel called directly (matmul takes it for 1..kFewRowsMax rows on
  // CPUs with AVX2 but not the AVX-512 path): every m it serves, n of one weight row to a few
  // panels, k below, at and around one 32-weight step and long with a tail, padded x rows
  // holding NaN. Then row i of the 8-row product against the same row computed alone or in a
  // 3-row product, bit for bit (rows go in pairs, a last odd row alone).
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  unsigned seed = 300;
  for (int m = 1; m <= kFewRowsMax; ++m)
    for (int n : {1, 3, 17, 37})
      for (int k : {1, 7, 31, 32, 33, 2100}) {
        SCOPED_TRACE(testing::Message() << "m=" << m << " n=" << n << " k=" << k);
        const int lda = k + 5;
        const std::vector<float> x = padded_rows(m, k, lda, seed++);
        const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, seed++);
        std::vector<float> out(static_cast<std::size_t>(m) * n, NAN), ref(out.size());
        matmul_reference(ref.data(), x.data(), w.data(), m, n, k, lda);
        avx2::matmul_f32_rows(out.data(), x.data(), lda, w.data(), m, n, k);
        // Inputs in [-1, 1): fp32 rounding over 2100 products stays below 1e-4 + 1e-4 |ref|.
        EXPECT_TRUE(test::all_close(out, ref, 1e-4, 1e-4));
      }
  const int n = 37, k = 129;
  const std::vector<float> x = test::random_floats(static_cast<std::size_t>(8) * k, 17);
  const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, 18);
  std::vector<float> all(static_cast<std::size_t>(8) * n);
  avx2::matmul_f32_rows(all.data(), x.data(), k, w.data(), 8, n, k);
  for (int i : {0, 3, 5, 7})
    for (int m : {1, 3}) {
      if (i + m > 8) continue;
      std::vector<float> part(static_cast<std::size_t>(m) * n);
      avx2::matmul_f32_rows(part.data(), x.data() + static_cast<std::size_t>(i) * k, k, w.data(),
                            m, n, k);
      for (std::size_t e = 0; e < part.size(); ++e)
        ASSERT_EQ(part[e], all[static_cast<std::size_t>(i) * n + e]) << "row " << i << " m " << m;
    }
}

TEST(MatmulAvx2, F32OneRowPastTheL1TakesWeightRowsThreeAtATimeWithTheSameBits) {
  // One x row longer than 16 KiB (k > 4096: tinyllama's down_proj, k = 5632) meets the weight
  // rows three at a time (1 x 3 tiles). Every output must keep the one-row-at-a-time sums bit for
  // bit: row i of an 8-row product (x rows in pairs, one weight row at a time) against the
  // same x row alone, at k just past the threshold, the model's k, odd k with a tail, and n
  // that leave one or two weight rows alone in a 16-row panel and at the matrix's end; and the
  // reference within the fp32 tolerance.
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  unsigned seed = 400;
  for (int k : {4097, 4112, 4133, 5632, 5633})
    for (int n : {1, 2, 3, 4, 17, 37}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " k=" << k);
      const std::vector<float> x = test::random_floats(static_cast<std::size_t>(8) * k, seed++);
      const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, seed++);
      std::vector<float> all(static_cast<std::size_t>(8) * n), ref(all.size());
      avx2::matmul_f32_rows(all.data(), x.data(), k, w.data(), 8, n, k);
      matmul_reference(ref.data(), x.data(), w.data(), 8, n, k, k);
      EXPECT_TRUE(test::all_close(all, ref, 1e-4, 1e-4));
      for (int i : {0, 5, 7}) {
        std::vector<float> one(static_cast<std::size_t>(n), NAN);
        avx2::matmul_f32_rows(one.data(), x.data() + static_cast<std::size_t>(i) * k, k, w.data(),
                              1, n, k);
        for (int j = 0; j < n; ++j)
          ASSERT_EQ(one[j], all[static_cast<std::size_t>(i) * n + j]) << "row " << i << " col " << j;
      }
    }
}

TEST(MatmulAvx2, F32KernelGivesTheSameBitsOnAnyTeam) {
  // Panels are shared out over the threads and taken from one another at run time
  // (panel_schedule.h); each panel's outputs must not depend on who computed it: one, two and
  // three threads give the same bits, for one x row (three weight rows at a time past 16 KiB
  // of x) and for a few.
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  const int n = 1000;
  for (int k : {2048, 5632})
    for (int m : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "m=" << m << " k=" << k);
      const std::vector<float> x = test::random_floats(static_cast<std::size_t>(m) * k, 500);
      const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, 501);
      std::vector<std::vector<float>> outs;
      const int before = omp_get_max_threads();
      for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        outs.emplace_back(static_cast<std::size_t>(m) * n, NAN);
        avx2::matmul_f32_rows(outs.back().data(), x.data(), k, w.data(), m, n, k);
      }
      omp_set_num_threads(before);
      EXPECT_EQ(outs[1], outs[0]);
      EXPECT_EQ(outs[2], outs[0]);
    }
}

TEST(MatmulStreaming, EachRowIsIndependentOfTheRowCount) {
  // Up to kStreamRowsMax rows the AVX-512 path is one kernel whose every output is the same
  // sequence of operations, so row i of an m-row product is bit-identical to that row in any
  // other row count (batch invariance of decode). The portable path switches between sgemv,
  // the few-rows kernel and sgemm, so it holds this only within each (tested above).
  if (!cpu_isa().avx512) GTEST_SKIP() << "portable path (" << cpu_isa_name() << ")";
  const int n = 45, k = 1037, rows = kStreamRowsMax;
  const std::vector<float> x = test::random_floats(static_cast<std::size_t>(rows) * k, 12);
  const std::vector<float> w = test::random_floats(static_cast<std::size_t>(n) * k, 13);
  std::vector<float> all(static_cast<std::size_t>(rows) * n);
  matmul(all.data(), x.data(), w.data(), rows, n, k, k);
  for (int i = 0; i < rows; i += 3) {
    const int m = std::min(rows - i, 1 + i % 7);  // 1..7 rows starting at row i
    std::vector<float> part(static_cast<std::size_t>(m) * n);
    matmul(part.data(), x.data() + static_cast<std::size_t>(i) * k, w.data(), m, n, k, k);
    for (std::size_t e = 0; e < part.size(); ++e)
      ASSERT_EQ(part[e], all[static_cast<std::size_t>(i) * n + e]) << "row " << i << " m " << m;
  }
}

}  // namespace
}  // namespace llmbench::cpu

#include "kernels/cpu/read_sum.h"

namespace llmbench::cpu {
namespace {

TEST(ReadSum, MatchesTheReferenceOnOddLengths) {
  // Small integers sum exactly in float, so the fast version must equal the reference, at
  // lengths that leave partial 512-byte steps, uneven stream splits and a scalar tail.
  for (std::int64_t n : {1, 3, 7, 19, 733, 128 * 9 + 5, 128 * 64 * 3 + 77}) {
    std::vector<float> v(n);
    for (std::int64_t i = 0; i < n; ++i) v[i] = float((i * 7) % 5) - 2.0f;
    EXPECT_EQ(double(read_sum(v.data(), n)), read_sum_reference(v.data(), n)) << n;
  }
}

}  // namespace
}  // namespace llmbench::cpu
