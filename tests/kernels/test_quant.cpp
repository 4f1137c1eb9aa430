// The int8/int4 block formats (kernels/cpu/quant.h): the reference quantiser against
// hand-computed blocks (layout, scale rounding, clamping, the zero block), the round-trip error
// bound, then the engine's versions (quantize_rows, dequantize_rows, matmul_quant's decode and
// prefill paths, embedding_quant) against the references on odd shapes with padded x rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/quant.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

std::vector<std::uint8_t> quantize(const std::vector<float>& v, DType t, int rows, int k) {
  std::vector<std::uint8_t> q(std::size_t(rows * quant_row_bytes(t, k)));
  quantize_rows_reference(q.data(), v.data(), t, rows, k);
  return q;
}

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
  for (int j = 4; j < 32; ++j)
    if (j != 5) EXPECT_EQ(q[2 + j], 0) << j;
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
  embedding_quant(out.data(), q.data(), t, tokens.data(), int(tokens.size()), dim);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    for (int j = 0; j < dim; ++j)
      EXPECT_EQ(out[i * dim + j], table[std::size_t(tokens[i]) * dim + j]);
}

INSTANTIATE_TEST_SUITE_P(Quant, QuantDtypes, ::testing::Values(DType::kInt8, DType::kInt4),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace llmbench::cpu
