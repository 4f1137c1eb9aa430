// AVX-512 decode kernel for int8/int4 weight blocks (quant_avx512.h). Compiled with per-file
// AVX-512 flags (kernels/CMakeLists.txt); reached only through matmul_quant's dispatch.
// Deliberately not: the product with int8 activations (quant_vnni_avx512.cpp, what the engine
// runs); this is the weight-only one, x in fp32.
#include "kernels/cpu/quant_avx512.h"

#include "kernels/cpu/avx512_intrinsics.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

namespace {

// The 32 weights of one block as two vectors of 16 fp32 values (q * d, exact).
template <bool kInt4>
inline void widen_block(const std::uint8_t* b, __m512& lo, __m512& hi) {
  std::uint16_t d;
  std::memcpy(&d, b, 2);
  const __m512 scale = _mm512_set1_ps(_cvtsh_ss(d));
  __m512i qlo, qhi;
  if constexpr (kInt4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
    const __m128i mask = _mm_set1_epi8(0x0F);
    const __m512i eight = _mm512_set1_epi32(8);
    qlo = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_and_si128(v, mask)), eight);
    qhi = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(v, 4), mask)),
                           eight);
  } else {
    qlo = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2)));
    qhi = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 18)));
  }
  lo = _mm512_mul_ps(_mm512_cvtepi32_ps(qlo), scale);
  hi = _mm512_mul_ps(_mm512_cvtepi32_ps(qhi), scale);
}

// R x rows (R <= 4) times one quantised weight row: out[r * n] for r < R. Four accumulators
// per row (block halves of even and odd blocks) keep four independent FMA chains in flight,
// so one row (batch 1) is not bound by the FMA latency; the order is the same for every R.
template <bool kInt4, int R>
inline void rows_times_weight_row(float* out, int n, const float* x, int lda,
                                  const std::uint8_t* row, int k) {
  constexpr int kBlockBytes = kInt4 ? 18 : 34;
  __m512 a0[R], a1[R], a2[R], a3[R];
  for (int r = 0; r < R; ++r) a0[r] = a1[r] = a2[r] = a3[r] = _mm512_setzero_ps();
  const int nb = k / 32;
  int b = 0;
  for (; b + 1 < nb; b += 2) {
    __m512 lo0, hi0, lo1, hi1;
    widen_block<kInt4>(row + std::int64_t(b) * kBlockBytes, lo0, hi0);
    widen_block<kInt4>(row + std::int64_t(b + 1) * kBlockBytes, lo1, hi1);
    const float* xb = x + b * 32;
    for (int r = 0; r < R; ++r) {
      const float* xr = xb + std::int64_t(r) * lda;
      a0[r] = _mm512_fmadd_ps(lo0, _mm512_loadu_ps(xr), a0[r]);
      a1[r] = _mm512_fmadd_ps(hi0, _mm512_loadu_ps(xr + 16), a1[r]);
      a2[r] = _mm512_fmadd_ps(lo1, _mm512_loadu_ps(xr + 32), a2[r]);
      a3[r] = _mm512_fmadd_ps(hi1, _mm512_loadu_ps(xr + 48), a3[r]);
    }
  }
  if (b < nb) {  // an odd last block: into the even accumulators
    __m512 lo, hi;
    widen_block<kInt4>(row + std::int64_t(b) * kBlockBytes, lo, hi);
    const float* xb = x + b * 32;
    for (int r = 0; r < R; ++r) {
      a0[r] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(xb + std::int64_t(r) * lda), a0[r]);
      a1[r] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(xb + std::int64_t(r) * lda + 16), a1[r]);
    }
  }
  for (int r = 0; r < R; ++r)
    out[std::int64_t(r) * n] = _mm512_reduce_add_ps(
        _mm512_add_ps(_mm512_add_ps(a0[r], a1[r]), _mm512_add_ps(a2[r], a3[r])));
}

// The same sums as rows_times_weight_row, from the row already widened into `wf` (k fp32
// values, q * d: the same floats the registers held), so the widening is paid once per weight
// row rather than once per 4 x rows. Bit-identical to the in-register path.
template <int R>
inline void rows_times_widened_row(float* out, int n, const float* x, int lda, const float* wf,
                                   int k) {
  __m512 a0[R], a1[R], a2[R], a3[R];
  for (int r = 0; r < R; ++r) a0[r] = a1[r] = a2[r] = a3[r] = _mm512_setzero_ps();
  const int nb = k / 32;
  int b = 0;
  for (; b + 1 < nb; b += 2) {
    const float* wb = wf + b * 32;
    const __m512 lo0 = _mm512_loadu_ps(wb), hi0 = _mm512_loadu_ps(wb + 16);
    const __m512 lo1 = _mm512_loadu_ps(wb + 32), hi1 = _mm512_loadu_ps(wb + 48);
    const float* xb = x + b * 32;
    for (int r = 0; r < R; ++r) {
      const float* xr = xb + std::int64_t(r) * lda;
      a0[r] = _mm512_fmadd_ps(lo0, _mm512_loadu_ps(xr), a0[r]);
      a1[r] = _mm512_fmadd_ps(hi0, _mm512_loadu_ps(xr + 16), a1[r]);
      a2[r] = _mm512_fmadd_ps(lo1, _mm512_loadu_ps(xr + 32), a2[r]);
      a3[r] = _mm512_fmadd_ps(hi1, _mm512_loadu_ps(xr + 48), a3[r]);
    }
  }
  if (b < nb) {
    const __m512 lo = _mm512_loadu_ps(wf + b * 32), hi = _mm512_loadu_ps(wf + b * 32 + 16);
    const float* xb = x + b * 32;
    for (int r = 0; r < R; ++r) {
      a0[r] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(xb + std::int64_t(r) * lda), a0[r]);
      a1[r] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(xb + std::int64_t(r) * lda + 16), a1[r]);
    }
  }
  for (int r = 0; r < R; ++r)
    out[std::int64_t(r) * n] = _mm512_reduce_add_ps(
        _mm512_add_ps(_mm512_add_ps(a0[r], a1[r]), _mm512_add_ps(a2[r], a3[r])));
}

template <bool kInt4>
void decode(float* out, const float* x, int lda, const void* w, int m, int n, int k) {
  const std::int64_t row_bytes = std::int64_t(k / 32) * (kInt4 ? 18 : 34);
  const auto* base = static_cast<const std::uint8_t*>(w);
  constexpr int kBlockBytes = kInt4 ? 18 : 34;
#pragma omp parallel if (std::int64_t(n) * k > (1 << 15))
  {
    // Rows of x beyond 4: widen each weight row once into this per-thread buffer (L1/L2).
    std::vector<float> wf(m > 4 ? std::size_t(k) : 0);
#pragma omp for schedule(static)
    for (int j = 0; j < n; ++j) {
      const std::uint8_t* row = base + j * row_bytes;
      if (m > 4)
        for (int b = 0; b < k / 32; ++b) {
          __m512 lo, hi;
          widen_block<kInt4>(row + std::int64_t(b) * kBlockBytes, lo, hi);
          _mm512_storeu_ps(wf.data() + b * 32, lo);
          _mm512_storeu_ps(wf.data() + b * 32 + 16, hi);
        }
      for (int i0 = 0; i0 < m; i0 += 4) {
        float* o = out + std::int64_t(i0) * n + j;
        const float* xi = x + std::int64_t(i0) * lda;
        const int r = m - i0 < 4 ? m - i0 : 4;
        if (m > 4) {
          switch (r) {
            case 1: rows_times_widened_row<1>(o, n, xi, lda, wf.data(), k); break;
            case 2: rows_times_widened_row<2>(o, n, xi, lda, wf.data(), k); break;
            case 3: rows_times_widened_row<3>(o, n, xi, lda, wf.data(), k); break;
            default: rows_times_widened_row<4>(o, n, xi, lda, wf.data(), k); break;
          }
          continue;
        }
        switch (r) {
          case 1: rows_times_weight_row<kInt4, 1>(o, n, xi, lda, row, k); break;
          case 2: rows_times_weight_row<kInt4, 2>(o, n, xi, lda, row, k); break;
          case 3: rows_times_weight_row<kInt4, 3>(o, n, xi, lda, row, k); break;
          default: rows_times_weight_row<kInt4, 4>(o, n, xi, lda, row, k); break;
        }
      }
    }
  }
}

}  // namespace

void matmul_quant_decode(float* out, const float* x, int lda, const void* w, bool int4, int m,
                         int n, int k) {
  if (int4)
    decode<true>(out, x, lda, w, m, n, k);
  else
    decode<false>(out, x, lda, w, m, n, k);
}

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
