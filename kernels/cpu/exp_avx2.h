// e^x on 8 fp32 lanes for the AVX2 kernels (swiglu_avx2.cpp, attention_avx2.cpp): Cody-Waite
// reduction x = n ln2 + r, a degree-7 Horner polynomial in r, then 2^n applied in two
// multiplies so that gradual underflow rounds once (the AVX-512 vscalefps's bits; see
// swiglu_avx2.h). Include only from files compiled with -mavx2 -mfma. Internal to kernels/cpu.
// Deliberately not: a clamp (callers clamp x to their own range within [-104, 89]).
#pragma once
#include <immintrin.h>

namespace llmbench::cpu::avx2 {

// 2^n for integer-valued n in [-126, 127]: the exponent field built directly.
inline __m256 pow2_normal(__m256i n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// e^x for x in [-104, 89] (the caller clamps).
inline __m256 exp_clamped(__m256 x) {
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln2 = 0.693145751953125 (9 significant bits: n * hi is exact for |n| < 2^15) + lo.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723212e-6f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // p * 2^n in two exact-or-once-rounded steps (see swiglu_avx2.h): p * 2^n1 is exact (p is
  // in [0.7, 1.5] and n1 in [-75, 64]), the second multiply rounds once.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  return _mm256_mul_ps(_mm256_mul_ps(p, pow2_normal(n1)), pow2_normal(n2));
}

}  // namespace llmbench::cpu::avx2
