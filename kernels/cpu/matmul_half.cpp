// Reduced-precision-weight matmul (see matmul_half.h): the x rows are rounded to the weight
// dtype once per call; on AVX-512 CPUs the weights go straight into the kernels of
// matmul_avx512.cpp, elsewhere they are widened to fp32 a few rows at a time (never the whole
// matrix). Every product is summed in fp32.
// Widening: bf16 is a 16-bit shift (the compiler vectorises it); fp16 uses the F16C
// instruction (vcvtph2ps) where the CPU has it, else the exact scalar conversion of
// kernels/common/half.h.
#include "kernels/cpu/matmul_half.h"

#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/decode_dispatch.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_avx2.h"
#include "kernels/cpu/matmul_avx512.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace llmbench::cpu {

namespace {

#define LLMBENCH_CLONES \
  LLMBENCH_ISA_CLONES

LLMBENCH_CLONES
void widen_bf16(float* dst, const std::uint16_t* src, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(src[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void widen_fp16_f16c(float* dst, const std::uint16_t* src,
                                                        std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}
const bool kHaveF16c = __builtin_cpu_supports("f16c");
#endif

void widen_fp16(float* dst, const std::uint16_t* src, std::int64_t n) {
#if defined(__x86_64__)
  if (kHaveF16c) return widen_fp16_f16c(dst, src, n);
#endif
  for (std::int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}

LLMBENCH_CLONES
void dot_block1(float* out, const float* xr, const float* wt, int m, int n, int k, int j) {
  for (int i = 0; i < m; ++i) {
    const float* xi = xr + static_cast<std::size_t>(i) * k;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int p = 0; p < k; ++p) s += xi[p] * wt[p];
    out[static_cast<std::size_t>(i) * n + j] = s;
  }
}

// dot_rows_block4 (matmul.h) for bf16 weights read in place: widening is a shift, done in the vector loop, so
// no tile is written and read back.
LLMBENCH_CLONES
void dot_block4_bf16(float* out, const float* xr, const std::uint16_t* w, int m, int n, int k,
                     int j) {
  const std::uint16_t* w0 = w + static_cast<std::size_t>(j) * k;
  const std::uint16_t *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;
  for (int i = 0; i < m; ++i) {
    const float* xi = xr + static_cast<std::size_t>(i) * k;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int p = 0; p < k; ++p) {
      s0 += xi[p] * bf16_to_fp32(w0[p]);
      s1 += xi[p] * bf16_to_fp32(w1[p]);
      s2 += xi[p] * bf16_to_fp32(w2[p]);
      s3 += xi[p] * bf16_to_fp32(w3[p]);
    }
    float* o = out + static_cast<std::size_t>(i) * n + j;
    o[0] = s0, o[1] = s1, o[2] = s2, o[3] = s3;
  }
}

// The x rows rounded to the dtype, packed contiguously ([m, k]).
std::vector<float> rounded_rows(const float* x, int m, int k, int lda, DType dtype) {
  std::vector<float> xr(static_cast<std::size_t>(m) * k);
  for (int i = 0; i < m; ++i)
    round_to_half(xr.data() + static_cast<std::size_t>(i) * k,
                  x + static_cast<std::size_t>(i) * lda, k, dtype);
  return xr;
}

}  // namespace

void widen_half(float* dst, const std::uint16_t* src, std::int64_t n, DType dtype) {
  if (dtype == DType::kBf16)
    widen_bf16(dst, src, n);
  else
    widen_fp16(dst, src, n);
}

void round_to_half(float* dst, const float* src, std::int64_t n, DType dtype) {
  if (dtype == DType::kBf16)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(fp32_to_bf16(src[i]));
  else
    for (std::int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(fp32_to_fp16(src[i]));
}

void narrow_to_half(std::uint16_t* dst, const float* src, std::int64_t n, DType dtype) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t i = 0; i < n; ++i)
    dst[i] = dtype == DType::kBf16 ? fp32_to_bf16(src[i]) : fp32_to_fp16(src[i]);
}

void matmul_half_reference(float* out, const float* x, const std::uint16_t* w, DType dtype, int m,
                           int n, int k, int lda) {
  auto widen = [dtype](std::uint16_t b) {
    return dtype == DType::kBf16 ? bf16_to_fp32(b) : fp16_to_fp32(b);
  };
  auto round = [dtype](float v) {
    return dtype == DType::kBf16 ? bf16_to_fp32(fp32_to_bf16(v)) : fp16_to_fp32(fp32_to_fp16(v));
  };
#pragma omp parallel for collapse(2) if (static_cast<long>(m) * n * k > (1 << 20))
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      const float* xi = x + static_cast<std::size_t>(i) * lda;
      const std::uint16_t* wj = w + static_cast<std::size_t>(j) * k;
      double acc = 0.0;
      for (int p = 0; p < k; ++p) acc += static_cast<double>(round(xi[p])) * widen(wj[p]);
      out[static_cast<std::size_t>(i) * n + j] = static_cast<float>(acc);
    }
  }
}

namespace {

// vdpbf16ps on the bf16 bits of x (converted once per call) and of the weights as stored.
// The x buffers are thread-local so that a decode step reuses them: a fresh one per call could
// come from mmap (8 fp16-rounded rows of k 5632 are 180 KB) and fault its pages in every time.
void bf16_avx512(float* out, const float* x, const std::uint16_t* w, int m, int n, int k,
                 int lda) {
  const int ld = (k + 31) / 32 * 32;
  thread_local std::vector<std::uint16_t> xb;
  xb.resize(static_cast<std::size_t>(m) * ld);
  avx512::to_bf16_padded(xb.data(), ld, x, lda, m, k);
  avx512::matmul_bf16(out, xb.data(), ld, w, m, n, k);
}

// F16C widening in registers, fp32 FMAs; x rounded to fp16 values once per call.
void fp16_avx512(float* out, const float* x, const std::uint16_t* w, int m, int n, int k,
                 int lda) {
  thread_local std::vector<float> xr;
  xr.resize(static_cast<std::size_t>(m) * k);
  avx512::round_to_fp16_rows(xr.data(), x, lda, m, k);
  avx512::matmul_fp16(out, xr.data(), k, w, m, n, k);
}

// The portable decode path: weight rows widened four at a time into a per-thread tile (bf16
// with m <= 2: read in place) and multiplied by every x row while in L1.
void half_rows_portable(float* out, const float* x, const std::uint16_t* w, DType dtype, int m,
                        int n, int k, int lda) {
  const std::vector<float> xr = rounded_rows(x, m, k, lda, dtype);
  const int blocks = n / 4;
  // Static schedule: contiguous slices of the weight matrix per thread, streamed in order.
#pragma omp parallel if (static_cast<long>(n) * k > (1 << 15))
  {
    std::vector<float> tile(static_cast<std::size_t>(4) * k);
#pragma omp for schedule(static)
    for (int b = 0; b < blocks; ++b) {
      if (dtype == DType::kBf16 && m <= 2) {  // measured: in-place is faster for 1-2 rows
        dot_block4_bf16(out, xr.data(), w, m, n, k, 4 * b);
        continue;
      }
      widen_half(tile.data(), w + static_cast<std::size_t>(4 * b) * k, 4 * std::int64_t(k),
                 dtype);
      dot_rows_block4(out, n, 4 * b, xr.data(), k, tile.data(), k, 0, m);  // matmul.h
    }
  }
  std::vector<float> row(static_cast<std::size_t>(k));
  for (int j = 4 * blocks; j < n; ++j) {
    widen_half(row.data(), w + static_cast<std::size_t>(j) * k, k, dtype);
    dot_block1(out, xr.data(), row.data(), m, n, k, j);
  }
}

}  // namespace

void matmul_half_on(IsaPath p, float* out, const float* x, const std::uint16_t* w, DType dtype,
                    int m, int n, int k, int lda) {
  if (p == IsaPath::kAvx512 && dtype == DType::kBf16)
    bf16_avx512(out, x, w, m, n, k, lda);
  else if (p == IsaPath::kAvx512)
    fp16_avx512(out, x, w, m, n, k, lda);
  else if (p == IsaPath::kAvx2)
    // Four ALU or convert instructions and four FMAs per 32 weights (matmul_avx2.h).
    avx2::matmul_half_rows(out, x, lda, w, dtype, m, n, k);
  else
    half_rows_portable(out, x, w, dtype, m, n, k, lda);
}

void matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype, int m, int n,
                 int k, int lda) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill(out, out + static_cast<std::size_t>(m) * n, 0.0f);
    return;
  }
  if (m <= kFewRowsMax) {
    // Decode: the path decode_dispatch.h picks for this dtype and row count.
    matmul_half_on(decode_path(dtype, m), out, x, w, dtype, m, n, k, lda);
    return;
  }
  if (dtype == DType::kBf16 && cpu_isa().avx512_bf16) {
    bf16_avx512(out, x, w, m, n, k, lda);
    return;
  }
  if (dtype == DType::kFp16 && cpu_isa().avx512 && m <= kFp16StreamRowsMax) {
    fp16_avx512(out, x, w, m, n, k, lda);
    return;
  }
  if (cpu_isa().avx2 && (m <= kFp16StreamRowsMax || !cpu_isa().avx512)) {
    // Batched decode and prefill without the AVX-512 path: weights widened into L1 6 rows at a
    // time, outer-product tiles of 16 x rows by 6 weight rows, one parallel region
    // (gemm_avx2.h). Faster than widen-then-sgemm at every row count measured on an
    // AVX2-only CPU (16 to 2048, bench_kernels gemm_*_avx2_gemm against gemm_*_tiled_sgemm;
    // docs/metrics.md). On AVX-512 CPUs (bf16 without AVX512_BF16) it stops at 128 rows, as
    // before: past that sgemm was not measured against it there.
    avx2::gemm_half(out, x, lda, w, dtype, m, n, k);
    return;
  }
  matmul_half_tiled_sgemm(out, x, w, dtype, m, n, k, lda);
}

void matmul_half_tiled_sgemm(float* out, const float* x, const std::uint16_t* w, DType dtype,
                             int m, int n, int k, int lda) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill(out, out + static_cast<std::size_t>(m) * n, 0.0f);
    return;
  }
  const std::vector<float> xr = rounded_rows(x, m, k, lda, dtype);
  // Widen kHalfTileRows weight rows (in parallel), then out[:, j0:j0+rows] = xr . tile^T by
  // OpenBLAS, written in place with ldc = n.
  std::vector<float> tile(static_cast<std::size_t>(std::min(n, kHalfTileRows)) * k);
  for (int j0 = 0; j0 < n; j0 += kHalfTileRows) {
    const int rows = std::min(kHalfTileRows, n - j0);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r)
      widen_half(tile.data() + static_cast<std::size_t>(r) * k,
                 w + static_cast<std::size_t>(j0 + r) * k, k, dtype);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, rows, k, 1.0f, xr.data(), k,
                tile.data(), k, 0.0f, out + j0, n);
  }
}

}  // namespace llmbench::cpu
