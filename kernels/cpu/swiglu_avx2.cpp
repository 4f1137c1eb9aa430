// AVX2 SwiGLU (swiglu_avx2.h). Compiled with -mavx2 -mfma (kernels/CMakeLists.txt); nothing
// here runs unless cpu_isa() found AVX2 and FMA. Decode's one row is 5632 elements on
// tinyllama-1.1b, below the threshold for a parallel region, so this runs on one thread there:
// the portable std::exp loop took 42-47 us a layer (docs/metrics.md, issue 31).
#include "kernels/cpu/swiglu_avx2.h"

#include <immintrin.h>

#include <cstddef>
#include <cstring>

#include "kernels/cpu/exp_avx2.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr int kLanes = 8;

inline __m256 swiglu8(__m256 g, __m256 u) {
  // max/min return their second operand when the first is NaN: a NaN gate becomes a finite x
  // here, and the NaN comes back through g in the division below.
  const __m256 x = _mm256_min_ps(_mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), g),
                                               _mm256_set1_ps(-104.0f)),
                                 _mm256_set1_ps(89.0f));
  const __m256 e = exp_clamped(x);
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

// One row: full vectors, then the tail through a zero-padded copy.
void swiglu_row(float* out, const float* g, const float* u, int ffn_dim) {
  int i = 0;
  for (; i + kLanes <= ffn_dim; i += kLanes)
    _mm256_storeu_ps(out + i, swiglu8(_mm256_loadu_ps(g + i), _mm256_loadu_ps(u + i)));
  if (i < ffn_dim) {
    const std::size_t left = std::size_t(ffn_dim - i);
    float gt[kLanes] = {}, ut[kLanes] = {}, ot[kLanes];
    std::memcpy(gt, g + i, left * sizeof(float));
    std::memcpy(ut, u + i, left * sizeof(float));
    _mm256_storeu_ps(ot, swiglu8(_mm256_loadu_ps(gt), _mm256_loadu_ps(ut)));
    std::memcpy(out + i, ot, left * sizeof(float));
  }
}

}  // namespace

void swiglu_f32(float* out, const float* gate_up, int n_rows, int ffn_dim) {
#pragma omp parallel for if (static_cast<long>(n_rows) * ffn_dim > (1 << 15))
  for (int r = 0; r < n_rows; ++r) {
    const float* g = gate_up + static_cast<std::size_t>(r) * 2 * ffn_dim;
    swiglu_row(out + static_cast<std::size_t>(r) * ffn_dim, g, g + ffn_dim, ffn_dim);
  }
}

}  // namespace llmbench::cpu::avx2
