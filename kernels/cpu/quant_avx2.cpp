// AVX2 int8-activation product on packed quantised weights (see quant_avx2.h). This file
// alone is compiled with -mavx2 -mfma -mf16c (kernels/CMakeLists.txt).
#include "kernels/cpu/quant_avx2.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/panel_schedule.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr int kCols = 16;  // columns per packed group (kQuantPanelCols)

inline __m256i broadcast_dword(const std::int8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// The int32 sums of 4 products per lane: unsigned bytes u times signed bytes s.
inline __m256i dot4(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// Rows [r0, r0 + R) of one full group (columns g * 16 ..), every block. `chunk0` is the group's
// first chunk; chunks are 16 * 34 (int8) or 16 * 18 (int4) bytes.
template <bool kInt4, int R>
void group_rows(float* out, int n, const std::int8_t* qx, const float* dx,
                const std::int32_t* corr, int r0, const std::uint8_t* chunk0, int k) {
  constexpr int kChunkBytes = kCols * (kInt4 ? 18 : 34);
  const int nb = k / 32;
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  const __m256i sign_bit = _mm256_set1_epi8(char(0x80)), low4 = _mm256_set1_epi8(0x0F);
  for (int b = 0; b < nb; ++b) {
    const std::uint8_t* chunk = chunk0 + std::int64_t(b) * kChunkBytes;
    const std::uint8_t* values = chunk + 2 * kCols;
    __m256i isum[R][2];
    for (int r = 0; r < R; ++r)
      isum[r][0] = isum[r][1] =
          kInt4 ? _mm256_set1_epi32(corr[std::int64_t(r0 + r) * nb + b]) : _mm256_setzero_si256();
    const std::int8_t* xb = qx + std::int64_t(r0) * k + b * 32;
    if constexpr (kInt4) {
      for (int s = 0; s < 4; ++s) {
        for (int h = 0; h < 2; ++h) {
          const __m256i raw = _mm256_loadu_si256(
              reinterpret_cast<const __m256i*>(values + s * 4 * kCols + h * 32));
          const __m256i lo = _mm256_and_si256(raw, low4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
          for (int r = 0; r < R; ++r) {
            const std::int8_t* x = xb + std::int64_t(r) * k;
            isum[r][h] = _mm256_add_epi32(isum[r][h], dot4(lo, broadcast_dword(x + 4 * s)));
            isum[r][h] = _mm256_add_epi32(isum[r][h], dot4(hi, broadcast_dword(x + 16 + 4 * s)));
          }
        }
      }
    } else {
      for (int s = 0; s < 8; ++s) {
        for (int h = 0; h < 2; ++h) {
          const __m256i q = _mm256_xor_si256(
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + s * 4 * kCols + h * 32)),
              sign_bit);
          const __m256i mag = _mm256_abs_epi8(q);
          for (int r = 0; r < R; ++r) {
            const __m256i x = broadcast_dword(xb + std::int64_t(r) * k + 4 * s);
            isum[r][h] = _mm256_add_epi32(isum[r][h], dot4(mag, _mm256_sign_epi8(x, q)));
          }
        }
      }
    }
    const __m256 dw0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(chunk)));
    const __m256 dw1 =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(chunk + 16)));
    for (int r = 0; r < R; ++r) {
      const __m256 d = _mm256_set1_ps(dx[std::int64_t(r0 + r) * nb + b]);
      acc[r][0] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum[r][0]), d), dw0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum[r][1]), d), dw1, acc[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(out + std::int64_t(r0 + r) * n, acc[r][0]);
    _mm256_storeu_ps(out + std::int64_t(r0 + r) * n + 8, acc[r][1]);
  }
}

template <bool kInt4>
void run(float* out, const std::int8_t* qx, const float* dx, const void* w, int m, int n, int k) {
  const int nb = k / 32, full = n / kCols;
  std::vector<std::int32_t> corr;
  if (kInt4) {  // the nibbles are q + 8: each block's sum starts from -8 * sum(qx)
    corr.resize(std::size_t(m) * nb);
    for (std::int64_t i = 0; i < std::int64_t(m) * nb; ++i) {
      int sum = 0;
      for (int j = 0; j < 32; ++j) sum += qx[i * 32 + j];
      corr[std::size_t(i)] = -8 * sum;
    }
  }
  const std::int64_t group_bytes = std::int64_t(kCols) * nb * (kInt4 ? 18 : 34);
  const auto* base = static_cast<const std::uint8_t*>(w);
  // Each thread streams one contiguous run of column groups, then helps with the largest run
  // left (panel_schedule.h); a group's weights (16 columns x k) stay in L1/L2 while every row
  // pair passes over them.
  PanelSchedule schedule(full, omp_get_max_threads());
#pragma omp parallel if (std::int64_t(n) * k > (1 << 15))
  schedule.run(omp_get_thread_num(), [&](int g) {
    const std::uint8_t* wg = base + g * group_bytes;
    float* o = out + std::int64_t(g) * kCols;
    int i = 0;
    for (; i + 2 <= m; i += 2) group_rows<kInt4, 2>(o, n, qx, dx, corr.data(), i, wg, k);
    if (i < m) group_rows<kInt4, 1>(o, n, qx, dx, corr.data(), i, wg, k);
  });
}

}  // namespace

void matmul_quant_vnni(float* out, const std::int8_t* qx, const float* dx, const void* w,
                       bool int4, int m, int n, int k) {
  if (int4)
    run<true>(out, qx, dx, w, m, n, k);
  else
    run<false>(out, qx, dx, w, m, n, k);
}

}  // namespace llmbench::cpu::avx2
