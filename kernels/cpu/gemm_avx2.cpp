// AVX2 GEMM for bf16, fp16 and fp32 weights at prefill and batched-decode row counts (see
// gemm_avx2.h). This file alone is compiled with -mavx2 -mfma -mf16c
// (kernels/CMakeLists.txt); nothing here runs unless cpu_isa() found those features.
//
// The work, in the outer-product form (as OpenBLAS's sgemm and llamafile's tinyBLAS tiles),
// one template over the weight type (Bf16Weights, Fp16Weights, Fp32Weights below: how a row of
// x is prepared and how 8 weights become 8 fp32 lanes; everything else is shared):
//   x      rounded to the weight dtype (16-bit weights; fp32 copies it) once per call and
//          packed k-major, 16 rows a tile: xt[p][0:16] holds column p of 16 x rows (zero past
//          the last row), so one k step of a tile is two 8-lane loads.
//   block  k in kGemmBlockK pieces. Each 6-row weight panel's block is widened (fp32: copied)
//          once into a 12 KB fp32 buffer in L1 (the next block prefetched), then every x tile
//          passes over it; the weights are read from memory once per call (once per kChunkRows
//          x rows).
//          Few x rows (up to 512 KB): panel after panel, each over all of k (the weights one
//          contiguous stream, x in L2); more: block after block, each over all the thread's
//          panels (the x block, rows x 512 fp32, 256 KB at 128 rows, stays in L2).
//   tile   16 x rows by 6 weight rows: 12 fp32 accumulators (lanes are x rows), 2 x vectors,
//          1 broadcast weight; per k step 2 x loads, 6 broadcasts and 12 FMAs. Between k
//          blocks the accumulators wait in a per-thread buffer, so every output is one fp32
//          FMA chain over k in order: the same operations whatever m is and whichever tile
//          shape (edge tiles: 8 rows, fewer weight rows) computed it.
//   threads one parallel region per call: x tiles packed under `omp for`, then each thread
//          takes a contiguous range of weight panels (its own columns of out); panel by panel
//          a thread done early takes half of what the other has left (panel_schedule.h).
// Widening: bf16 8 weights by vpmovzxwd and a 16-bit shift, fp16 by vcvtph2ps, fp32 a load.
#include "kernels/cpu/gemm_avx2.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/panel_schedule.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr int kTileRows = 16;   // x rows per tile: two 8-lane vectors
constexpr int kPanelCols = 6;   // weight rows per panel
constexpr int kTileOut = kTileRows * kPanelCols;  // one tile's accumulators, in floats
// Floats between the widened panel's rows: a block plus one cache line, so the six rows do not
// start at the same offset in 4 KB (one L1 set).
constexpr int kPanelLd = kGemmBlockK + 16;
// x rows per pass over the weights: the x block of a pass (256 x 512 fp32, 512 KB) stays in
// the 1 MB L2; more rows are done in passes, each reading the weights again.
constexpr int kChunkRows = 256;

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

// One x row for bf16 weights: rounded to bf16 values.
void prepare_bf16(float* dst, const float* x, int k) {
  int p = 0;
  for (; p + 8 <= k; p += 8) _mm256_storeu_ps(dst + p, to_bf16_value(_mm256_loadu_ps(x + p)));
  for (; p < k; ++p) dst[p] = bf16_to_fp32(fp32_to_bf16(x[p]));
}

// One x row for fp16 weights: rounded to fp16 values (vcvtps2ph rounds to nearest even and
// keeps NaNs quiet, as fp32_to_fp16 does).
void prepare_fp16(float* dst, const float* x, int k) {
  int p = 0;
  for (; p + 8 <= k; p += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + p), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(dst + p, _mm256_cvtph_ps(h));
  }
  for (; p < k; ++p) dst[p] = fp16_to_fp32(fp32_to_fp16(x[p]));
}

// The weight types: T as stored, prepare() one x row (rounded to what T can hold), load8() 8
// weights at w as fp32 lanes.
struct Bf16Weights {
  using T = std::uint16_t;
  static constexpr bool kInPlace = false;  // whether T is fp32, which a tile can read in place
  static void prepare(float* dst, const float* x, int k) { prepare_bf16(dst, x, k); }
  // Zero-extended to 32 bits and shifted into the top half.
  static __m256 load8(const T* w) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};
struct Fp16Weights {
  using T = std::uint16_t;
  static constexpr bool kInPlace = false;
  static void prepare(float* dst, const float* x, int k) { prepare_fp16(dst, x, k); }
  static __m256 load8(const T* w) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  }
};
struct Fp32Weights {
  using T = float;
  static constexpr bool kInPlace = true;
  static void prepare(float* dst, const float* x, int k) {
    std::memcpy(dst, x, std::size_t(k) * sizeof(float));
  }
  static __m256 load8(const T* w) { return _mm256_loadu_ps(w); }
};

// One tile of x: `rows` rows (lda apart) prepared and transposed, xt[p * 16 + r] for p < k;
// zero for r >= rows. `row` is a k-float scratch row.
template <class W>
void pack_tile(float* xt, const float* x, int lda, int rows, int k, float* row) {
  for (int r = 0; r < kTileRows; ++r) {
    if (r < rows) {
      W::prepare(row, x + std::size_t(r) * lda, k);
      for (int p = 0; p < k; ++p) xt[std::size_t(p) * kTileRows + r] = row[p];
    } else {
      for (int p = 0; p < k; ++p) xt[std::size_t(p) * kTileRows + r] = 0.0f;
    }
  }
}

// One panel's k block as fp32: dst[c, 0:len] = widen(w[c, p0:p0 + len]) for c < cols (rows
// kPanelLd apart; the last partial 8 through a zero-padded copy).
template <class W>
void widen_panel(float* dst, const typename W::T* w, std::size_t k, int cols, int p0, int len) {
  using T = typename W::T;
  const int full = len / 8 * 8;
  for (int c = 0; c < cols; ++c) {
    const T* wc = w + c * k + p0;
    float* d = dst + c * kPanelLd;
    for (int p = 0; p < full; p += 8) _mm256_store_ps(d + p, W::load8(wc + p));
    if (full < len) {
      alignas(32) T tail[8] = {};
      std::memcpy(tail, wc + full, std::size_t(len - full) * sizeof(T));
      _mm256_store_ps(d + full, W::load8(tail));
    }
  }
}

// Cache lines to prefetch while a tile computes: `rows` strips of `lines` 64-byte lines, the
// strips `stride` bytes apart from `base` (rows 0: none).
struct Strips {
  const char* base = nullptr;
  std::size_t stride = 0;
  int lines = 0, rows = 0;
  void fetch(int i) const {
    _mm_prefetch(base + std::size_t(i / lines) * stride + std::size_t(i % lines) * 64,
                 _MM_HINT_T0);
  }
};

// acc[c * 16 + r] (+)= sum over p < len, in order, of xt[p * 16 + r] * wp[c * ldw + p]
// for r < 8 V, c < C, one FMA per term; `resume`: acc holds the earlier blocks' sums (else
// the chain starts at zero). The lines of `pf` are prefetched a few every 8 k steps, not in one
// burst: a burst of 100-200 prefetches fills the core's miss buffers and stalls the loads of
// the FMA loop behind them.
template <int V, int C>
void tile(const float* xt, const float* wp, std::size_t ldw, int len, float* acc, bool resume,
          const Strips& pf) {
  __m256 a[C][V];
#pragma GCC unroll 6
  for (int c = 0; c < C; ++c)
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v)
      a[c][v] = resume ? _mm256_load_ps(acc + c * kTileRows + 8 * v) : _mm256_setzero_ps();
  const int pf_total = pf.rows * pf.lines;
  const int pf_per8 = (pf_total * 8 + len - 1) / len;  // lines per 8 k steps
  int pf_next = 0;
  for (int p8 = 0; p8 < len; p8 += 8) {
    for (int q = 0; q < pf_per8 && pf_next < pf_total; ++q) pf.fetch(pf_next++);
    const int p_end = std::min(len, p8 + 8);
#pragma GCC unroll 2
    for (int p = p8; p < p_end; ++p) {
      __m256 xv[V];
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v)
        xv[v] = _mm256_load_ps(xt + std::size_t(p) * kTileRows + 8 * v);
#pragma GCC unroll 6
      for (int c = 0; c < C; ++c) {
        const __m256 b = _mm256_broadcast_ss(wp + c * ldw + p);
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) a[c][v] = _mm256_fmadd_ps(xv[v], b, a[c][v]);
      }
    }
  }
#pragma GCC unroll 6
  for (int c = 0; c < C; ++c)
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) _mm256_store_ps(acc + c * kTileRows + 8 * v, a[c][v]);
}

using TileFn = void (*)(const float*, const float*, std::size_t, int, float*, bool,
                       const Strips&);

template <int V>
constexpr TileFn tile_for_cols(int cols) {
  switch (cols) {
    case 1: return tile<V, 1>;
    case 2: return tile<V, 2>;
    case 3: return tile<V, 3>;
    case 4: return tile<V, 4>;
    case 5: return tile<V, 5>;
    default: return tile<V, 6>;
  }
}

// The tile for `rows` x rows (1..16: one vector up to 8) and `cols` weight rows (1..6).
TileFn tile_for(int rows, int cols) {
  return rows <= 8 ? tile_for_cols<1>(cols) : tile_for_cols<2>(cols);
}

// A finished tile's accumulators into out[r, c] (rows n apart).
void store_tile(float* out, int n, const float* acc, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[std::size_t(r) * n + c] = acc[c * kTileRows + r];
}

// One pass of a thread: its panels [g0, g1) against `m` packed x rows (xt: tiles k * 16
// floats apart), accumulators in `accs` (one kTileOut block per panel and tile).
template <class W>
struct Pass {
  float* out;  // rows n apart
  const float* xt;
  const typename W::T* w;
  int m, n, k, g0, g1;
  float* accs;
};

// The weights (the rows of panel g, k values [p0, p0 + kGemmBlockK)) to prefetch while the
// current block computes: strips of 1 KB (fp32: 2 KB) in rows 4 KB or more apart, too short
// for the hardware prefetcher to ramp up on. None past the thread's panels or k.
template <class W>
Strips block_strips(const Pass<W>& a, int g, int p0) {
  if (g >= a.g1 || p0 >= a.k) return {};
  using T = typename W::T;
  const int j = g * kPanelCols, len = std::min(kGemmBlockK, a.k - p0);
  return Strips{reinterpret_cast<const char*>(a.w + std::size_t(j) * a.k + p0),
                std::size_t(a.k) * sizeof(T), int((std::size_t(len) * sizeof(T) + 63) / 64),
                std::min(kPanelCols, a.n - j)};
}

// Panel g's k block at p0: widened once into `panel` (L1), the block after it (next_g,
// next_p0) prefetched, then multiplied by every x tile; after k's last block the tiles'
// accumulators go to out.
template <class W>
void panel_block(const Pass<W>& a, float* panel, int g, int p0, int next_g, int next_p0) {
  const int len = std::min(kGemmBlockK, a.k - p0), tiles = (a.m + kTileRows - 1) / kTileRows;
  const int j = g * kPanelCols, cols = std::min(kPanelCols, a.n - j);
  const float* wp = panel;
  std::size_t ldw = kPanelLd;
  if constexpr (W::kInPlace) {
    // fp32 weights and one x tile: each weight is used once, so the tile reads them where they
    // are (a copy into L1 cost more than it saved: bench_kernels at 16 rows).
    if (tiles == 1) wp = a.w + std::size_t(j) * a.k + p0, ldw = std::size_t(a.k);
  }
  if (wp == panel)
    widen_panel<W>(panel, a.w + std::size_t(j) * a.k, std::size_t(a.k), cols, p0, len);
  const Strips next = block_strips(a, next_g, next_p0), none;
  for (int t = 0; t < tiles; ++t) {
    const int i = t * kTileRows, rows = std::min(kTileRows, a.m - i);
    float* acc = a.accs + (std::size_t(g - a.g0) * tiles + t) * kTileOut;
    tile_for(rows, cols)(a.xt + (std::size_t(t) * a.k + p0) * kTileRows, wp, ldw, len, acc, p0 > 0,
                         t == 0 ? next : none);
    if (p0 + len == a.k) store_tile(a.out + std::size_t(i) * a.n + j, a.n, acc, rows, cols);
  }
}

// x bytes up to which a pass goes panel by panel (each panel's whole k, then the next: the
// weights are read as one contiguous stream, and the x rows stay in L2 as the k blocks go by);
// beyond, block by block (every panel's k block, then the next block: only the x block need
// stay in L2). The order changes no result: each output's FMA chain is the same.
constexpr std::size_t kPanelMajorXBytes = 512 * 1024;

bool panel_major(int m, int k) { return std::size_t(m) * k * sizeof(float) <= kPanelMajorXBytes; }

// One pass: every (panel, k block) of the thread in one of the two orders above. Panel by
// panel with a `schedule` (a call of one pass), the panels come from it (thread `self`: its
// own contiguous share first, then halves of what another thread has left, panel_schedule.h;
// one panel's accumulators at a time); otherwise the thread's static share [a.g0, a.g1).
template <class W>
void panels(const Pass<W>& a, PanelSchedule* schedule, int self) {
  alignas(64) float panel[kPanelCols * kPanelLd];
  const auto whole_panel = [&](const Pass<W>& b, int g) {
    for (int p0 = 0; p0 < b.k; p0 += kGemmBlockK) {
      const bool more_k = p0 + kGemmBlockK < b.k;
      panel_block<W>(b, panel, g, p0, more_k ? g : g + 1, more_k ? p0 + kGemmBlockK : 0);
    }
  };
  if (panel_major(a.m, a.k) && schedule == nullptr) {
    for (int g = a.g0; g < a.g1; ++g) whole_panel(a, g);
  } else if (panel_major(a.m, a.k)) {
    schedule->run(self, [&](int g) {
      Pass<W> one = a;  // accumulators at slot 0; the next panel prefetched
      one.g0 = g, one.g1 = std::min(g + 2, (a.n + kPanelCols - 1) / kPanelCols);
      whole_panel(one, g);
    });
  } else {
    for (int p0 = 0; p0 < a.k; p0 += kGemmBlockK)
      for (int g = a.g0; g < a.g1; ++g) {
        const bool more_g = g + 1 < a.g1;
        panel_block<W>(a, panel, g, p0, more_g ? g + 1 : a.g0,
                           more_g ? p0 : p0 + kGemmBlockK);
      }
  }
}

// Buffers reused across calls (fresh ones this size would come from mmap and fault their pages
// in on every call): the packed x tiles (shared by the threads) and, per thread, one scratch
// row and the accumulators of its tiles.
std::vector<float>& aligned_resize(std::vector<float>& v, std::size_t floats) {
  v.resize(floats + 16);
  return v;
}
float* aligned64(std::vector<float>& v) {
  const auto a = reinterpret_cast<std::uintptr_t>(v.data());
  return reinterpret_cast<float*>((a + 63) / 64 * 64);
}

template <class W>
void run(float* out, const float* x, int lda, const typename W::T* w, int m, int n, int k) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill(out, out + std::size_t(m) * n, 0.0f);
    return;
  }
  const int chunk_max = std::min(m, kChunkRows);
  const int tiles_max = (chunk_max + kTileRows - 1) / kTileRows;
  thread_local std::vector<float> xt_buffer;
  float* xt = aligned64(aligned_resize(xt_buffer, std::size_t(tiles_max) * k * kTileRows));
  const int n_panels = (n + kPanelCols - 1) / kPanelCols;
  // Panel-major calls (one pass) share their panels at run time: on a VM whose vCPUs are shared
  // one thread is often slowed for part of a matrix, and the other would wait at the barrier.
  std::optional<PanelSchedule> schedule;
  if (m <= kChunkRows && panel_major(m, k)) schedule.emplace(n_panels, omp_get_max_threads());
#pragma omp parallel if (static_cast<long>(m) * n * k > (1L << 20))
  {
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
    const int g0 = int(long(n_panels) * t / threads), g1 = int(long(n_panels) * (t + 1) / threads);
    thread_local std::vector<float> row, accs;
    row.resize(std::size_t(k));
    const std::size_t acc_panels = std::size_t(std::max(g1 - g0, 1));
    float* acc = aligned64(aligned_resize(accs, acc_panels * tiles_max * kTileOut));
    for (int i0 = 0; i0 < m; i0 += kChunkRows) {
      const int rows = std::min(kChunkRows, m - i0), tiles = (rows + kTileRows - 1) / kTileRows;
#pragma omp for schedule(static)
      for (int tt = 0; tt < tiles; ++tt) {
        const int r0 = tt * kTileRows;
        pack_tile<W>(xt + std::size_t(tt) * k * kTileRows, x + std::size_t(i0 + r0) * lda,
                         lda, std::min(kTileRows, rows - r0), k, row.data());
      }
      // (the implicit barrier above: every x tile is ready)
      panels<W>(Pass<W>{out + std::size_t(i0) * n, xt, w, rows, n, k, g0, g1, acc},
                schedule ? &*schedule : nullptr, t);
#pragma omp barrier
    }
  }
}

}  // namespace

void gemm_half(float* out, const float* x, int lda, const std::uint16_t* w, DType dtype, int m,
               int n, int k) {
  if (dtype == DType::kBf16)
    run<Bf16Weights>(out, x, lda, w, m, n, k);
  else
    run<Fp16Weights>(out, x, lda, w, m, n, k);
}

void gemm_f32(float* out, const float* x, int lda, const float* w, int m, int n, int k) {
  run<Fp32Weights>(out, x, lda, w, m, n, k);
}

}  // namespace llmbench::cpu::avx2
