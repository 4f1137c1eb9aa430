// e^x on 8 fp32 lanes for the AVX2 kernels (swiglu_avx2.cpp, attention_avx2.cpp): Cody-Waite
// reduction x = n ln2 + r, a degree-7 Horner polynomial in r (constants in exp_poly.h, shared
// with exp_avx512.h), then 2^n applied in two multiplies so that gradual underflow rounds once
// (the AVX-512 vscalefps's bits; see swiglu_avx2.h). Include only from files compiled with
// -mavx2 -mfma. Internal to kernels/cpu.
// Deliberately not: a clamp (callers clamp x to their own range within [-104, 89]).
#pragma once
#include <immintrin.h>

#include "kernels/cpu/exp_poly.h"

namespace llmbench::cpu::avx2 {

// 2^n for integer-valued n in [-126, 127]: the exponent field built directly.
inline __m256 pow2_normal(__m256i n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// e^x for x in [-104, 89] (the caller clamps).
inline __m256 exp_clamped(__m256 x) {
  using namespace exp_poly;
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kHorner[0]);
  for (int t = 1; t < kTerms; ++t) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kHorner[t]));
  // p * 2^n in two exact-or-once-rounded steps (see swiglu_avx2.h): p * 2^n1 is exact (p is
  // in [0.7, 1.5] and n1 in [-75, 64]), the second multiply rounds once.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  return _mm256_mul_ps(_mm256_mul_ps(p, pow2_normal(n1)), pow2_normal(n2));
}

}  // namespace llmbench::cpu::avx2
