// The AVX-512 intrinsics the kernels use that SIMDe 0.7.4 (Debian 12's libsimde-dev) does not
// have: masked loads and stores, the 512-bit fp16 conversions, 8-bit widening, the horizontal
// reductions and two compares; and two it has whose results are not the instructions'
// (vscalefps and vfnmadd*ps, replaced: see scalef_ps_512 and fnmadd_ps_512). Included only by avx512_intrinsics.h in the tests' emulated copy;
// built on SIMDe's own types and narrower operations, lane by lane, after the instructions'
// definitions (Intel SDM) and, for the reductions, GCC 12's <avx512fintrin.h> order of
// additions (the order the library's kernels get). Where SIMDe gains one of these, its own is
// used (each alias is defined only if SIMDe has not defined it).
// Deliberately not: every masked or converting form, only those the kernels call.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

// The mask types and rounding constants under their native names (SIMDe spells them
// simde__mmask16, SIMDE_MM_FROUND_NO_EXC).
typedef simde__mmask8 __mmask8;
typedef simde__mmask16 __mmask16;
typedef simde__mmask32 __mmask32;
typedef simde__mmask64 __mmask64;
#if !defined(_MM_FROUND_NO_EXC)
#define _MM_FROUND_NO_EXC SIMDE_MM_FROUND_NO_EXC
#endif
#if !defined(_MM_FROUND_TO_NEAREST_INT)
#define _MM_FROUND_TO_NEAREST_INT SIMDE_MM_FROUND_TO_NEAREST_INT
#endif

namespace llmbench::cpu::simde_gaps {

// Masked loads read only the lanes the mask selects (the others may lie past the end of the
// buffer, as the instruction allows) and zero the rest; masked stores write only those lanes.
template <int N, class Vec, class Mask>
inline void mask_store_f32(void* p, Mask k, const Vec& v) {
  const float* lanes = reinterpret_cast<const float*>(&v);
  auto* dst = static_cast<unsigned char*>(p);
  for (int i = 0; i < N; ++i)
    if ((static_cast<std::uint64_t>(k) >> i) & 1u) std::memcpy(dst + i * sizeof(float), lanes + i, sizeof(float));
}

inline simde__m128 maskz_loadu_ps_128(simde__mmask8 k, const void* p) {
  simde__m128 r;
  std::memset(&r, 0, sizeof r);
  for (int i = 0; i < 4; ++i)
    if ((k >> i) & 1u) std::memcpy(reinterpret_cast<float*>(&r) + i, static_cast<const float*>(p) + i, 4);
  return r;
}
inline simde__m512 maskz_loadu_ps_512(simde__mmask16 k, const void* p) {
  simde__m512 r;
  std::memset(&r, 0, sizeof r);
  for (int i = 0; i < 16; ++i)
    if ((k >> i) & 1u) std::memcpy(reinterpret_cast<float*>(&r) + i, static_cast<const float*>(p) + i, 4);
  return r;
}
template <class V, int N, class Mask>
inline V maskz_loadu_epi16(Mask k, const void* p) {
  V r;
  std::memset(&r, 0, sizeof r);
  for (int i = 0; i < N; ++i)
    if ((static_cast<std::uint64_t>(k) >> i) & 1u)
      std::memcpy(reinterpret_cast<std::uint16_t*>(&r) + i, static_cast<const std::uint16_t*>(p) + i, 2);
  return r;
}
inline simde__m512i maskz_loadu_epi8_512(simde__mmask64 k, const void* p) {
  simde__m512i r;
  std::memset(&r, 0, sizeof r);
  for (int i = 0; i < 64; ++i)
    if ((static_cast<std::uint64_t>(k) >> i) & 1u)
      reinterpret_cast<std::uint8_t*>(&r)[i] = static_cast<const std::uint8_t*>(p)[i];
  return r;
}

// vcvtph2ps / vcvtps2ph on 16 lanes: SIMDe's 8-lane F16C forms on each half. Their conversions
// are exact (fp16 -> fp32) and round to nearest even (fp32 -> fp16) like the instructions,
// except that a NaN becomes the one quiet NaN 0x7e00 where vcvtps2ph keeps the payload (no
// kernel converts NaNs on purpose; the tests use finite values).
inline simde__m512 cvtph_ps_512(simde__m256i h) {
  simde__m256i_private in = simde__m256i_to_private(h);
  simde__m512_private r;
  r.m256[0] = simde_mm256_cvtph_ps(in.m128i[0]);
  r.m256[1] = simde_mm256_cvtph_ps(in.m128i[1]);
  return simde__m512_from_private(r);
}
inline simde__m256i cvtps_ph_512(simde__m512 v) {
  simde__m512_private in = simde__m512_to_private(v);
  simde__m256i_private r;
  r.m128i[0] = simde_mm256_cvtps_ph(in.m256[0], 0);
  r.m128i[1] = simde_mm256_cvtps_ph(in.m256[1], 0);
  return simde__m256i_from_private(r);
}
inline float cvtsh_ss(unsigned short h) {
  return simde_mm_cvtss_f32(simde_mm_cvtph_ps(simde_mm_cvtsi32_si128(h)));
}

inline simde__m512 cvtepi32_ps_512(simde__m512i v) {
  simde__m512i_private in = simde__m512i_to_private(v);
  simde__m512_private r;
  for (int i = 0; i < 16; ++i) r.f32[i] = static_cast<float>(in.i32[i]);  // exact below 2^24; RNE
  return simde__m512_from_private(r);
}
inline simde__m512i cvtepi8_epi32_512(simde__m128i v) {
  simde__m128i_private in = simde__m128i_to_private(v);
  simde__m512i_private r;
  for (int i = 0; i < 16; ++i) r.i32[i] = in.i8[i];
  return simde__m512i_from_private(r);
}
inline simde__m512i cvtepu8_epi32_512(simde__m128i v) {
  simde__m128i_private in = simde__m128i_to_private(v);
  simde__m512i_private r;
  for (int i = 0; i < 16; ++i) r.i32[i] = in.u8[i];
  return simde__m512i_from_private(r);
}

// GCC 12's tree: upper 256 bits op lower, then upper 128 op lower, then lanes {2,3} op {0,1},
// then lane 1 op lane 0 (max: one more shuffle, as GCC writes it).
inline float reduce_add_ps_512(simde__m512 a) {
  const simde__m256 t3 = simde_mm256_add_ps(simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(a), 1)),
                                            simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(a), 0)));
  const simde__m128 t6 = simde_mm_add_ps(simde_mm256_extractf128_ps(t3, 1), simde_mm256_extractf128_ps(t3, 0));
  const simde__m128 t8 = simde_mm_add_ps(t6, simde_mm_shuffle_ps(t6, t6, SIMDE_MM_SHUFFLE(1, 0, 3, 2)));
  simde__m128_private p = simde__m128_to_private(t8);
  return p.f32[0] + p.f32[1];
}
inline float reduce_max_ps_512(simde__m512 a) {
  const simde__m256 t3 = simde_mm256_max_ps(simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(a), 1)),
                                            simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(a), 0)));
  const simde__m128 t6 = simde_mm_max_ps(simde_mm256_extractf128_ps(t3, 1), simde_mm256_extractf128_ps(t3, 0));
  const simde__m128 t8 = simde_mm_max_ps(t6, simde_mm_shuffle_ps(t6, t6, SIMDE_MM_SHUFFLE(1, 0, 3, 2)));
  const simde__m128 t10 = simde_mm_max_ps(t8, simde_mm_shuffle_ps(t8, t8, SIMDE_MM_SHUFFLE(0, 1, 0, 1)));
  return simde_mm_cvtss_f32(t10);
}
inline int reduce_min_epi32_512(simde__m512i a) {
  simde__m512i_private p = simde__m512i_to_private(a);
  int m = p.i32[0];
  for (int i = 1; i < 16; ++i) m = p.i32[i] < m ? p.i32[i] : m;
  return m;
}

// vpcmpd with the predicates _MM_CMPINT_EQ .. _MM_CMPINT_TRUE (0..7).
inline simde__mmask16 cmp_epi32_mask_512(simde__m512i a, simde__m512i b, int pred) {
  simde__m512i_private x = simde__m512i_to_private(a), y = simde__m512i_to_private(b);
  simde__mmask16 r = 0;
  for (int i = 0; i < 16; ++i) {
    const std::int32_t u = x.i32[i], v = y.i32[i];
    const bool t = pred == 0 ? u == v : pred == 1 ? u < v : pred == 2 ? u <= v : pred == 3 ? false
                 : pred == 4 ? u != v : pred == 5 ? u >= v : pred == 6 ? u > v : true;
    r = static_cast<simde__mmask16>(r | (t ? 1u << i : 0u));
  }
  return r;
}

// vscalefps: a * 2^floor(b), rounded once (to nearest even under the default MXCSR, which
// neither the library nor the tests change). SIMDe 0.7.4 computes a * exp2f(floor(b)) with
// denormal a flushed to zero; its power of two overflows to inf from b = 128 (and is 0 below
// b = -149) where the instruction's result is still finite: exp_avx512.h's e^88.7 is p * 2^128
// with p < 1, which SIMDe made inf (SwiGLU of -88.7 then 0 instead of 9.6e-38, 3.4e7 ulp off).
// ldexpf is the instruction's result for finite a and b; floor(b) is clamped to +-512, past
// which every finite nonzero a over- or underflows anyway. (tests/kernels/test_avx512_emulated.cpp
// shows SIMDe's and this one's results side by side.)
inline simde__m512 scalef_ps_512(simde__m512 a, simde__m512 b) {
  simde__m512_private x = simde__m512_to_private(a), y = simde__m512_to_private(b), r;
  for (int i = 0; i < 16; ++i) {
    const float e = std::floor(y.f32[i]);
    r.f32[i] = std::isnan(e) ? e : std::ldexp(x.f32[i], int(std::fmax(-512.0f, std::fmin(512.0f, e))));
  }
  return simde__m512_from_private(r);
}

// vfnmadd*ps: -(a * b) + c rounded once. SIMDe 0.7.4 computes it with two roundings whatever
// FP_FAST_FMAF says (its fmadd honours it: avx512_intrinsics.h); exp_avx512.h's range
// reduction then lost the low bits the instruction keeps (SwiGLU 1 ulp from the AVX2 kernel's
// bits, which test_swiglu requires equal).
inline simde__m512 fnmadd_ps_512(simde__m512 a, simde__m512 b, simde__m512 c) {
  simde__m512_private x = simde__m512_to_private(a), y = simde__m512_to_private(b),
                      z = simde__m512_to_private(c), r;
  for (int i = 0; i < 16; ++i) r.f32[i] = std::fma(-x.f32[i], y.f32[i], z.f32[i]);
  return simde__m512_from_private(r);
}

}  // namespace llmbench::cpu::simde_gaps

#if !defined(_mm_maskz_loadu_ps)
#define _mm_maskz_loadu_ps(k, p) llmbench::cpu::simde_gaps::maskz_loadu_ps_128(k, p)
#endif
#if !defined(_mm512_maskz_loadu_ps)
#define _mm512_maskz_loadu_ps(k, p) llmbench::cpu::simde_gaps::maskz_loadu_ps_512(k, p)
#endif
#if !defined(_mm256_maskz_loadu_epi16)
#define _mm256_maskz_loadu_epi16(k, p) \
  llmbench::cpu::simde_gaps::maskz_loadu_epi16<simde__m256i, 16>(k, p)
#endif
#if !defined(_mm512_maskz_loadu_epi16)
#define _mm512_maskz_loadu_epi16(k, p) \
  llmbench::cpu::simde_gaps::maskz_loadu_epi16<simde__m512i, 32>(k, p)
#endif
#if !defined(_mm512_maskz_loadu_epi8)
#define _mm512_maskz_loadu_epi8(k, p) llmbench::cpu::simde_gaps::maskz_loadu_epi8_512(k, p)
#endif
#if !defined(_mm_mask_storeu_ps)
#define _mm_mask_storeu_ps(p, k, v) llmbench::cpu::simde_gaps::mask_store_f32<4>(p, k, v)
#endif
#if !defined(_mm512_mask_storeu_ps)
#define _mm512_mask_storeu_ps(p, k, v) llmbench::cpu::simde_gaps::mask_store_f32<16>(p, k, v)
#endif
#if !defined(_mm512_cvtph_ps)
#define _mm512_cvtph_ps(h) llmbench::cpu::simde_gaps::cvtph_ps_512(h)
#endif
#if !defined(_mm512_cvtps_ph)
// Only round-to-nearest-even is used (_MM_FROUND_TO_NEAREST_INT), SIMDe's only rounding.
#define _mm512_cvtps_ph(v, rounding) llmbench::cpu::simde_gaps::cvtps_ph_512(v)
#endif
#if !defined(_cvtsh_ss)
#define _cvtsh_ss(h) llmbench::cpu::simde_gaps::cvtsh_ss(h)
#endif
#if !defined(_mm512_cvtepi32_ps)
#define _mm512_cvtepi32_ps(v) llmbench::cpu::simde_gaps::cvtepi32_ps_512(v)
#endif
#if !defined(_mm512_cvtepi8_epi32)
#define _mm512_cvtepi8_epi32(v) llmbench::cpu::simde_gaps::cvtepi8_epi32_512(v)
#endif
#if !defined(_mm512_cvtepu8_epi32)
#define _mm512_cvtepu8_epi32(v) llmbench::cpu::simde_gaps::cvtepu8_epi32_512(v)
#endif
#if !defined(_mm512_reduce_add_ps)
#define _mm512_reduce_add_ps(a) llmbench::cpu::simde_gaps::reduce_add_ps_512(a)
#endif
#if !defined(_mm512_reduce_max_ps)
#define _mm512_reduce_max_ps(a) llmbench::cpu::simde_gaps::reduce_max_ps_512(a)
#endif
#if !defined(_mm512_reduce_min_epi32)
#define _mm512_reduce_min_epi32(a) llmbench::cpu::simde_gaps::reduce_min_epi32_512(a)
#endif
#if !defined(_mm512_cmp_epi32_mask)
#define _mm512_cmp_epi32_mask(a, b, pred) llmbench::cpu::simde_gaps::cmp_epi32_mask_512(a, b, pred)
#endif
#if !defined(_MM_CMPINT_LT)
#define _MM_CMPINT_LT 1
#endif
#if !defined(_mm512_mask_cmp_ps_mask)
#define _mm512_mask_cmp_ps_mask(k, a, b, pred) \
  static_cast<simde__mmask16>((k) & simde_mm512_cmp_ps_mask(a, b, pred))
#endif
#undef _mm512_scalef_ps
#define _mm512_scalef_ps(a, b) llmbench::cpu::simde_gaps::scalef_ps_512(a, b)
#undef _mm512_fnmadd_ps
#define _mm512_fnmadd_ps(a, b, c) llmbench::cpu::simde_gaps::fnmadd_ps_512(a, b, c)
