// AVX2 decode kernel for bf16/fp16 weights (see matmul_avx2.h). This file alone is compiled
// with -mavx2 -mfma -mf16c (kernels/CMakeLists.txt); nothing here runs unless cpu_isa() found
// those features.
#include "kernels/cpu/matmul_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/common/half.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr int kStep = 16;       // k values per step: one 32-byte weight load per weight row
constexpr int kPanelCols = 16;  // weight rows (output columns) per thread work unit
// Weight rows of at most this many bytes prefetch the next tile's rows into L1 while a tile
// computes (see tile()). Longer rows are left to the hardware prefetcher, which keeps up with
// long streams: at 4 KB rows (k = 2048) the software prefetch made the 32000-row head 10-30%
// slower in bench_kernels.
constexpr std::size_t kPrefetchRowBytes = 2048;

// fp32_to_bf16 of kernels/common/half.h on 8 lanes, widened back (the low 16 bits zero):
// round to nearest even, NaN made quiet.
__m256 round_bf16(__m256 v) {
  const __m256i b = _mm256_castps_si256(v);
  const __m256i hi = _mm256_set1_epi32(int(0xFFFF0000u));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
  const __m256i r = _mm256_and_si256(
      _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb)), hi);
  const __m256i nan = _mm256_and_si256(_mm256_or_si256(b, _mm256_set1_epi32(0x00400000)), hi);
  return _mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(nan),
                          _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

// One x row rounded to bf16 values, zero-padded to kp (a multiple of 16), each group of 16 in
// split order: the 8 even-indexed values, then the 8 odd-indexed ones.
void prepare_bf16(float* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + kStep <= k; p += kStep) {
    const __m256 a = round_bf16(_mm256_loadu_ps(x + p)), b = round_bf16(_mm256_loadu_ps(x + p + 8));
    // shuffle: [a0 a2 b0 b2 | a4 a6 b4 b6]; the 64-bit permute puts the pairs in k order.
    const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 odd = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_storeu_ps(dst + p, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8)));
    _mm256_storeu_ps(dst + p + 8,
                     _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odd), 0xD8)));
  }
  for (int q = p; q < kp; ++q) {
    const int j = q - p;
    dst[p + (j & 1) * 8 + j / 2] = q < k ? bf16_to_fp32(fp32_to_bf16(x[q])) : 0.0f;
  }
}

// One x row rounded to fp16 values (held as fp32), zero-padded to kp.
void prepare_fp16(float* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + 8 <= k; p += 8)
    _mm256_storeu_ps(dst + p, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + p),
                                                              _MM_FROUND_TO_NEAREST_INT)));
  for (; p < kp; ++p) dst[p] = p < k ? fp16_to_fp32(fp32_to_fp16(x[p])) : 0.0f;
}

// The 16 weights at w as two fp32 vectors matching the prepared x: bf16 even/odd lanes, fp16
// the first and second 8.
template <bool kBf16>
inline void load_weights(const std::uint16_t* w, __m256& w0, __m256& w1) {
  if constexpr (kBf16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    w0 = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    w1 = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(int(0xFFFF0000u))));
  } else {
    w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    w1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 8)));
  }
}

// The sum of a's eight lanes by one fixed tree.
inline float reduce(__m256 a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// out[r, c] = xp_r . w_c for r < R, c < C (out rows ldo apart, xp rows kp apart, w rows k apart).
// Two accumulators per output, summed in k order; the k tail (k % 16 weights) is read through a
// zero-padded copy, x being zero-padded already.
// Short rows (the small preset: 768 weights, 1.5 KB) end before the hardware prefetcher has
// ramped up on their C streams, so each tile started cold (the 32000 x 768 head: 10-12 GB/s in
// bench_kernels); with the next tile's C rows (the C * k weights after w, contiguous) prefetched
// here, C * 32 bytes a step, one tile ahead, 18-22 GB/s. Prefetching past the matrix's end is
// harmless (a prefetch never faults).
template <bool kBf16, int R, int C>
void tile(float* out, int ldo, const float* xp, int kp, const std::uint16_t* w, int k) {
  const char* next = reinterpret_cast<const char*>(w + std::size_t(C) * k);
  const std::size_t next_bytes = std::size_t(C) * k * sizeof(std::uint16_t);
  const std::size_t prefetch_end =
      std::size_t(k) * sizeof(std::uint16_t) <= kPrefetchRowBytes ? next_bytes : 0;
  std::size_t prefetched = 0;
  __m256 a0[R][C], a1[R][C];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) a0[r][c] = a1[r][c] = _mm256_setzero_ps();
  auto step = [&](const std::uint16_t* const* wp, int p) {
    __m256 x0[R], x1[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      x0[r] = _mm256_loadu_ps(xp + std::size_t(r) * kp + p);
      x1[r] = _mm256_loadu_ps(xp + std::size_t(r) * kp + p + 8);
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      __m256 w0, w1;
      load_weights<kBf16>(wp[c], w0, w1);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        a0[r][c] = _mm256_fmadd_ps(x0[r], w0, a0[r][c]);
        a1[r][c] = _mm256_fmadd_ps(x1[r], w1, a1[r][c]);
      }
    }
  };
  const int kf = k / kStep * kStep;
  const std::uint16_t* wp[C];
  for (int p = 0; p < kf; p += kStep) {
    if (prefetched < prefetch_end) {
#pragma GCC unroll 4
      for (int q = 0; q < C * 32; q += 64) _mm_prefetch(next + prefetched + q, _MM_HINT_T0);
      prefetched += C * 32;
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) wp[c] = w + std::size_t(c) * k + p;
    step(wp, p);
  }
  if (kf < k) {
    std::uint16_t tail[C][kStep] = {};
    for (int c = 0; c < C; ++c) {
      std::memcpy(tail[c], w + std::size_t(c) * k + kf, std::size_t(k - kf) * sizeof(std::uint16_t));
      wp[c] = tail[c];
    }
    step(wp, kf);
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      out[std::size_t(r) * ldo + c] = reduce(_mm256_add_ps(a0[r][c], a1[r][c]));
}

// Columns [j0, j1) for every row: row pairs in 2 x 2 tiles, a last odd row in 1 x 4 tiles
// (eight accumulators either way, within AVX2's sixteen registers).
template <bool kBf16>
void panel(float* out, int n, const float* xp, int kp, const std::uint16_t* w, int m, int k,
           int j0, int j1) {
  int i = 0;
  for (; i + 2 <= m; i += 2)
    for (int j = j0; j < j1; j += 2) {
      float* o = out + std::size_t(i) * n + j;
      const float* xi = xp + std::size_t(i) * kp;
      const std::uint16_t* wj = w + std::size_t(j) * k;
      if (j1 - j >= 2)
        tile<kBf16, 2, 2>(o, n, xi, kp, wj, k);
      else
        tile<kBf16, 2, 1>(o, n, xi, kp, wj, k);
    }
  for (; i < m; ++i)
    for (int j = j0; j < j1; j += 4) {
      float* o = out + std::size_t(i) * n + j;
      const float* xi = xp + std::size_t(i) * kp;
      const std::uint16_t* wj = w + std::size_t(j) * k;
      switch (std::min(4, j1 - j)) {
        case 4: tile<kBf16, 1, 4>(o, n, xi, kp, wj, k); break;
        case 3: tile<kBf16, 1, 3>(o, n, xi, kp, wj, k); break;
        case 2: tile<kBf16, 1, 2>(o, n, xi, kp, wj, k); break;
        default: tile<kBf16, 1, 1>(o, n, xi, kp, wj, k); break;
      }
    }
}

}  // namespace

void matmul_half_rows(float* out, const float* x, int lda, const std::uint16_t* w, DType dtype,
                      int m, int n, int k) {
  if (m <= 0 || n <= 0) return;
  const bool bf16 = dtype == DType::kBf16;
  const int kp = (k + kStep - 1) / kStep * kStep;
  // Reused across calls: a fresh block of this size per call would come from mmap and fault
  // its pages in every time.
  thread_local std::vector<float> xp;
  xp.resize(std::size_t(m) * kp);
  for (int i = 0; i < m; ++i) {
    float* d = xp.data() + std::size_t(i) * kp;
    const float* s = x + std::size_t(i) * lda;
    if (bf16)
      prepare_bf16(d, s, k, kp);
    else
      prepare_fp16(d, s, k, kp);
  }
  const int n_panels = (n + kPanelCols - 1) / kPanelCols;
  const float* xd = xp.data();
  // Static schedule: each thread streams one contiguous slice of the weight matrix.
#pragma omp parallel for schedule(static) if (static_cast<long>(n) * k > (1 << 15))
  for (int g = 0; g < n_panels; ++g) {
    const int j0 = g * kPanelCols, j1 = std::min(n, j0 + kPanelCols);
    if (bf16)
      panel<true>(out, n, xd, kp, w, m, k, j0, j1);
    else
      panel<false>(out, n, xd, kp, w, m, k, j0, j1);
  }
}

}  // namespace llmbench::cpu::avx2
