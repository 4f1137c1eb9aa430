// AVX2 decode kernels for fp32, bf16 and fp16 weights (see matmul_avx2.h). This file alone is
// compiled with -mavx2 -mfma -mf16c (kernels/CMakeLists.txt); nothing here runs unless
// cpu_isa() found those features.
//
// How the weights are walked (measured with a model-sized sequence of matrices, each read once
// per step as in decode, tinyllama-1.1b bf16 and `small`; docs/case-studies/cpu-decode-vs-llama-cpp.md "Against llama.cpp"):
// one weight row at a time, to its end, then the next row, so each thread reads one sequential
// stream (its contiguous half of the matrix, then back halves of what the other has left:
// panel_schedule.h), with a software prefetch kPrefetchBytes ahead in that stream. The previous
// shape, tiles of four weight rows read side by side, kept four streams per thread that each
// ended after one row (1.5-4 KB in bf16): the hardware prefetcher restarted on every tile and
// the 16-bit weights streamed at 0.6-0.8 of the read test. The exception is one fp32 x row too
// long for the L1 beside the stream (panel()): there three adjacent rows are read side by side,
// each 22.5 KiB long, so the streams are long.
#include "kernels/cpu/matmul_avx2.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/panel_schedule.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr int kAcc = 4;             // fp32 vector accumulators per output
constexpr int kStep = 8 * kAcc;     // k values per step: one 8-lane slice per accumulator
constexpr int kPanelCols = 16;      // weight rows (output columns) per thread work unit
constexpr int kPrefetchBytes = 512;  // software prefetch distance in the weight stream
// Past this many bytes an x row and the weight stream crowd the 32 KiB L1: x rows are held as
// 16-bit values (bf16/fp16 weights, 1-2 rows; see run_half()), and one x row meets the weight
// rows three at a time (see panel()).
constexpr int kX32MaxBytes = 16 << 10;

enum class Kind { kF32, kBf16, kFp16 };
template <Kind K>
using Elem = std::conditional_t<K == Kind::kF32, float, std::uint16_t>;

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

// One x row rounded to bf16 values, zero-padded to kp (a multiple of kStep), each group of 16
// in split order: the 8 even-indexed values, then the 8 odd-indexed ones.
void prepare_bf16(float* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + 16 <= k; p += 16) {
    const __m256 a = round_bf16(_mm256_loadu_ps(x + p)), b = round_bf16(_mm256_loadu_ps(x + p + 8));
    // shuffle: [a0 a2 b0 b2 | a4 a6 b4 b6]; the 64-bit permute puts the pairs in k order.
    const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 odd = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_storeu_ps(dst + p, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8)));
    _mm256_storeu_ps(dst + p + 8,
                     _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odd), 0xD8)));
  }
  for (int g = p; g < kp; g += 16)
    for (int j = 0; j < 16; ++j)
      dst[g + (j & 1) * 8 + j / 2] = g + j < k ? bf16_to_fp32(fp32_to_bf16(x[g + j])) : 0.0f;
}

// One x row rounded to fp16 values (held as fp32), zero-padded to kp.
void prepare_fp16(float* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + 8 <= k; p += 8)
    _mm256_storeu_ps(dst + p, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + p),
                                                              _MM_FROUND_TO_NEAREST_INT)));
  for (; p < kp; ++p) dst[p] = p < k ? fp16_to_fp32(fp32_to_fp16(x[p])) : 0.0f;
}

// One x row as it is, zero-padded to kp.
void prepare_f32(float* dst, const float* x, int k, int kp) {
  std::memcpy(dst, x, std::size_t(k) * sizeof(float));
  std::fill(dst + k, dst + kp, 0.0f);
}

// One x row as bf16 (fp32_to_bf16 of each value: round_bf16's high halves), in k order,
// zero-padded to kp: loaded like the weights, its even/odd split is prepare_bf16's order.
void prepare_bf16_16(std::uint16_t* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + 16 <= k; p += 16) {
    const __m256i a = _mm256_srli_epi32(_mm256_castps_si256(round_bf16(_mm256_loadu_ps(x + p))), 16);
    const __m256i b =
        _mm256_srli_epi32(_mm256_castps_si256(round_bf16(_mm256_loadu_ps(x + p + 8))), 16);
    // packus works per 128-bit lane: [a0-3 b0-3 | a4-7 b4-7]; the 64-bit permute restores order.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + p),
                        _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8));
  }
  for (; p < kp; ++p) dst[p] = p < k ? fp32_to_bf16(x[p]) : std::uint16_t(0);
}

// One x row as fp16 (the same vcvtps2ph rounding as prepare_fp16), zero-padded to kp.
void prepare_fp16_16(std::uint16_t* dst, const float* x, int k, int kp) {
  int p = 0;
  for (; p + 8 <= k; p += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + p),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + p), _MM_FROUND_TO_NEAREST_INT));
  for (; p < kp; ++p) dst[p] = p < k ? fp32_to_fp16(x[p]) : std::uint16_t(0);
}

// The kStep weights at w as four fp32 vectors matching the prepared x: fp32 as stored, bf16
// the even/odd lanes of each 16, fp16 four groups of 8 in order.
template <Kind K>
inline void load_weights(const Elem<K>* w, __m256 v[kAcc]) {
  if constexpr (K == Kind::kBf16) {
    const __m256i hi = _mm256_set1_epi32(int(0xFFFF0000u));
#pragma GCC unroll 2
    for (int h = 0; h < kAcc / 2; ++h) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * h));
      v[2 * h] = _mm256_castsi256_ps(_mm256_slli_epi32(b, 16));
      v[2 * h + 1] = _mm256_castsi256_ps(_mm256_and_si256(b, hi));
    }
  } else if constexpr (K == Kind::kFp16) {
#pragma GCC unroll 4
    for (int q = 0; q < kAcc; ++q)
      v[q] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 8 * q)));
  } else {
#pragma GCC unroll 4
    for (int q = 0; q < kAcc; ++q) v[q] = _mm256_loadu_ps(w + 8 * q);
  }
}

// The sum of a's eight lanes by one fixed tree.
inline float reduce(__m256 a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// out[r * ldo + t] = xp_r . w_t for r < R, t < T (xp rows kp apart; T weight rows w_t = w + t
// * k, adjacent in memory): four accumulators per output, summed in k order; the k tail (k %
// kStep weights) is read through a zero-padded copy, x being zero-padded already. Each x vector
// is loaded once per step for all T weight rows. Prefetching kPrefetchBytes ahead runs past a
// row's end into the next row (contiguous), which is the next one this thread reads; past the
// matrix's end it is harmless (a prefetch never faults).
// X is float (x prepared as fp32) or std::uint16_t (x prepared as 16-bit values of the weights'
// dtype, widened by the weights' own instructions: the same fp32 vectors, so the same sums).
// Every output gets the same operations in the same order whatever R and T are, so its bits do
// not depend on the tile it was computed in.
template <Kind K, int R, int T, class X>
void tile(float* out, int ldo, const X* xp, int kp, const Elem<K>* w, int k) {
  constexpr int kStepBytes = kStep * int(sizeof(Elem<K>));
  __m256 acc[R][T][kAcc];
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
    for (int t = 0; t < T; ++t)
#pragma GCC unroll 4
      for (int q = 0; q < kAcc; ++q) acc[r][t][q] = _mm256_setzero_ps();
  // wp[t]: the kStep weights of row t at this step.
  auto step = [&](const Elem<K>* const* wp, int p) {
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      __m256 xv[kAcc];
      if constexpr (std::is_same_v<X, float>) {
#pragma GCC unroll 4
        for (int q = 0; q < kAcc; ++q) xv[q] = _mm256_loadu_ps(xp + std::size_t(r) * kp + p + 8 * q);
      } else {
        load_weights<K>(xp + std::size_t(r) * kp + p, xv);
      }
#pragma GCC unroll 3
      for (int t = 0; t < T; ++t) {
        __m256 v[kAcc];
        load_weights<K>(wp[t], v);
#pragma GCC unroll 4
        for (int q = 0; q < kAcc; ++q) acc[r][t][q] = _mm256_fmadd_ps(xv[q], v[q], acc[r][t][q]);
      }
    }
  };
  const int kf = k / kStep * kStep;
  for (int p = 0; p < kf; p += kStep) {
    const Elem<K>* wp[T];
#pragma GCC unroll 3
    for (int t = 0; t < T; ++t) {
      wp[t] = w + std::size_t(t) * k + p;
      const char* ahead = reinterpret_cast<const char*>(wp[t]) + kPrefetchBytes;
#pragma GCC unroll 2
      for (int b = 0; b < kStepBytes; b += 64) _mm_prefetch(ahead + b, _MM_HINT_T0);
    }
    step(wp, p);
  }
  if (kf < k) {
    Elem<K> tail[T][kStep] = {};
    const Elem<K>* wp[T];
    for (int t = 0; t < T; ++t) {
      std::memcpy(tail[t], w + std::size_t(t) * k + kf, std::size_t(k - kf) * sizeof(Elem<K>));
      wp[t] = tail[t];
    }
    step(wp, kf);
  }
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
    for (int t = 0; t < T; ++t)
      out[std::size_t(r) * ldo + t] =
          reduce(_mm256_add_ps(_mm256_add_ps(acc[r][t][0], acc[r][t][1]),
                               _mm256_add_ps(acc[r][t][2], acc[r][t][3])));
}

// Columns [j0, j1) for every row. Several x rows: one weight row at a time, multiplied by the
// x rows in pairs (2 x 1 tiles, eight accumulators) and a last odd row alone, so the row is
// read from memory once and from L1 for the other pairs. One x row longer than kX32MaxBytes
// (fp32 down_proj, k = 5632: 22.5 KiB): weight rows three at a time (1 x 3 tiles, twelve
// accumulators), so each x vector is loaded once for three rows. One row at a time read x
// whole for every weight row; x and the weight stream overflowed the 32 KiB L1 together, x
// came back from L2 for every row, and that matrix streamed at 0.6 of the other projections'
// rate (docs/metrics.md, issue 31). In the model, down_proj's time over gate_up_proj's (0.5 at
// one rate) went from 0.83 to 0.69 with pairs and 0.66 with threes (four need 16 accumulators,
// all the AVX2 registers).
template <Kind K, class X>
void panel(float* out, int n, const X* xp, int kp, const Elem<K>* w, int m, int k, int j0,
           int j1) {
  int j = j0;
  if (m == 1 && std::size_t(k) * sizeof(X) > std::size_t(kX32MaxBytes))
    for (; j + 3 <= j1; j += 3) tile<K, 1, 3, X>(out + j, n, xp, kp, w + std::size_t(j) * k, k);
  for (; j < j1; ++j) {
    const Elem<K>* wj = w + std::size_t(j) * k;
    int i = 0;
    for (; i + 2 <= m; i += 2)
      tile<K, 2, 1, X>(out + std::size_t(i) * n + j, n, xp + std::size_t(i) * kp, kp, wj, k);
    if (i < m)
      tile<K, 1, 1, X>(out + std::size_t(i) * n + j, n, xp + std::size_t(i) * kp, kp, wj, k);
  }
}

// The prepared x rows ([m, kp], thread-local so the block is reused across calls: a fresh one
// of this size per call would come from mmap and fault its pages in every time), then every
// panel of columns.
template <Kind K, class X, class Prepare>
void run(float* out, const float* x, int lda, const Elem<K>* w, int m, int n, int k,
         Prepare prepare) {
  const int kp = (k + kStep - 1) / kStep * kStep;
  thread_local std::vector<X> xp;
  xp.resize(std::size_t(m) * kp);
  for (int i = 0; i < m; ++i) prepare(xp.data() + std::size_t(i) * kp, x + std::size_t(i) * lda, k, kp);
  const int n_panels = (n + kPanelCols - 1) / kPanelCols;
  const X* xd = xp.data();
  // Each thread streams its contiguous share of the weight matrix, then helps with the largest
  // share left (panel_schedule.h), so no thread waits at the barrier while another streams.
  PanelSchedule schedule(n_panels, omp_get_max_threads());
#pragma omp parallel if (static_cast<long>(n) * k > (1 << 15))
  schedule.run(omp_get_thread_num(), [&](int g) {
    panel<K, X>(out, n, xd, kp, w, m, k, g * kPanelCols, std::min(n, (g + 1) * kPanelCols));
  });
}

// 16-bit weights: x as fp32 (one load per 8 values) unless its rows would crowd the L1. Every
// x row is read once per weight row; once k * 4 bytes of x and a weight row no longer fit the
// 32 KiB L1 together (tinyllama-1.1b's down_proj, k = 5632: 22.5 KiB of x and 11 KiB of fp16
// weights), the weight stream evicts x before its next use, x comes back from L2 for every
// row, and the matrix streamed at 0.59 of the other projections' rate (docs/metrics.md, issue
// 31). Held as 16-bit values (lossless: prepare_bf16/_fp16 round x to those values anyway) the
// row is half the size, for the cost of widening it like the weights; with more than two rows
// that cost outweighs the saving. The sums are the same bits either way (tested).
template <Kind K>
void run_half(float* out, const float* x, int lda, const std::uint16_t* w, int m, int n, int k,
              void (*prepare32)(float*, const float*, int, int),
              void (*prepare16)(std::uint16_t*, const float*, int, int)) {
  if (m <= 2 && std::size_t(k) * sizeof(float) > std::size_t(kX32MaxBytes))
    run<K, std::uint16_t>(out, x, lda, w, m, n, k, prepare16);
  else
    run<K, float>(out, x, lda, w, m, n, k, prepare32);
}

}  // namespace

void matmul_f32_rows(float* out, const float* x, int lda, const float* w, int m, int n, int k) {
  if (m <= 0 || n <= 0) return;
  run<Kind::kF32, float>(out, x, lda, w, m, n, k, prepare_f32);
}

void matmul_half_rows(float* out, const float* x, int lda, const std::uint16_t* w, DType dtype,
                      int m, int n, int k) {
  if (m <= 0 || n <= 0) return;
  if (dtype == DType::kBf16)
    run_half<Kind::kBf16>(out, x, lda, w, m, n, k, prepare_bf16, prepare_bf16_16);
  else
    run_half<Kind::kFp16>(out, x, lda, w, m, n, k, prepare_fp16, prepare_fp16_16);
}

}  // namespace llmbench::cpu::avx2
