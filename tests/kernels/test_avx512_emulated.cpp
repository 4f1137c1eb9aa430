// The AVX-512 matmul kernels (matmul_avx512.cpp: fp32, bf16 with vdpbf16ps, fp16; the int8/int4
// kernels of quant_vnni_avx512.cpp and quant_avx512.cpp) on any CPU: their SIMDe copy
// (kernels/cpu/avx512_intrinsics.h, namespace avx512_emulated) against the plain references with
// the shapes, row counts and bit-for-bit rules of test_matmul.cpp, test_matmul_half.cpp and
// test_quant.cpp, which reach the real kernels through the public ops only on an AVX-512 CPU.
// Each kernel is called as its op calls it (x converted the same way first). Then what SIMDe's
// vdpbf16ps, vscalefps and vfnmadd*ps do differently from the instructions, on hand-picked
// lanes: vdpbf16ps's differences are kept (the bf16 tests allow for them), the other two's
// results are replaced by the instructions' (kernels/cpu/avx512_simde_gaps.h).
// The argmax, SwiGLU and decode-attention kernels run under emulation through their own test
// files (test_argmax.cpp, test_swiglu.cpp, test_attention_decode.cpp, compiled into this binary
// too). Nothing here says anything about speed.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/avx512_intrinsics.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_avx512.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_avx512.h"
#include "kernels/cpu/quant_vnni_avx512.h"
#include "tests/kernels/check.h"
#include "tests/kernels/quant_check.h"

namespace llmbench::cpu {
namespace {

namespace emu = avx512_emulated;

// ---- fp32, bf16, fp16 weights -------------------------------------------------------------

struct Weights {
  DType t;
  std::vector<float> f32;          // kFp32
  std::vector<std::uint16_t> bits;  // kBf16, kFp16
};

Weights make_weights(DType t, int n, int k, unsigned seed) {
  Weights w{t, test::random_floats(std::size_t(n) * k, seed), {}};
  if (t != DType::kFp32) {
    w.bits.resize(w.f32.size());
    narrow_to_half(w.bits.data(), w.f32.data(), std::int64_t(w.f32.size()), t);
  }
  return w;
}

// The emulated kernel as matmul() / matmul_half() call the real one on an AVX-512 CPU.
void emulated(float* out, const float* x, int lda, const Weights& w, int m, int n, int k) {
  if (w.t == DType::kFp32) {
    emu::matmul_f32(out, x, lda, w.f32.data(), m, n, k);
  } else if (w.t == DType::kBf16) {
    const int ld = (k + 31) / 32 * 32;
    std::vector<std::uint16_t> xb(std::size_t(m) * ld);
    emu::to_bf16_padded(xb.data(), ld, x, lda, m, k);
    emu::matmul_bf16(out, xb.data(), ld, w.bits.data(), m, n, k);
  } else {
    std::vector<float> xr(std::size_t(m) * k);
    emu::round_to_fp16_rows(xr.data(), x, lda, m, k);
    emu::matmul_fp16(out, xr.data(), k, w.bits.data(), m, n, k);
  }
}

void reference(float* out, const float* x, int lda, const Weights& w, int m, int n, int k) {
  if (w.t == DType::kFp32)
    matmul_reference(out, x, w.f32.data(), m, n, k, lda);
  else
    matmul_half_reference(out, x, w.bits.data(), w.t, m, n, k, lda);
}

class Avx512Emulated : public ::testing::TestWithParam<DType> {};

TEST_P(Avx512Emulated, MatchesTheReferenceOnOddShapes) {
  // As test_matmul / test_matmul_half's odd shapes: decode rows (1-8), prefill rows, one weight
  // row to several panels, k below, at and across a vector, padded x rows (NaN past k).
  const DType t = GetParam();
  for (int m : {1, 2, 3, 7, 8, 9, 33})
    for (int n : {1, 3, 7, 19, 300})
      for (int k : {1, 7, 19, 733}) {
        const int lda = k + 3;
        const auto x = test::padded_rows(m, k, lda, 1000u + m + n + k);
        const Weights w = make_weights(t, n, k, 77u + n * k);
        std::vector<float> out(std::size_t(m) * n, NAN), ref(out.size());
        emulated(out.data(), x.data(), lda, w, m, n, k);
        reference(ref.data(), x.data(), lda, w, m, n, k);
        ASSERT_TRUE(test::all_close(out, ref, 1e-4, 1e-4))
            << "m=" << m << " n=" << n << " k=" << k;
      }
}

TEST_P(Avx512Emulated, MatchesTheReferenceOverSeveralChunksOfK) {
  // k = 2100: several 2 KB chunks of weights and a tail (test_matmul_half).
  const DType t = GetParam();
  const int n = 23, k = 2100, lda = 2105;
  const Weights w = make_weights(t, n, k, 21);
  for (int m : {1, 2, 3, 4, 5, 8, 16, 17, 33, 129}) {
    const auto x = test::random_floats(std::size_t(m) * lda, 300u + m);
    std::vector<float> out(std::size_t(m) * n, NAN), ref(out.size());
    emulated(out.data(), x.data(), lda, w, m, n, k);
    reference(ref.data(), x.data(), lda, w, m, n, k);
    ASSERT_TRUE(test::all_close(out, ref, 2e-4, 1e-4)) << "m=" << m;
  }
}

TEST_P(Avx512Emulated, EachRowIsIndependentOfTheRowCount) {
  // Row i of a 1-128-row product is bit for bit that row computed in any other row count
  // (matmul's MatmulStreaming and matmul_half's AvxRows tests): decode's rows take the same
  // sums as prefill's, so a sequence's logits do not depend on its batch neighbours.
  const DType t = GetParam();
  const int n = 29, k = 1500, rows = 128;
  const auto x = test::random_floats(std::size_t(rows) * k, 31);
  const Weights w = make_weights(t, n, k, 32);
  std::vector<float> all(std::size_t(rows) * n);
  emulated(all.data(), x.data(), k, w, rows, n, k);
  for (int i = 0; i < rows; i += 3) {
    const int m = std::min(rows - i, 1 + i % 9);
    std::vector<float> part(std::size_t(m) * n);
    emulated(part.data(), x.data() + std::size_t(i) * k, k, w, m, n, k);
    for (std::size_t e = 0; e < part.size(); ++e)
      ASSERT_EQ(part[e], all[std::size_t(i) * n + e]) << "row " << i << " m " << m;
  }
}

TEST_P(Avx512Emulated, SameBitsOnAnyTeam) {
  // Panels are shared out over the threads at run time (panel_schedule.h): one, two and three
  // threads give the same bits, at decode's row counts and past them.
  const DType t = GetParam();
  const int n = 301, k = 1100;
  const Weights w = make_weights(t, n, k, 41);
  for (int m : {1, 4, 8, 13}) {
    const auto x = test::random_floats(std::size_t(m) * k, 42u + m);
    std::vector<std::vector<float>> outs;
    const int before = omp_get_max_threads();
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      outs.emplace_back(std::size_t(m) * n, NAN);
      emulated(outs.back().data(), x.data(), k, w, m, n, k);
    }
    omp_set_num_threads(before);
    EXPECT_EQ(outs[1], outs[0]) << m;
    EXPECT_EQ(outs[2], outs[0]) << m;
  }
}

INSTANTIATE_TEST_SUITE_P(Matmul, Avx512Emulated,
                         ::testing::Values(DType::kFp32, DType::kBf16, DType::kFp16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// ---- int8 / int4 weights --------------------------------------------------------------------

using test::pack;
using test::quantize;

// As matmul_quant_vnni calls the real kernel: x quantised once, then vpdpbusd.
void vnni(float* out, const float* x, int lda, const std::vector<std::uint8_t>& packed, DType t,
          int m, int n, int k) {
  std::vector<std::int8_t> qx(std::size_t(m) * k);
  std::vector<float> dx(std::size_t(m) * (k / 32));
  quantize_activations(qx.data(), dx.data(), x, m, k, lda);
  emu::matmul_quant_vnni(out, qx.data(), dx.data(), packed.data(), t == DType::kInt4, m, n, k);
}

class Avx512EmulatedQuant : public ::testing::TestWithParam<DType> {};

TEST_P(Avx512EmulatedQuant, VnniIsTheSpecifiedFp32SumExactly) {
  // quant.h's sum, written out (test_quant's KernelIsTheSpecifiedFp32SumExactly): per output,
  // over blocks in order from 0, acc = fma(float(I_b) * dx_b, dw_b, acc). vpdpbusd's integer
  // sums are exact in SIMDe as in the instruction, so the kernel must give it bit for bit.
  const DType t = GetParam();
  const int k = 1088;
  for (const int n : {5, 37, 53})
    for (const int m : {1, 2, 3, 6, 8, 70}) {
      const int lda = k + 3;
      const auto x = test::random_floats(std::size_t(m) * lda, 91 + m, -4.0f, 4.0f);
      const auto w = pack(quantize(test::random_floats(std::size_t(n) * k, 92 + n), t, n, k), t,
                          n, k);
      std::vector<float> got(std::size_t(m) * n, NAN);
      vnni(got.data(), x.data(), lda, w, t, m, n, k);
      test::expect_specified_vnni_sums(got, x.data(), lda, w.data(), t, m, n, k);
    }
}

TEST_P(Avx512EmulatedQuant, VnniMatchesItsReferenceOnOddShapes) {
  const DType t = GetParam();
  struct Shape { int n, k; };
  for (const Shape s : {Shape{1, 32}, Shape{7, 96}, Shape{19, 160}, Shape{33, 64}, Shape{45, 352}})
    for (int m : {1, 2, 3, 4, 5, 7, 8, 9, 17, 32, 65}) {
      const int lda = s.k + 5;
      const auto x = test::random_floats(std::size_t(m) * lda, 51 + m, -3.0f, 3.0f);
      const auto q = quantize(test::random_floats(std::size_t(s.n) * s.k, 53 + s.n), t, s.n, s.k);
      std::vector<float> ref(std::size_t(m) * s.n), got(ref.size(), NAN);
      matmul_quant_vnni_reference(ref.data(), x.data(), q.data(), t, m, s.n, s.k, lda);
      vnni(got.data(), x.data(), lda, pack(q, t, s.n, s.k), t, m, s.n, s.k);
      ASSERT_TRUE(test::all_close(got, ref, 1e-5 * std::sqrt(double(s.k)), 1e-5))
          << m << "x" << s.n << "x" << s.k;
    }
}

TEST_P(Avx512EmulatedQuant, VnniRowsDoNotDependOnTheRowCountOrTheTeam) {
  // n 37 and 53: pairs of column groups, a single one and a partial group of 5; k 1088: 34
  // blocks, more than one chunk of 16. Row i alone, in 130 rows and on 1-3 threads: same bits.
  const DType t = GetParam();
  const int k = 1088;
  for (const int n : {37, 53}) {
    const auto x = test::random_floats(std::size_t(130) * k, 71);
    const auto q = pack(quantize(test::random_floats(std::size_t(n) * k, 72), t, n, k), t, n, k);
    std::vector<float> all(std::size_t(130) * n), one(n);
    vnni(all.data(), x.data(), k, q, t, 130, n, k);
    for (int i : {0, 3, 4, 7, 8, 31, 64, 129}) {
      vnni(one.data(), x.data() + std::size_t(i) * k, k, q, t, 1, n, k);
      for (int j = 0; j < n; ++j)
        ASSERT_EQ(one[j], all[std::size_t(i) * n + j]) << n << ": " << i << " " << j;
    }
    const int before = omp_get_max_threads();
    for (int m : {1, 5})
      for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        std::vector<float> part(std::size_t(m) * n);
        vnni(part.data(), x.data(), k, q, t, m, n, k);
        for (std::size_t e = 0; e < part.size(); ++e)
          ASSERT_EQ(part[e], all[e]) << m << " rows, " << threads << " threads";
      }
    omp_set_num_threads(before);
  }
}

TEST_P(Avx512EmulatedQuant, WeightOnlyDecodeMatchesTheReference) {
  // quant_avx512.cpp (fp32 x times row-major blocks, matmul_quant's decode kernel): test_quant's
  // odd shapes up to its decode limit, then row i alone against 32 rows, bit for bit.
  const DType t = GetParam();
  struct Shape { int m, n, k; };
  for (const Shape s : {Shape{1, 1, 32}, Shape{1, 3, 64}, Shape{3, 7, 96}, Shape{7, 19, 160},
                        Shape{9, 33, 64}, Shape{32, 45, 128}, Shape{1, 733, 256}}) {
    const int lda = s.k + 5;
    const auto x = test::random_floats(std::size_t(s.m) * lda, 11 + s.m);
    const auto q = quantize(test::random_floats(std::size_t(s.n) * s.k, 13 + s.n), t, s.n, s.k);
    std::vector<float> ref(std::size_t(s.m) * s.n), got(ref.size(), NAN);
    matmul_quant_reference(ref.data(), x.data(), q.data(), t, s.m, s.n, s.k, lda);
    emu::matmul_quant_decode(got.data(), x.data(), lda, q.data(), t == DType::kInt4, s.m, s.n,
                             s.k);
    ASSERT_TRUE(test::all_close(got, ref, 1e-4 * std::sqrt(double(s.k)), 1e-4))
        << s.m << "x" << s.n << "x" << s.k;
  }
  const int n = 37, k = 128;
  const auto x = test::random_floats(std::size_t(32) * k, 21);
  const auto q = quantize(test::random_floats(std::size_t(n) * k, 22), t, n, k);
  std::vector<float> all(std::size_t(32) * n), one(n);
  emu::matmul_quant_decode(all.data(), x.data(), k, q.data(), t == DType::kInt4, 32, n, k);
  for (int i : {0, 3, 4, 7, 8, 31}) {
    emu::matmul_quant_decode(one.data(), x.data() + std::size_t(i) * k, k, q.data(),
                             t == DType::kInt4, 1, n, k);
    for (int j = 0; j < n; ++j) ASSERT_EQ(one[j], all[std::size_t(i) * n + j]) << i << " " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Quant, Avx512EmulatedQuant, ::testing::Values(DType::kInt8, DType::kInt4),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// ---- vdpbf16ps: SIMDe against the instruction ---------------------------------------------

// One fp32 lane of vdpbf16ps as the Intel SDM defines it: the odd (upper) pair's product is
// added first, then the even one's, each step rounded to nearest even, with bf16 inputs that
// are denormal read as zero (DAZ) and denormal results flushed to zero (FTZ); MXCSR is not
// consulted. (Not checked on a Zen 4 here; this is the documented behaviour.)
float daz(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }
float sdm_dpbf16_lane(float acc, std::uint16_t a_even, std::uint16_t a_odd,
                      std::uint16_t b_even, std::uint16_t b_odd) {
  acc = daz(std::fma(daz(bf16_to_fp32(a_odd)), daz(bf16_to_fp32(b_odd)), daz(acc)));
  return daz(std::fma(daz(bf16_to_fp32(a_even)), daz(bf16_to_fp32(b_even)), acc));
}

// Lane 0 of SIMDe's _mm512_dpbf16_ps (what the emulated bf16 kernel runs) for one pair.
float simde_dpbf16_lane(float acc, std::uint16_t a_even, std::uint16_t a_odd,
                        std::uint16_t b_even, std::uint16_t b_odd) {
  std::uint16_t a[32] = {a_even, a_odd}, b[32] = {b_even, b_odd};
  float src[16] = {acc};
  simde__m512bh va, vb;
  simde__m512 vs;
  std::memcpy(&va, a, sizeof a);
  std::memcpy(&vb, b, sizeof b);
  std::memcpy(&vs, src, sizeof src);
  const simde__m512 r = simde_mm512_dpbf16_ps(vs, va, vb);
  float out[16];
  std::memcpy(out, &r, sizeof out);
  return out[0];
}

std::uint16_t bf(float v) { return fp32_to_bf16(v); }

TEST(Avx512EmulatedDpbf16, DiffersFromTheInstructionOnlyInOrderAndDenormals) {
  // Where every partial sum is exact (the kernels' usual case is not, see below), both agree.
  EXPECT_EQ(simde_dpbf16_lane(1.5f, bf(3.0f), bf(-0.25f), bf(2.0f), bf(8.0f)), 5.5f);
  EXPECT_EQ(sdm_dpbf16_lane(1.5f, bf(3.0f), bf(-0.25f), bf(2.0f), bf(8.0f)), 5.5f);
  // Order: SIMDe adds the even pair first, the instruction the odd one. acc 1, even product
  // 2^-30, odd product -1: (1 + 2^-30) - 1 = 0 in SIMDe, (1 - 1) + 2^-30 = 2^-30 in hardware.
  const std::uint16_t tiny = bf(0x1p-15f);
  EXPECT_EQ(simde_dpbf16_lane(1.0f, tiny, bf(-1.0f), tiny, bf(1.0f)), 0.0f);
  EXPECT_EQ(sdm_dpbf16_lane(1.0f, tiny, bf(-1.0f), tiny, bf(1.0f)), 0x1p-30f);
  // DAZ: a denormal bf16 input (2^-130) times 2^100 is 2^-30 in SIMDe, 0 in hardware.
  EXPECT_EQ(simde_dpbf16_lane(0.0f, bf(0x1p-130f), 0, bf(0x1p100f), 0), 0x1p-30f);
  EXPECT_EQ(sdm_dpbf16_lane(0.0f, bf(0x1p-130f), 0, bf(0x1p100f), 0), 0.0f);
  // FTZ: a denormal result (2^-70 * 2^-70 = 2^-140) stays in SIMDe, is flushed in hardware.
  EXPECT_EQ(simde_dpbf16_lane(0.0f, bf(0x1p-70f), 0, bf(0x1p-70f), 0), 0x1p-140f);
  EXPECT_EQ(sdm_dpbf16_lane(0.0f, bf(0x1p-70f), 0, bf(0x1p-70f), 0), 0.0f);
  // So the emulated bf16 kernel's sums can differ from the hardware's in the last bits (every
  // product of two bf16 values is exact, but the two additions round in the other order): its
  // tests above hold it to the reference within a tolerance and to itself bit for bit (row
  // counts, teams), never to the hardware's bits, which only an AVX-512 CPU can give
  // (test_kernels' MatmulHalfDtypes there).
}

// ---- vscalefps and vfnmadd*ps: SIMDe against the instructions ------------------------------

TEST(Avx512EmulatedScalef, SimdeOverflowsWhereTheInstructionDoesNotSoItIsReplaced) {
  // a * 2^floor(b) with a < 1 and b = 128: finite (0.75 * 2^128 < FLT_MAX), as vscalefps gives
  // it; SIMDe 0.7.4's 2^128 is inf first. The kernels' copy uses avx512_simde_gaps.h's
  // replacement, which gives the instruction's value (what SwiGLU and attention's exp need).
  simde__m512 a, b;
  const float av[16] = {0.75f, 1.5f, 0x1p-140f, -3.0f}, bv[16] = {128.0f, -150.0f, 10.0f, 2.7f};
  std::memcpy(&a, av, sizeof av);
  std::memcpy(&b, bv, sizeof bv);
  float simde[16], ours[16];
  const simde__m512 s = simde_mm512_scalef_ps(a, b), o = _mm512_scalef_ps(a, b);
  std::memcpy(simde, &s, sizeof simde);
  std::memcpy(ours, &o, sizeof ours);
  EXPECT_TRUE(std::isinf(simde[0]));
  EXPECT_EQ(ours[0], 0x1.8p127f);
  EXPECT_EQ(simde[1], 0.0f);       // 2^-150 underflows before the product
  EXPECT_EQ(ours[1], 0x1p-149f);   // 0.75 * 2^-149, rounded once
  EXPECT_EQ(simde[2], 0.0f);       // a denormal a is flushed
  EXPECT_EQ(ours[2], 0x1p-130f);
  EXPECT_EQ(simde[3], -12.0f);     // where neither over- nor underflows, both agree
  EXPECT_EQ(ours[3], -12.0f);
}

TEST(Avx512EmulatedFnmadd, SimdeRoundsTwiceSoItIsReplaced) {
  // -(a * b) + c with a = b = 1 + 2^-12, c = 1 + 2^-11: exactly -2^-24, as vfnmadd231ps gives
  // it; SIMDe 0.7.4 first rounds a * b to 1 + 2^-11 (a tie, to even) and returns 0.
  simde__m512 a, c;
  float av[16], cv[16];
  for (int i = 0; i < 16; ++i) av[i] = 1.0f + 0x1p-12f, cv[i] = 1.0f + 0x1p-11f;
  std::memcpy(&a, av, sizeof av);
  std::memcpy(&c, cv, sizeof cv);
  float simde[16], ours[16];
  const simde__m512 s = simde_mm512_fnmadd_ps(a, a, c), o = _mm512_fnmadd_ps(a, a, c);
  std::memcpy(simde, &s, sizeof simde);
  std::memcpy(ours, &o, sizeof ours);
  EXPECT_EQ(simde[0], 0.0f);
  EXPECT_EQ(ours[0], -0x1p-24f);
}

}  // namespace
}  // namespace llmbench::cpu
