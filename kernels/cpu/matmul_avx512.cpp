// AVX-512 weight-streaming matmul kernels (see matmul_avx512.h). This file alone is compiled
// with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 -mf16c -mfma
// (kernels/CMakeLists.txt); nothing here runs unless cpu_isa() found those features.
// Weights: fp32 loaded as is; bf16 fed to vdpbf16ps as pairs (no widening at all: the
// instruction multiplies bf16 pairs exactly and adds them into fp32 lanes); fp16 widened in
// registers by vcvtph2ps and multiplied in fp32 FMAs. Activations are converted once per op by
// the caller (bf16 bits for vdpbf16ps, fp16-rounded fp32 values for the fp16 kernel).
#include "kernels/cpu/matmul_avx512.h"

#include "kernels/cpu/avx512_intrinsics.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include <omp.h>

#include "kernels/common/half.h"
#include "kernels/cpu/panel_schedule.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

namespace {

__mmask16 mask16(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
__mmask32 mask32(int n) { return static_cast<__mmask32>((1ull << n) - 1u); }

// What a kernel needs to know about its dtype: how many k elements one vector step covers, how
// to load weights and activations (whole vectors, or the first `rem` elements with zeros
// after them), and the multiply-add.
struct F32 {
  using X = float;
  using W = float;
  using Wv = __m512;
  using Xv = __m512;
  static constexpr int kStep = 16;
  static Wv w(const W* p) { return _mm512_loadu_ps(p); }
  static Wv w_tail(const W* p, int rem) { return _mm512_maskz_loadu_ps(mask16(rem), p); }
  static Xv x(const X* p) { return _mm512_loadu_ps(p); }
  static Xv x_tail(const X* p, int rem) { return _mm512_maskz_loadu_ps(mask16(rem), p); }
  static __m512 madd(__m512 acc, Xv a, Wv b) { return _mm512_fmadd_ps(a, b, acc); }
};

struct Fp16 {
  using X = float;  // fp16-rounded values
  using W = std::uint16_t;
  using Wv = __m512;
  using Xv = __m512;
  static constexpr int kStep = 16;
  static Wv w(const W* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static Wv w_tail(const W* p, int rem) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask16(rem), p));
  }
  static Xv x(const X* p) { return _mm512_loadu_ps(p); }
  static Xv x_tail(const X* p, int rem) { return _mm512_maskz_loadu_ps(mask16(rem), p); }
  static __m512 madd(__m512 acc, Xv a, Wv b) { return _mm512_fmadd_ps(a, b, acc); }
};

struct Bf16 {
  using X = std::uint16_t;  // bf16 bits, rows zero-padded to a multiple of 32
  using W = std::uint16_t;
  using Wv = __m512i;
  using Xv = __m512i;
  static constexpr int kStep = 32;
  static Wv w(const W* p) { return _mm512_loadu_si512(p); }
  static Wv w_tail(const W* p, int rem) { return _mm512_maskz_loadu_epi16(mask32(rem), p); }
  static Xv x(const X* p) { return _mm512_loadu_si512(p); }
  static Xv x_tail(const X* p, int) { return _mm512_loadu_si512(p); }  // padded with zeros
  static __m512 madd(__m512 acc, Xv a, Wv b) {
    return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh&>(a), reinterpret_cast<__m512bh&>(b));
  }
};

// The four sums of a0..a3 (lane c of the result is the sum of the 16 lanes of a_c), by one fixed
// tree: halves added, then pairwise horizontal adds. Each output's value depends only on its own
// accumulator, so a tile with fewer than four columns (zeros in the others) gives the same bits.
inline __m128 reduce4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  auto half_sum = [](__m512 a) {
    return _mm256_add_ps(_mm512_castps512_ps256(a),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
  };
  const __m256 t0 = _mm256_hadd_ps(half_sum(a0), half_sum(a1));
  const __m256 t1 = _mm256_hadd_ps(half_sum(a2), half_sum(a3));
  const __m256 u = _mm256_hadd_ps(t0, t1);
  return _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
}

// out[r, c] (+)= x_r[p0, p1) . w_c[p0, p1) for r < R, c < C (out rows ldo apart, x rows ldx
// apart, w rows ldw apart). R*C accumulators live in registers over the chunk; each weight
// vector is loaded once and used for all R rows. The first chunk of k writes out, later chunks
// add to it, so out[i, j] = sum over chunks (in order) of reduce4(chunk accumulator): the same
// operations in the same order whatever R, C, m or the tile's place are.
template <class Op, int R, int C>
void tile(float* out, int ldo, const typename Op::X* x, int ldx, const typename Op::W* w, int ldw,
          int p0, int p1, bool accumulate) {
  __m512 acc[R][4];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
  const int p_full = p0 + (p1 - p0) / Op::kStep * Op::kStep;
  for (int p = p0; p < p_full; p += Op::kStep) {
    typename Op::Wv wv[C];
#pragma GCC unroll 32
    for (int c = 0; c < C; ++c) wv[c] = Op::w(w + static_cast<std::size_t>(c) * ldw + p);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const typename Op::Xv xv = Op::x(x + static_cast<std::size_t>(r) * ldx + p);
#pragma GCC unroll 32
      for (int c = 0; c < C; ++c) acc[r][c] = Op::madd(acc[r][c], xv, wv[c]);
    }
  }
  if (p_full < p1) {
    const int rem = p1 - p_full;
    typename Op::Wv wv[C];
#pragma GCC unroll 32
    for (int c = 0; c < C; ++c)
      wv[c] = Op::w_tail(w + static_cast<std::size_t>(c) * ldw + p_full, rem);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const typename Op::Xv xv = Op::x_tail(x + static_cast<std::size_t>(r) * ldx + p_full, rem);
#pragma GCC unroll 32
      for (int c = 0; c < C; ++c) acc[r][c] = Op::madd(acc[r][c], xv, wv[c]);
    }
  }
  const __mmask8 cols = static_cast<__mmask8>((1u << C) - 1u);
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r) {
    float* o = out + static_cast<std::size_t>(r) * ldo;
    __m128 sum = reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
    if (accumulate) sum = _mm_add_ps(_mm_maskz_loadu_ps(cols, o), sum);
    _mm_mask_storeu_ps(o, cols, sum);
  }
}

template <class Op>
using TileFn = void (*)(float*, int, const typename Op::X*, int, const typename Op::W*, int, int,
                        int, bool);

// tiles[r - 1][c - 1] = tile<Op, r, c>, so the row and column remainders use the same code.
template <class Op, int R, int C>
struct TileTable {
  TileFn<Op> fn[R][C];
  constexpr TileTable() : fn() { fill(std::make_integer_sequence<int, R * C>{}); }
  template <int... I>
  constexpr void fill(std::integer_sequence<int, I...>) {
    ((fn[I / C][I % C] = &tile<Op, I / C + 1, I % C + 1>), ...);
  }
};

// Register tile: kRows activation rows x kCols weight rows (16 accumulators, 8 loads per 16
// multiply-adds). k is cut into chunks of kChunkBytes of weights per row (fixed, so every output
// sums its chunks the same way at every m); within a chunk a column block's weights (4 x 2 KB)
// stay in L1 while every row block of x passes them.
constexpr int kRows = 4;
constexpr int kCols = 4;
constexpr int kChunkBytes = 2048;
// Weight rows per panel (one thread's unit of work; its chunks stay in L2 across the row
// blocks) and activation rows per block.
constexpr int kPanelRows = 64;
constexpr int kRowBlock = 32;

// ---- decode: 1..kDecodeRows x rows, one sequential weight stream per thread ----
// Each output gets exactly the operations tile() gives it (per chunk of kChunkBytes: one
// accumulator over the chunk's steps and its masked tail, reduce4's lane, chunks added in
// order), so decode rows keep the bits of the same rows in a prefill product. Only the order in
// which the weights are read differs: one weight row at a time to its end, then the next, each
// thread on a contiguous run of rows handed out by PanelSchedule (panel_schedule.h, as the AVX2
// decode kernels), with a software prefetch kDecodePrefetchBytes ahead in the stream. Two
// chunks of the row run side by side (their accumulators are independent), so batch 1 has two
// multiply-add chains in flight, not one; the x rows go in groups of up to four per pass over
// the row, which is in L1 (L2 for the longest rows) for the second pass.
constexpr int kDecodeRows = 8;          // kDecodeRowsMax (decode_dispatch.h)
constexpr int kDecodeRowGroup = 4;      // x rows per pass over a weight row
constexpr int kDecodePanelRows = 16;    // weight rows per scheduled unit
// As the AVX2 kernels' measured distance (matmul_avx2.cpp); not yet measured on an AVX-512 CPU.
constexpr int kDecodePrefetchBytes = 512;

// acc[r] (+)= x_r[p0, p1) . w[p0, p1) by tile()'s steps: whole vectors, then a masked tail.
template <class Op, int R>
inline void chunk_madd(__m512 (&acc)[R], const typename Op::X* x, int ldx,
                       const typename Op::W* w, int p0, int p1) {
  const int p_full = p0 + (p1 - p0) / Op::kStep * Op::kStep;
  for (int p = p0; p < p_full; p += Op::kStep) {
    const typename Op::Wv wv = Op::w(w + p);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      acc[r] = Op::madd(acc[r], Op::x(x + static_cast<std::size_t>(r) * ldx + p), wv);
  }
  if (p_full < p1) {
    const int rem = p1 - p_full;
    const typename Op::Wv wv = Op::w_tail(w + p_full, rem);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      acc[r] = Op::madd(acc[r], Op::x_tail(x + static_cast<std::size_t>(r) * ldx + p_full, rem), wv);
  }
}

// The R (<= 4) chunk sums of acc as reduce4 gives them, added to total[r] (the running sum of
// the earlier chunks, as tile() adds a chunk to what out holds).
template <int R>
inline void add_chunk_sums(float (&total)[R], const __m512 (&acc)[R], bool first) {
  static_assert(R >= 1 && R <= 4, "reduce4 sums four accumulators");
  __m512 v[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                 _mm512_setzero_ps()};
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) v[r] = acc[r];
  alignas(16) float sums[4];
  _mm_store_ps(sums, reduce4(v[0], v[1], v[2], v[3]));
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) total[r] = first ? sums[r] : total[r] + sums[r];
}

// out[r * ldo] = x_r . w for r < R (<= 4): one weight row (k values) read from start to end.
template <class Op, int R>
void row_times_rows(float* out, int ldo, const typename Op::X* x, int ldx,
                    const typename Op::W* w, int k) {
  constexpr int kc = kChunkBytes / sizeof(typename Op::W);
  constexpr int kAhead = kDecodePrefetchBytes / static_cast<int>(sizeof(typename Op::W));
  constexpr int kLine = 64 / static_cast<int>(sizeof(typename Op::W));
  float total[R] = {};
  for (int c0 = 0; c0 < k; c0 += 2 * kc) {
    const int c1 = std::min(k, c0 + kc), c2 = std::min(k, c1 + kc);  // chunks [c0,c1), [c1,c2)
    __m512 a[R], b[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) a[r] = b[r] = _mm512_setzero_ps();
    // Both chunks' whole lines side by side (the second may be a shorter last chunk), each with
    // its prefetch; then what is left of each, tails included, by chunk_madd.
    const int both = std::min(c1 - c0, c2 - c1) / kLine * kLine;
    for (int p = 0; p < both; p += kLine) {
      _mm_prefetch(reinterpret_cast<const char*>(w + c0 + p + kAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(w + c1 + p + kAhead), _MM_HINT_T0);
      chunk_madd<Op, R>(a, x, ldx, w, c0 + p, c0 + p + kLine);
      chunk_madd<Op, R>(b, x, ldx, w, c1 + p, c1 + p + kLine);
    }
    for (int p = c0 + both; p < c1; p += kLine) {
      _mm_prefetch(reinterpret_cast<const char*>(w + p + kAhead), _MM_HINT_T0);
      chunk_madd<Op, R>(a, x, ldx, w, p, std::min(c1, p + kLine));
    }
    for (int p = c1 + both; p < c2; p += kLine)
      chunk_madd<Op, R>(b, x, ldx, w, p, std::min(c2, p + kLine));
    add_chunk_sums<R>(total, a, c0 == 0);
    if (c1 < c2) add_chunk_sums<R>(total, b, false);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) out[static_cast<std::size_t>(r) * ldo] = total[r];
}

template <class Op>
void decode(float* out, const typename Op::X* x, int ldx, const typename Op::W* w, int m, int n,
            int k) {
  const int n_panels = (n + kDecodePanelRows - 1) / kDecodePanelRows;
  PanelSchedule schedule(n_panels, omp_get_max_threads());
#pragma omp parallel if (static_cast<long>(n) * k > (1 << 15))
  schedule.run(omp_get_thread_num(), [&](int g) {
    const int j1 = std::min(n, (g + 1) * kDecodePanelRows);
    for (int j = g * kDecodePanelRows; j < j1; ++j) {
      const typename Op::W* wj = w + static_cast<std::size_t>(j) * k;
      for (int i = 0; i < m; i += kDecodeRowGroup) {
        float* o = out + static_cast<std::size_t>(i) * n + j;
        const typename Op::X* xi = x + static_cast<std::size_t>(i) * ldx;
        switch (std::min(kDecodeRowGroup, m - i)) {
          case 1: row_times_rows<Op, 1>(o, n, xi, ldx, wj, k); break;
          case 2: row_times_rows<Op, 2>(o, n, xi, ldx, wj, k); break;
          case 3: row_times_rows<Op, 3>(o, n, xi, ldx, wj, k); break;
          default: row_times_rows<Op, 4>(o, n, xi, ldx, wj, k); break;
        }
      }
    }
  });
}

// ---- prefill: more rows, register tiles over a static split ----
template <class Op>
void run(float* out, const typename Op::X* x, int ldx, const typename Op::W* w, int m, int n,
         int k) {
  if (m <= kDecodeRows) return decode<Op>(out, x, ldx, w, m, n, k);
  static constexpr TileTable<Op, kRows, kCols> tiles;
  constexpr int kc = kChunkBytes / sizeof(typename Op::W);
  const int panel = kPanelRows;
  const TileFn<Op>(*fns)[kCols] = tiles.fn;
  const int n_panels = (n + panel - 1) / panel;
  const bool parallel = static_cast<long>(n) * k > (1 << 15);
  // Static schedule: each thread streams one contiguous slice of the weight matrix.
#pragma omp parallel for schedule(static) if (parallel)
  for (int g = 0; g < n_panels; ++g) {
    const int j0 = g * panel, j1 = std::min(n, j0 + panel);
    for (int i0 = 0; i0 < m; i0 += kRowBlock) {
      const int i1 = std::min(m, i0 + kRowBlock);
      for (int p0 = 0; p0 < k; p0 += kc) {
        const int p1 = std::min(k, p0 + kc);
        for (int j = j0; j < j1; j += kCols) {
          const int c = std::min(kCols, j1 - j);
          for (int i = i0; i < i1; i += kRows) {
            const int r = std::min(kRows, i1 - i);
            fns[r - 1][c - 1](out + static_cast<std::size_t>(i) * n + j, n,
                                   x + static_cast<std::size_t>(i) * ldx, ldx,
                                   w + static_cast<std::size_t>(j) * k, k, p0, p1, p0 > 0);
          }
        }
      }
    }
  }
}

}  // namespace

void matmul_f32(float* out, const float* x, int lda, const float* w, int m, int n, int k) {
  run<F32>(out, x, lda, w, m, n, k);
}

void matmul_bf16(float* out, const std::uint16_t* xb, int ldx, const std::uint16_t* w, int m,
                 int n, int k) {
  run<Bf16>(out, xb, ldx, w, m, n, k);
}

void matmul_fp16(float* out, const float* xr, int ldx, const std::uint16_t* w, int m, int n,
                 int k) {
  run<Fp16>(out, xr, ldx, w, m, n, k);
}

void to_bf16_padded(std::uint16_t* dst, int ld, const float* x, int lda, int m, int k) {
#pragma omp parallel for schedule(static) if (static_cast<long>(m) * k > (1 << 18))
  for (int i = 0; i < m; ++i) {
    std::uint16_t* d = dst + static_cast<std::size_t>(i) * ld;
    const float* s = x + static_cast<std::size_t>(i) * lda;
#pragma omp simd
    for (int p = 0; p < k; ++p) d[p] = fp32_to_bf16(s[p]);
    std::fill(d + k, d + ld, std::uint16_t{0});
  }
}

void round_to_fp16_rows(float* dst, const float* x, int lda, int m, int k) {
#pragma omp parallel for schedule(static) if (static_cast<long>(m) * k > (1 << 18))
  for (int i = 0; i < m; ++i) {
    float* d = dst + static_cast<std::size_t>(i) * k;
    const float* s = x + static_cast<std::size_t>(i) * lda;
    int p = 0;
    for (; p + 16 <= k; p += 16)
      _mm512_storeu_ps(d + p, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(s + p),
                                                              _MM_FROUND_TO_NEAREST_INT)));
    if (p < k) {
      const __mmask16 mk = mask16(k - p);
      _mm512_mask_storeu_ps(d + p, mk, _mm512_cvtph_ps(_mm512_cvtps_ph(
                                           _mm512_maskz_loadu_ps(mk, s + p), _MM_FROUND_TO_NEAREST_INT)));
    }
  }
}

float read_sum_f32(const float* data, std::int64_t n, int streams, int prefetch_bytes) {
  float total = 0.0f;
  streams = std::max(1, std::min(streams, 8));
#pragma omp parallel reduction(+ : total)
  {
    // This thread's contiguous chunk of whole 512-byte steps, cut into `streams` contiguous
    // parts read side by side (one 512-byte step of each per iteration: several sequential
    // streams keep more lines in flight than one, since the hardware prefetchers stop at 4 KiB
    // page boundaries). Eight accumulators per stream step; the floats past the last whole
    // step of the buffer are summed by thread 0.
    const std::int64_t steps = n / 128, nt = omp_get_num_threads(), t = omp_get_thread_num();
    const std::int64_t s0 = steps * t / nt, s1 = steps * (t + 1) / nt;
    const std::int64_t per = (s1 - s0) / streams;
    __m512 a[8];
    for (auto& v : a) v = _mm512_setzero_ps();
    const std::int64_t pf = prefetch_bytes / 4;
    for (std::int64_t s = 0; s < per; ++s) {
      for (int q = 0; q < streams; ++q) {
        const float* p = data + (s0 + q * per + s) * 128;
        if (pf > 0) {
          for (int l = 0; l < 8; ++l)
            _mm_prefetch(reinterpret_cast<const char*>(p + pf + 16 * l), _MM_HINT_T0);
        }
#pragma GCC unroll 8
        for (int u = 0; u < 8; ++u) a[u] = _mm512_add_ps(a[u], _mm512_loadu_ps(p + 16 * u));
      }
    }
    // Steps left over when the chunk does not divide by `streams`.
    for (std::int64_t s = s0 + per * streams; s < s1; ++s)
#pragma GCC unroll 8
      for (int u = 0; u < 8; ++u) a[u] = _mm512_add_ps(a[u], _mm512_loadu_ps(data + s * 128 + 16 * u));
    __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])),
                               _mm512_add_ps(_mm512_add_ps(a[4], a[5]), _mm512_add_ps(a[6], a[7])));
    total += _mm512_reduce_add_ps(sum);
    if (t == 0)
      for (std::int64_t i = steps * 128; i < n; ++i) total += data[i];
  }
  return total;
}

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
