// AVX2 GEMM for bf16/fp16 weights at prefill and batched-decode row counts (see
// gemm_half_avx2.h). This file alone is compiled with -mavx2 -mfma -mf16c
// (kernels/CMakeLists.txt); nothing here runs unless cpu_isa() found those features.
//
// The work, in the dot form (each output a dot product over k, as llama.cpp's tinyBLAS computes
// 16-bit weights on AVX2; x is rounded to the weight dtype once per call, in fp32):
//   block  k in kGemmBlockK pieces. Per block, each weight panel (3 rows) of the thread's slice
//          is widened once into a 6 KB fp32 buffer (the next panel's block prefetched), then
//          every 4-row tile of x passes over it; the weights are read from memory once per
//          call and the x block (m x 512 fp32: 32 KB at 16 rows, 256 KB at 128) stays in L2.
//   tile   4 x rows by 3 weight rows: 12 fp32 vector accumulators, 3 weight vectors and 1 x
//          vector, the 16 ymm registers. Per 8 k: 3 weight loads, 4 x loads, 12 FMAs. Each
//          output's 8 lanes are summed by one fixed tree and added to out block after block,
//          so every output is the same sequence of operations whatever m is and whichever
//          tile shape (edge tiles: fewer rows or columns) computed it.
//   threads one parallel region per call: the x rows are prepared under `omp for`, then each
//          thread takes a contiguous range of weight panels (its own columns of out).
// Widening: bf16 8 weights by vpmovzxwd and a 16-bit shift, fp16 by vcvtph2ps.
#include "kernels/cpu/gemm_half_avx2.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/common/half.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr int kRows = 4;  // x rows per tile
constexpr int kCols = 3;  // weight rows per tile
// Floats between the widened panel's rows: a block plus one cache line, so the three rows do
// not start at the same offset in 4 KB (one L1 set).
constexpr int kPanelLd = kGemmBlockK + 16;

// fp32 -> bf16 -> fp32 on 8 lanes, as fp32_to_bf16 (kernels/common/half.h) does it: round to
// nearest even by adding 0x7FFF plus the kept part's lowest bit; a NaN keeps its top bits and
// becomes quiet.
__m256 to_bf16_value(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i top = _mm256_set1_epi32(int(0xFFFF0000u));
  const __m256i keep_lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), keep_lsb);
  const __m256 rounded = _mm256_castsi256_ps(_mm256_and_si256(_mm256_add_epi32(bits, bias), top));
  const __m256 quiet_nan = _mm256_castsi256_ps(
      _mm256_and_si256(_mm256_or_si256(bits, _mm256_set1_epi32(0x00400000)), top));
  return _mm256_blendv_ps(rounded, quiet_nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

// One x row for bf16 weights: rounded to bf16 values, zero-padded to kp.
void prepare_bf16(float* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + 8 <= k; p += 8) _mm256_storeu_ps(dst + p, to_bf16_value(_mm256_loadu_ps(x + p)));
  for (; p < kp; ++p) dst[p] = p < k ? bf16_to_fp32(fp32_to_bf16(x[p])) : 0.0f;
}

// One x row for fp16 weights: rounded to fp16 values (vcvtps2ph rounds to nearest even and
// keeps NaNs quiet, as fp32_to_fp16 does), zero-padded to kp.
void prepare_fp16(float* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + 8 <= k; p += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + p), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(dst + p, _mm256_cvtph_ps(h));
  }
  for (; p < kp; ++p) dst[p] = p < k ? fp16_to_fp32(fp32_to_fp16(x[p])) : 0.0f;
}

// 8 weights at w as fp32. bf16: zero-extended to 32 bits and shifted into the top half.
template <bool kBf16>
inline __m256 widen8(const std::uint16_t* w) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  if constexpr (kBf16)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  else
    return _mm256_cvtph_ps(h);
}

// One panel's k block as fp32: dst[c, 0:len8] = widen(w[c, p0:p1]) for c < cols, zero past
// p1 (len8 = p1 - p0 rounded up to 8; rows kPanelLd apart), the x rows being zero there too.
template <bool kBf16>
void widen_panel(float* dst, const std::uint16_t* w, std::size_t k, int cols, int p0, int p1) {
  const int len = p1 - p0, full = len / 8 * 8;
  for (int c = 0; c < cols; ++c) {
    const std::uint16_t* wc = w + c * k + p0;
    float* d = dst + c * kPanelLd;
    for (int p = 0; p < full; p += 8) _mm256_store_ps(d + p, widen8<kBf16>(wc + p));
    if (full < len) {
      alignas(16) std::uint16_t tail[8] = {};
      std::memcpy(tail, wc + full, std::size_t(len - full) * sizeof(std::uint16_t));
      _mm256_store_ps(d + full, widen8<kBf16>(tail));
    }
  }
}

// The four lanes' sums of a, b, c, d (one fixed tree per vector: pairs, then quads, then the
// two 128-bit halves).
inline __m128 sum4(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 q = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
  return _mm_add_ps(_mm256_castps256_ps128(q), _mm256_extractf128_ps(q, 1));
}

// What one tile needs besides its template shape.
struct TileArgs {
  float* out;         // out[i0, j0]; rows n apart
  int n;
  bool accumulate;    // add to out (a later k block) or store (the first)
  const float* xp;    // prepared x row i0 at the block's first k; rows ldx apart
  int ldx;
  const float* wp;    // the widened panel (rows kPanelLd apart)
  int len8;           // k values in the block, rounded up to 8
};

// out[r, c] (+)= sum over p < len8 of xp[r, p] * wp[c, p] for r < R, c < C: per 8 k, C weight
// loads, R x loads and R x C FMAs into as many accumulators.
template <int R, int C>
void tile(const TileArgs& a) {
  __m256 acc[R][C];
  const float* xr[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    xr[r] = a.xp + std::size_t(r) * a.ldx;
#pragma GCC unroll 3
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  for (int p = 0; p < a.len8; p += 8) {
    __m256 wv[C];
#pragma GCC unroll 3
    for (int c = 0; c < C; ++c) wv[c] = _mm256_load_ps(a.wp + c * kPanelLd + p);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(xr[r] + p);
#pragma GCC unroll 3
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 3
  for (int c = 0; c < C; ++c) {
    __m256 col[kRows];  // rows past R: zero (each lane's sum reads only its own vector)
    for (int r = 0; r < kRows; ++r) col[r] = r < R ? acc[r < R ? r : 0][c] : _mm256_setzero_ps();
    alignas(16) float s[4];
    _mm_store_ps(s, sum4(col[0], col[1], col[2], col[3]));
    for (int r = 0; r < R; ++r) {
      float& o = a.out[std::size_t(r) * a.n + c];
      o = a.accumulate ? o + s[r] : s[r];
    }
  }
}

using TileFn = void (*)(const TileArgs&);

template <int R>
constexpr TileFn tile_for_cols(int cols) {
  return cols == 1 ? tile<R, 1> : cols == 2 ? tile<R, 2> : tile<R, 3>;
}

// The tile of `rows` x `cols` (1..kRows, 1..kCols).
TileFn tile_for(int rows, int cols) {
  switch (rows) {
    case 1: return tile_for_cols<1>(cols);
    case 2: return tile_for_cols<2>(cols);
    case 3: return tile_for_cols<3>(cols);
    default: return tile_for_cols<4>(cols);
  }
}

// This thread's panels [g0, g1) of kCols weight rows, k block after k block: each panel's
// block widened once into an L1-sized buffer, then multiplied by every 4-row tile of x; the
// next panel's block is prefetched meanwhile (its rows are 1-2 KB strips, too short for the
// hardware prefetcher to ramp up on).
template <bool kBf16>
void panels(float* out, const float* xp, int ldx, const std::uint16_t* w, int m, int n, int k,
            int g0, int g1) {
  alignas(64) float panel[kCols * kPanelLd];
  const std::size_t kz = std::size_t(k);
  for (int p0 = 0; p0 < k; p0 += kGemmBlockK) {
    const int p1 = std::min(k, p0 + kGemmBlockK), len8 = (p1 - p0 + 7) / 8 * 8;
    for (int g = g0; g < g1; ++g) {
      const int j = g * kCols, cols = std::min(kCols, n - j);
      const std::uint16_t* wj = w + std::size_t(j) * kz;
      widen_panel<kBf16>(panel, wj, kz, cols, p0, p1);
      if (g + 1 < g1)
        for (int c = 0; c < kCols; ++c)
          for (int p = p0; p < p1; p += 32) _mm_prefetch(wj + (kCols + c) * kz + p, _MM_HINT_T0);
      for (int i = 0; i < m; i += kRows) {
        const int rows = std::min(kRows, m - i);
        const TileArgs args{out + std::size_t(i) * n + j, n,   p0 > 0,
                            xp + std::size_t(i) * ldx + p0, ldx, panel, len8};
        tile_for(rows, cols)(args);
      }
    }
  }
}

template <bool kBf16>
void run(float* out, const float* x, int lda, const std::uint16_t* w, int m, int n, int k) {
  const int kp = (k + 7) / 8 * 8;
  // Rows one cache line longer than kp: with k a multiple of 1024 (TinyLlama's 2048), rows
  // kp apart would start at the same offset in every 4 KB and compete for one L1 set (and a
  // few L2 sets) with each other and with the weight rows.
  const int ldx = kp + 16;
  // Thread-local so the block is reused across calls (a fresh one this size would come from
  // mmap and fault its pages in on every call).
  thread_local std::vector<float> xp_buffer;
  xp_buffer.resize(std::size_t(m) * ldx);
  float* xp = xp_buffer.data();
  const int n_panels = (n + kCols - 1) / kCols;
#pragma omp parallel if (static_cast<long>(m) * n * k > (1L << 20))
  {
#pragma omp for schedule(static)
    for (int i = 0; i < m; ++i) {
      if constexpr (kBf16)
        prepare_bf16(xp + std::size_t(i) * ldx, x + std::size_t(i) * lda, k, kp);
      else
        prepare_fp16(xp + std::size_t(i) * ldx, x + std::size_t(i) * lda, k, kp);
    }
    // (the implicit barrier above: every x row is ready)
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
    const int g0 = int(long(n_panels) * t / threads), g1 = int(long(n_panels) * (t + 1) / threads);
    panels<kBf16>(out, xp, ldx, w, m, n, k, g0, g1);
  }
}

}  // namespace

void gemm_half(float* out, const float* x, int lda, const std::uint16_t* w, DType dtype, int m,
               int n, int k) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill(out, out + std::size_t(m) * n, 0.0f);
    return;
  }
  if (dtype == DType::kBf16)
    run<true>(out, x, lda, w, m, n, k);
  else
    run<false>(out, x, lda, w, m, n, k);
}

}  // namespace llmbench::cpu::avx2
