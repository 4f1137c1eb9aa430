// AVX-512 weight-streaming matmul kernels (see matmul_avx512.h). This file alone is compiled
// with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 -mf16c -mfma
// (kernels/CMakeLists.txt); nothing here runs unless cpu_isa() found those features.
// Weights: fp32 loaded as is; bf16 fed to vdpbf16ps as pairs (no widening at all: the
// instruction multiplies bf16 pairs exactly and adds them into fp32 lanes); fp16 widened in
// registers by vcvtph2ps and multiplied in fp32 FMAs. Activations are converted once per op by
// the caller (bf16 bits for vdpbf16ps, fp16-rounded fp32 values for the fp16 kernel).
#include "kernels/cpu/matmul_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include <omp.h>

#include "kernels/common/half.h"

namespace llmbench::cpu::avx512 {

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

// out[r, c] = x_r . w_c for r < R, c < C (out rows ldo apart, x rows ldx apart, w rows k
// apart). R*C accumulators live in registers for the whole k; each output is reduced alone, by
// the same instruction sequence whatever R and C are.
template <class Op, int R, int C>
void tile(float* out, int ldo, const typename Op::X* x, int ldx, const typename Op::W* w, int k) {
  __m512 acc[R][C];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  const int k_full = k / Op::kStep * Op::kStep;
  for (int p = 0; p < k_full; p += Op::kStep) {
    typename Op::Wv wv[C];
#pragma GCC unroll 32
    for (int c = 0; c < C; ++c) wv[c] = Op::w(w + static_cast<std::size_t>(c) * k + p);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const typename Op::Xv xv = Op::x(x + static_cast<std::size_t>(r) * ldx + p);
#pragma GCC unroll 32
      for (int c = 0; c < C; ++c) acc[r][c] = Op::madd(acc[r][c], xv, wv[c]);
    }
  }
  if (k_full < k) {
    const int rem = k - k_full;
    typename Op::Wv wv[C];
#pragma GCC unroll 32
    for (int c = 0; c < C; ++c) wv[c] = Op::w_tail(w + static_cast<std::size_t>(c) * k + k_full, rem);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const typename Op::Xv xv = Op::x_tail(x + static_cast<std::size_t>(r) * ldx + k_full, rem);
#pragma GCC unroll 32
      for (int c = 0; c < C; ++c) acc[r][c] = Op::madd(acc[r][c], xv, wv[c]);
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
    for (int c = 0; c < C; ++c) out[static_cast<std::size_t>(r) * ldo + c] = _mm512_reduce_add_ps(acc[r][c]);
}

template <class Op>
using TileFn = void (*)(float*, int, const typename Op::X*, int, const typename Op::W*, int);

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
// multiply-adds); kGroupCols weight rows (a few tens of KB) are swept by every row block before
// the next group, so they are read from memory once and from L1/L2 after that.
constexpr int kRows = 4;
constexpr int kCols = 4;
constexpr int kGroupCols = 16;

template <class Op>
void run(float* out, const typename Op::X* x, int ldx, const typename Op::W* w, int m, int n,
         int k) {
  static constexpr TileTable<Op, kRows, kCols> tiles;
  const int n_groups = (n + kGroupCols - 1) / kGroupCols;
  const bool parallel = static_cast<long>(n) * k > (1 << 15);
  // Static schedule: each thread streams one contiguous slice of the weight matrix.
#pragma omp parallel for schedule(static) if (parallel)
  for (int g = 0; g < n_groups; ++g) {
    const int j0 = g * kGroupCols, j1 = std::min(n, j0 + kGroupCols);
    for (int i = 0; i < m; i += kRows) {
      const int r = std::min(kRows, m - i);
      for (int j = j0; j < j1; j += kCols) {
        const int c = std::min(kCols, j1 - j);
        tiles.fn[r - 1][c - 1](out + static_cast<std::size_t>(i) * n + j, n,
                               x + static_cast<std::size_t>(i) * ldx, ldx,
                               w + static_cast<std::size_t>(j) * k, k);
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

float read_sum_f32(const float* data, std::int64_t n, int prefetch_bytes) {
  float total = 0.0f;
#pragma omp parallel reduction(+ : total)
  {
    // This thread's contiguous chunk in whole 512-byte steps (eight 64-byte lines, one per
    // independent accumulator); the few floats past the last whole step are summed by thread 0.
    const std::int64_t steps = n / 128, nt = omp_get_num_threads(), t = omp_get_thread_num();
    const std::int64_t s0 = steps * t / nt, s1 = steps * (t + 1) / nt;
    __m512 a[8];
    for (auto& v : a) v = _mm512_setzero_ps();
    const std::int64_t pf = prefetch_bytes / 4;
    for (std::int64_t s = s0; s < s1; ++s) {
      const float* p = data + s * 128;
      if (pf > 0) {
        _mm_prefetch(reinterpret_cast<const char*>(p + pf), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(p + pf + 64), _MM_HINT_T0);
      }
#pragma GCC unroll 8
      for (int u = 0; u < 8; ++u) a[u] = _mm512_add_ps(a[u], _mm512_loadu_ps(p + 16 * u));
    }
    __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])),
                               _mm512_add_ps(_mm512_add_ps(a[4], a[5]), _mm512_add_ps(a[6], a[7])));
    total += _mm512_reduce_add_ps(sum);
    if (t == 0)
      for (std::int64_t i = steps * 128; i < n; ++i) total += data[i];
  }
  return total;
}

}  // namespace llmbench::cpu::avx512
