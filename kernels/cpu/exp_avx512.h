// e^x on 16 fp32 lanes for the AVX-512 kernels (swiglu_avx512.cpp, attention_avx512.cpp): the
// reduction and polynomial of exp_poly.h (as exp_avx2.h), then 2^n by vscalefps, which rounds
// once and underflows gradually. Include only from files compiled with AVX-512F flags.
// Internal to kernels/cpu.
// Deliberately not: a clamp (callers clamp x to their own range within [-104, 89]).
#pragma once
#include "kernels/cpu/avx512_intrinsics.h"

#include "kernels/cpu/exp_poly.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

// e^x for x in [-104, 89] (the caller clamps).
inline __m512 exp_clamped(__m512 x) {
  using namespace exp_poly;
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kHorner[0]);
  for (int t = 1; t < kTerms; ++t) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kHorner[t]));
  return _mm512_scalef_ps(p, n);
}

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
