// AVX-512 SwiGLU (swiglu_avx512.h). Compiled with per-file AVX-512 flags
// (kernels/CMakeLists.txt); nothing here runs unless cpu_isa() found AVX-512.
#include "kernels/cpu/swiglu_avx512.h"

#include "kernels/cpu/avx512_intrinsics.h"

#include <cstddef>

#include "kernels/cpu/exp_avx512.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

namespace {

constexpr int kLanes = 16;

inline __m512 swiglu16(__m512 g, __m512 u) {
  // max/min return their second operand when the first is NaN: a NaN gate becomes a finite x
  // here, and the NaN comes back through g in the division below.
  const __m512 x = _mm512_min_ps(_mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), g),
                                               _mm512_set1_ps(-104.0f)),
                                 _mm512_set1_ps(89.0f));
  const __m512 e = exp_clamped(x);
  return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

}  // namespace

void swiglu_f32(float* out, const float* gate_up, int n_rows, int ffn_dim) {
  const int chunks = (ffn_dim + kLanes - 1) / kLanes;
#pragma omp parallel for collapse(2) if (static_cast<long>(n_rows) * ffn_dim > (1 << 15))
  for (int r = 0; r < n_rows; ++r) {
    for (int c = 0; c < chunks; ++c) {
      const int i = c * kLanes, left = ffn_dim - i;
      const __mmask16 m = left >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1u);
      const float* g = gate_up + static_cast<std::size_t>(r) * 2 * ffn_dim + i;
      const __m512 y = swiglu16(_mm512_maskz_loadu_ps(m, g), _mm512_maskz_loadu_ps(m, g + ffn_dim));
      _mm512_mask_storeu_ps(out + static_cast<std::size_t>(r) * ffn_dim + i, m, y);
    }
  }
}

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
