// The int8/int4 block formats (kernels/cpu/quant.h): the reference quantiser against
// hand-computed blocks (layout, scale rounding, clamping, the zero block), the round-trip error
// bound, then the engine's versions (quantize_rows, dequantize_rows, matmul_quant's decode and
// prefill paths, embedding_quant) against the references on odd shapes with padded x rows; the
// packed column-panel layout (hand-picked bytes, quantize_packed and the row reads against the
// references); and the int8-activation (VNNI) product: its activation quantiser against
// hand-computed blocks, its reference against the weight-only product within x's rounding
// bound, its kernel against its reference and bit for bit against the fp32 sum quant.h
// specifies, and how far both products are from the fp32 one.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "tests/kernels/check.h"
#include "tests/kernels/quant_check.h"

namespace llmbench::cpu {
namespace {

using test::pack;
using test::quantize;

TEST(Quant, BytesPerRow) {
  EXPECT_EQ(quant_row_bytes(DType::kInt8, 64), 68);
  EXPECT_EQ(quant_row_bytes(DType::kInt4, 64), 36);
  EXPECT_EQ(dtype_bytes_x32(DType::kInt8), 34);
  EXPECT_EQ(dtype_bytes_x32(DType::kInt4), 18);
  EXPECT_EQ(dtype_bytes_for(DType::kBf16, 3), 6);
}

TEST(Quant, Int8BlockLayout) {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.27f;   // max |x|: d = fp16(0.01)
  x[1] = -1.27f;
  x[2] = 0.005f;  // 0.5 ulp of the scale: rounds to even (0)
  x[3] = 0.5f;
  const auto q = quantize(x, DType::kInt8, 1, 32);
  ASSERT_EQ(q.size(), 34u);
  std::uint16_t d;
  std::memcpy(&d, q.data(), 2);
  EXPECT_EQ(d, fp32_to_fp16(1.27f / 127.0f));
  const float df = fp16_to_fp32(d);
  EXPECT_EQ(std::int8_t(q[2]), std::int8_t(std::clamp(int(std::nearbyint(1.27f / df)), -127, 127)));
  EXPECT_EQ(std::int8_t(q[3]), -std::int8_t(q[2]));
  EXPECT_EQ(std::int8_t(q[5]), std::int8_t(std::nearbyint(0.5f / df)));
  for (int j = 4; j < 32; ++j) {
    if (j != 5) {
      EXPECT_EQ(q[2 + j], 0) << j;
    }
  }
  std::vector<float> back(32);
  dequantize_rows_reference(back.data(), q.data(), DType::kInt8, 1, 32);
  EXPECT_EQ(back[0], float(std::int8_t(q[2])) * df);
}

TEST(Quant, Int4BlockLayoutNibbles) {
  std::vector<float> x(32, 0.0f);
  x[0] = 7.0f;    // d = 1 exactly
  x[16] = -7.0f;  // element 16 shares byte 0 (high nibble)
  x[1] = 2.4f;    // rounds to 2
  x[17] = -2.6f;  // rounds to -3
  const auto q = quantize(x, DType::kInt4, 1, 32);
  ASSERT_EQ(q.size(), 18u);
  std::uint16_t d;
  std::memcpy(&d, q.data(), 2);
  EXPECT_EQ(fp16_to_fp32(d), 1.0f);
  EXPECT_EQ(q[2], (7 + 8) | ((-7 + 8) << 4));
  EXPECT_EQ(q[3], (2 + 8) | ((-3 + 8) << 4));
  EXPECT_EQ(q[4], 8 | (8 << 4));  // zeros
  std::vector<float> back(32);
  dequantize_rows_reference(back.data(), q.data(), DType::kInt4, 1, 32);
  EXPECT_EQ(back[0], 7.0f);
  EXPECT_EQ(back[16], -7.0f);
  EXPECT_EQ(back[1], 2.0f);
  EXPECT_EQ(back[17], -3.0f);
}

TEST(Quant, ZeroBlockHasZeroScaleAndValues) {
  for (DType t : {DType::kInt8, DType::kInt4}) {
    const std::vector<float> x(64, 0.0f);
    const auto q = quantize(x, t, 1, 64);
    std::vector<float> back(64, 1.0f);
    dequantize_rows_reference(back.data(), q.data(), t, 1, 64);
    for (float v : back) EXPECT_EQ(v, 0.0f);
  }
}

class QuantDtypes : public ::testing::TestWithParam<DType> {};

TEST_P(QuantDtypes, RoundTripWithinHalfAStepPerBlock) {
  const DType t = GetParam();
  const int rows = 7, k = 96;
  const auto x = test::random_floats(std::size_t(rows) * k, 3, -2.0f, 2.0f);
  const auto q = quantize(x, t, rows, k);
  std::vector<float> back(x.size());
  dequantize_rows_reference(back.data(), q.data(), t, rows, k);
  const float qmax = t == DType::kInt8 ? 127.0f : 7.0f;
  for (int b = 0; b < rows * k / 32; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    // Half a quantisation step, plus the fp16 scale's relative rounding (2^-11) over the range.
    const float bound = 0.5f * amax / qmax + amax * 0x1p-11f * 1.01f;
    for (int j = 0; j < 32; ++j)
      EXPECT_LE(std::fabs(back[b * 32 + j] - x[b * 32 + j]), bound) << b << " " << j;
  }
}

TEST_P(QuantDtypes, FastQuantiseAndDequantiseMatchTheReferenceExactly) {
  const DType t = GetParam();
  const int rows = 19, k = 160;
  const auto x = test::random_floats(std::size_t(rows) * k, 5);
  const auto ref = quantize(x, t, rows, k);
  std::vector<std::uint8_t> got(ref.size());
  quantize_rows(got.data(), x.data(), t, rows, k);
  EXPECT_EQ(got, ref);
  std::vector<float> a(x.size()), b(x.size());
  dequantize_rows_reference(a.data(), ref.data(), t, rows, k);
  dequantize_rows(b.data(), ref.data(), t, rows, k);
  EXPECT_EQ(a, b);
}

TEST_P(QuantDtypes, DotReferenceIsTheDequantisedProduct) {
  const DType t = GetParam();
  const int k = 64;
  const auto w = test::random_floats(k, 7);
  const auto x = test::random_floats(k, 8);
  const auto q = quantize(w, t, 1, k);
  std::vector<float> deq(k);
  dequantize_rows_reference(deq.data(), q.data(), t, 1, k);
  double s = 0.0;
  for (int j = 0; j < k; ++j) s += double(x[j]) * double(deq[j]);
  EXPECT_EQ(quant_dot_reference(q.data(), x.data(), t, k), s);
}

TEST_P(QuantDtypes, MatmulMatchesReferenceOnOddShapes) {
  const DType t = GetParam();
  // Decode row counts (1..32, both sides of the 4-row chunk, odd block counts) and prefill ones (tiles of 256
  // weight rows with a partial last tile).
  struct Shape { int m, n, k; };
  for (const Shape s : {Shape{1, 1, 32}, Shape{1, 3, 64}, Shape{3, 7, 96}, Shape{7, 19, 160},
                        Shape{9, 33, 64}, Shape{32, 45, 128}, Shape{33, 19, 96},
                        Shape{64, 300, 64}, Shape{1, 733, 256}}) {
    const int lda = s.k + 5;
    const auto x = test::random_floats(std::size_t(s.m) * lda, 11 + s.m);
    const auto w = test::random_floats(std::size_t(s.n) * s.k, 13 + s.n);
    const auto q = quantize(w, t, s.n, s.k);
    std::vector<float> ref(std::size_t(s.m) * s.n), got(ref.size(), NAN);
    matmul_quant_reference(ref.data(), x.data(), q.data(), t, s.m, s.n, s.k, lda);
    matmul_quant(got.data(), x.data(), q.data(), t, s.m, s.n, s.k, lda);
    EXPECT_TRUE(test::all_close(got, ref, 1e-4 * std::sqrt(double(s.k)), 1e-4))
        << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST_P(QuantDtypes, DecodeRowsDoNotDependOnTheRowCount) {
  const DType t = GetParam();
  const int n = 37, k = 128;
  const auto x = test::random_floats(std::size_t(32) * k, 21);
  const auto q = quantize(test::random_floats(std::size_t(n) * k, 22), t, n, k);
  std::vector<float> all(std::size_t(32) * n), one(n);
  matmul_quant(all.data(), x.data(), q.data(), t, 32, n, k, k);
  for (int i : {0, 3, 4, 7, 8, 31}) {
    matmul_quant(one.data(), x.data() + std::size_t(i) * k, q.data(), t, 1, n, k, k);
    for (int j = 0; j < n; ++j) EXPECT_EQ(one[j], all[std::size_t(i) * n + j]) << i << " " << j;
  }
}

TEST_P(QuantDtypes, EmbeddingIsTheDequantisedRow) {
  const DType t = GetParam();
  const int vocab = 11, dim = 64;
  const auto q = quantize(test::random_floats(std::size_t(vocab) * dim, 31), t, vocab, dim);
  std::vector<float> table(std::size_t(vocab) * dim);
  dequantize_rows_reference(table.data(), q.data(), t, vocab, dim);
  const std::vector<std::int32_t> tokens = {3, 0, 10, 3};
  std::vector<float> out(tokens.size() * dim);
  embedding_quant(out.data(), pack(q, t, vocab, dim).data(), t, tokens.data(),
                  int(tokens.size()), vocab, dim);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    for (int j = 0; j < dim; ++j)
      EXPECT_EQ(out[i * dim + j], table[std::size_t(tokens[i]) * dim + j]);
}

// The packed layout (quant.h) at hand-picked bytes: n 17 is one group of 16 columns and a last
// group of 1, k 64 two blocks.
TEST_P(QuantDtypes, PackedLayoutAtHandPickedBytes) {
  const DType t = GetParam();
  const int n = 17, k = 64;
  const std::int64_t bb = dtype_bytes_x32(t), rb = quant_row_bytes(t, k);
  const auto q = quantize(test::random_floats(std::size_t(n) * k, 33), t, n, k);
  const auto p = pack(q, t, n, k);
  ASSERT_EQ(p.size(), q.size());  // no padding
  // Group 0, block 1 (chunk at 16 * bb): column 3's scale, then its value j = 5 (int8: k4 step
  // 1, 4-byte slot of column 3, byte 1) or its byte 5 (int4: step 1 too).
  const std::uint8_t* chunk = p.data() + 16 * bb;
  const std::uint8_t* blk = q.data() + 3 * rb + bb;  // row 3, block 1
  EXPECT_EQ(chunk[6], blk[0]);
  EXPECT_EQ(chunk[7], blk[1]);
  const std::uint8_t v = chunk[32 + 1 * 64 + 3 * 4 + 1];
  if (t == DType::kInt8) {
    EXPECT_EQ(int(v) - 128, int(std::int8_t(blk[2 + 5])));
    EXPECT_EQ(int(chunk[32 + 7 * 64 + 15 * 4 + 3]) - 128,  // j 31 of column 15
              int(std::int8_t(q[std::size_t(15 * rb + bb + 2 + 31)])));
  } else {
    EXPECT_EQ(v, blk[2 + 5]);  // q[5] + 8 low, q[21] + 8 high
    EXPECT_EQ(chunk[32 + 3 * 64 + 15 * 4 + 3], q[std::size_t(15 * rb + bb + 2 + 15)]);
  }
  // A group of one column is its row's blocks, int8 values made unsigned.
  for (std::int64_t i = 0; i < rb; ++i) {
    const std::uint8_t want = q[std::size_t(16 * rb + i)];
    const bool value = i % bb >= 2;
    EXPECT_EQ(p[std::size_t(16 * rb + i)], t == DType::kInt8 && value ? want ^ 0x80 : want) << i;
  }
}

TEST_P(QuantDtypes, QuantizePackedAndRowReadsMatchTheReferences) {
  const DType t = GetParam();
  for (const int n : {1, 16, 19, 45}) {
    const int k = 160;
    const auto x = test::random_floats(std::size_t(n) * k, 35 + n);
    const auto q = quantize(x, t, n, k);
    std::vector<std::uint8_t> got(q.size());
    quantize_packed(got.data(), x.data(), t, n, k);
    EXPECT_EQ(got, pack(q, t, n, k)) << n;
    std::vector<float> want(std::size_t(n) * k), row(k);
    dequantize_rows_reference(want.data(), q.data(), t, n, k);
    for (int j = 0; j < n; ++j) {
      dequantize_packed_row(row.data(), got.data(), t, n, k, j);
      for (int e = 0; e < k; ++e) ASSERT_EQ(row[e], want[std::size_t(j) * k + e]) << n << " " << j;
    }
  }
}

TEST(QuantVnni, ActivationBlocksHandComputed) {
  // Row 0: block 0 has max |x| 2.54 (dx = 0.02); block 1 is zero. Row 1 (lda apart): 1.27.
  const int k = 64, lda = 70;
  std::vector<float> x(std::size_t(2) * lda, 0.0f);
  x[0] = 2.54f;
  x[1] = -1.0f;   // -1 / 0.02 = -50
  x[2] = 0.03f;   // 1.5: to even, 2
  x[3] = 0.01f;   // 0.5: to even, 0
  x[lda + 40] = -1.27f;
  std::vector<std::int8_t> q(std::size_t(2) * k, 99);
  std::vector<float> d(4, -1.0f);
  quantize_activations(q.data(), d.data(), x.data(), 2, k, lda);
  EXPECT_EQ(d[0], 2.54f / 127.0f);
  EXPECT_EQ(d[1], 0.0f);
  EXPECT_EQ(d[2], 0.0f);
  EXPECT_EQ(d[3], 1.27f / 127.0f);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], std::int8_t(std::nearbyint(-1.0f / d[0])));
  EXPECT_EQ(q[1], -50);
  EXPECT_EQ(q[2], std::int8_t(std::nearbyint(0.03f / d[0])));
  for (int j = 32; j < 64; ++j) EXPECT_EQ(q[j], 0) << j;
  EXPECT_EQ(q[k + 40], -127);
  for (int j = 0; j < k; ++j) {
    if (j != 40) {
      EXPECT_EQ(q[k + j], 0) << j;
    }
  }
}

class QuantVnniDtypes : public ::testing::TestWithParam<DType> {};

// The reference differs from the weight-only product only by x's rounding, by at most
// sum_b dx_b / 2 * sum_j |w_b[j]| (plus fp32 output rounding), and not by zero.
TEST_P(QuantVnniDtypes, ReferenceIsTheWeightOnlyProductWithinXRounding) {
  const DType t = GetParam();
  const int m = 3, n = 5, k = 256, lda = k + 3;
  const auto x = test::random_floats(std::size_t(m) * lda, 41);
  const auto q = quantize(test::random_floats(std::size_t(n) * k, 42), t, n, k);
  std::vector<float> wf(std::size_t(n) * k);
  dequantize_rows_reference(wf.data(), q.data(), t, n, k);
  std::vector<float> vnni(std::size_t(m) * n), ref(vnni.size());
  matmul_quant_vnni_reference(vnni.data(), x.data(), q.data(), t, m, n, k, lda);
  matmul_quant_reference(ref.data(), x.data(), q.data(), t, m, n, k, lda);
  std::vector<std::int8_t> qx(std::size_t(m) * k);
  std::vector<float> dx(std::size_t(m) * k / 32);
  quantize_activations(qx.data(), dx.data(), x.data(), m, k, lda);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double bound = 0.0;
      for (int b = 0; b < k / 32; ++b) {
        double wsum = 0.0;
        for (int t2 = 0; t2 < 32; ++t2) wsum += std::fabs(wf[std::size_t(j) * k + b * 32 + t2]);
        bound += 0.5 * dx[std::size_t(i) * (k / 32) + b] * wsum;
      }
      const float got = vnni[std::size_t(i) * n + j], want = ref[std::size_t(i) * n + j];
      EXPECT_LE(std::fabs(double(got) - want), bound + 1e-6 * std::fabs(want)) << i << " " << j;
      EXPECT_NE(got, want) << i << " " << j;
    }
}

TEST_P(QuantVnniDtypes, KernelMatchesItsReferenceOnOddShapes) {
  const DType t = GetParam();
  struct Shape { int n, k; };
  // Every row count 1..32 (tiles of 4 and their remainders); odd and even block counts (the
  // kernel takes blocks in pairs), a single block, n not a multiple of the thread count.
  for (const Shape s : {Shape{1, 32}, Shape{7, 96}, Shape{19, 160}, Shape{33, 64}, Shape{45, 352}})
    for (int m = 1; m <= 32; ++m) {
      const int lda = s.k + 5;
      const auto x = test::random_floats(std::size_t(m) * lda, 51 + m, -3.0f, 3.0f);
      const auto q = quantize(test::random_floats(std::size_t(s.n) * s.k, 53 + s.n), t, s.n, s.k);
      std::vector<float> ref(std::size_t(m) * s.n), got(ref.size(), NAN);
      matmul_quant_vnni_reference(ref.data(), x.data(), q.data(), t, m, s.n, s.k, lda);
      matmul_quant_vnni(got.data(), x.data(), pack(q, t, s.n, s.k).data(), t, m, s.n, s.k, lda);
      ASSERT_TRUE(test::all_close(got, ref, 1e-5 * std::sqrt(double(s.k)), 1e-5))
          << m << "x" << s.n << "x" << s.k;
    }
  // Prefill row counts: the kernel takes x in blocks of 64 rows.
  for (const int m : {33, 64, 65, 130}) {
    const int n = 21, k = 544, lda = k + 1;
    const auto x = test::random_floats(std::size_t(m) * lda, 57 + m);
    const auto q = quantize(test::random_floats(std::size_t(n) * k, 58), t, n, k);
    std::vector<float> ref(std::size_t(m) * n), got(ref.size(), NAN);
    matmul_quant_vnni_reference(ref.data(), x.data(), q.data(), t, m, n, k, lda);
    matmul_quant_vnni(got.data(), x.data(), pack(q, t, n, k).data(), t, m, n, k, lda);
    ASSERT_TRUE(test::all_close(got, ref, 1e-5 * std::sqrt(double(k)), 1e-5)) << m;
  }
}

TEST_P(QuantVnniDtypes, ZeroRowsGiveZero) {
  const DType t = GetParam();
  const int m = 2, n = 3, k = 96;
  const std::vector<float> x(std::size_t(m) * k, 0.0f);
  const auto q = pack(quantize(test::random_floats(std::size_t(n) * k, 61), t, n, k), t, n, k);
  std::vector<float> got(std::size_t(m) * n, NAN);
  matmul_quant_vnni(got.data(), x.data(), q.data(), t, m, n, k, k);
  for (float v : got) EXPECT_EQ(v, 0.0f);
}

TEST_P(QuantVnniDtypes, RowsDoNotDependOnTheRowCount) {
  const DType t = GetParam();
  // n 37: a tile of two column groups and a partial group of 5; 53: two, one, and 5. k 1088:
  // 34 blocks, more than one pass over k (the kernel's chunks of 16 blocks, a partial last).
  const int k = 1088;
  for (const int n : {37, 53}) {
    const auto x = test::random_floats(std::size_t(130) * k, 71);
    const auto q = pack(quantize(test::random_floats(std::size_t(n) * k, 72), t, n, k), t, n, k);
    std::vector<float> all(std::size_t(130) * n), one(n);
    matmul_quant_vnni(all.data(), x.data(), q.data(), t, 130, n, k, k);
    for (int i : {0, 3, 4, 7, 8, 31, 64, 129}) {
      matmul_quant_vnni(one.data(), x.data() + std::size_t(i) * k, q.data(), t, 1, n, k, k);
      for (int j = 0; j < n; ++j)
        EXPECT_EQ(one[j], all[std::size_t(i) * n + j]) << n << ": " << i << " " << j;
    }
  }
}

TEST_P(QuantVnniDtypes, SameBitsOnAnyTeam) {
  // Column groups are shared out over the threads and taken from one another at run time
  // (panel_schedule.h): one, two and three threads give the same bits, decode and prefill rows.
  const DType t = GetParam();
  const int n = 800, k = 2048;
  const auto q = pack(quantize(test::random_floats(std::size_t(n) * k, 81), t, n, k), t, n, k);
  for (const int m : {1, 5}) {
    const auto x = test::random_floats(std::size_t(m) * k, 82 + m);
    std::vector<std::vector<float>> outs;
    const int before = omp_get_max_threads();
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      outs.emplace_back(std::size_t(m) * n, NAN);
      matmul_quant_vnni(outs.back().data(), x.data(), q.data(), t, m, n, k, k);
    }
    omp_set_num_threads(before);
    EXPECT_EQ(outs[1], outs[0]) << m;
    EXPECT_EQ(outs[2], outs[0]) << m;
  }
}

// The fp32 sum quant.h specifies, written out here: per output, over blocks in order from 0,
// acc = fma(float(I_b) * dx_b, dw_b, acc). The kernel must give it bit for bit; this test also
// runs as portable.QuantVnniDtypes (LLMBENCH_CPU_ISA=portable, tests/CMakeLists.txt), so the
// AVX-512 kernel and the plain loops give identical results.
TEST_P(QuantVnniDtypes, KernelIsTheSpecifiedFp32SumExactly) {
  const DType t = GetParam();
  const int k = 1088;
  for (const int n : {5, 37, 53})
    for (const int m : {1, 6, 70}) {
      const int lda = k + 3;
      const auto x = test::random_floats(std::size_t(m) * lda, 91 + m, -4.0f, 4.0f);
      const auto w = pack(quantize(test::random_floats(std::size_t(n) * k, 92 + n), t, n, k), t,
                          n, k);
      std::vector<float> got(std::size_t(m) * n, NAN);
      matmul_quant_vnni(got.data(), x.data(), w.data(), t, m, n, k, lda);
      test::expect_specified_vnni_sums(got, x.data(), lda, w.data(), t, m, n, k);
    }
}

// Both quantised products against the fp32 product of the unquantised weights at a TinyLlama
// projection's k (2048), with a few 8x outliers in x (as a normed hidden state has). Prints the
// relative RMS errors (docs/metrics.md quotes them). With w independent of x, the errors of x
// and w add in quadrature: the relative RMS error of the int8-x product is expected at
// sqrt(e_w^2 + e_x^2), e_w the weight-only product's and e_x = |x - dequantised x| / |x|;
// the test holds that within 15%. Not a bound on the model: tests/engine/test_model_quant.cpp.
TEST_P(QuantVnniDtypes, ErrorAgainstTheFp32Product) {
  const DType t = GetParam();
  const int m = 4, n = 512, k = 2048;
  auto x = test::random_floats(std::size_t(m) * k, 81);
  for (std::size_t i = 0; i < x.size(); i += 97) x[i] *= 8.0f;
  const auto wf = test::random_floats(std::size_t(n) * k, 82, -0.05f, 0.05f);
  const auto q = quantize(wf, t, n, k);
  std::vector<float> exact(std::size_t(m) * n), widen(exact.size()), vnni(exact.size());
  matmul_reference(exact.data(), x.data(), wf.data(), m, n, k, k);
  matmul_quant(widen.data(), x.data(), q.data(), t, m, n, k, k);
  matmul_quant_vnni(vnni.data(), x.data(), pack(q, t, n, k).data(), t, m, n, k, k);
  auto rel_rms = [](const std::vector<float>& got, const std::vector<float>& want) {
    double e = 0.0, r = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      e += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      r += double(want[i]) * want[i];
    }
    return std::sqrt(e / r);
  };
  std::vector<std::int8_t> qx(x.size());
  std::vector<float> dx(x.size() / 32), xq(x.size());
  quantize_activations(qx.data(), dx.data(), x.data(), m, k, k);
  for (std::size_t i = 0; i < x.size(); ++i) xq[i] = float(qx[i]) * dx[i / 32];
  const double e_w = rel_rms(widen, exact), e_x = rel_rms(xq, x), e_vnni = rel_rms(vnni, exact);
  const double predicted = std::sqrt(e_w * e_w + e_x * e_x);
  std::printf("[ measured ] %s k %d: relative RMS error vs fp32: weight-only %.3g, int8 x %.3g "
              "(x alone %.3g, predicted %.3g)\n",
              std::string(dtype_name(t)).c_str(), k, e_w, e_vnni, e_x, predicted);
  EXPECT_GT(e_vnni, 0.85 * predicted);
  EXPECT_LT(e_vnni, 1.15 * predicted);
}

INSTANTIATE_TEST_SUITE_P(Quant, QuantVnniDtypes, ::testing::Values(DType::kInt8, DType::kInt4),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

INSTANTIATE_TEST_SUITE_P(Quant, QuantDtypes, ::testing::Values(DType::kInt8, DType::kInt4),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace llmbench::cpu
