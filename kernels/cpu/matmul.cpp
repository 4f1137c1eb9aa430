// out[m, n] = sum_k x[m, k] * w[n, k] (w in nn.Linear layout [out_features, in_features]).
// matmul_reference is the spec: a plain triple loop with double accumulation, slow on purpose.
// matmul is what the engine runs: for decode's few rows the path decode_dispatch.h picks (the
// AVX-512 or AVX2 weight-streaming kernel, else sgemv for one row and matmul_few_rows for a
// few); beyond, the AVX-512 kernel up to kStreamRowsMax rows, on a CPU with AVX2 but not
// AVX-512 gemm_avx2.h's outer-product kernel up to kAvx2GemmRowsMax rows, else OpenBLAS sgemm,
// the CPU "version" of matmul for prefill. All are tested against the spec.
#include "kernels/cpu/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <cstddef>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/decode_dispatch.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/matmul_avx2.h"
#include "kernels/cpu/matmul_avx512.h"

namespace llmbench::cpu {

namespace {

// The few-row kernel is compiled for AVX-512, AVX2+FMA and the baseline; the loader picks the
// best the CPU has (GCC function multi-versioning), so the build needs no -march flag.
#define LLMBENCH_CLONES \
  LLMBENCH_ISA_CLONES

// out[i, j..j+3] = x_i . w_{j..j+3} for every row i: x rows two at a time against four weight
// rows, eight independent sums (6 loads per 8 multiply-adds). The four weight rows stay in
// L1/L2 across the m rows. Each output is the same reduction whether its row is paired or not.
LLMBENCH_CLONES
void few_rows_block4(float* out, const float* x, const float* w, int m, int n, int k, int lda,
                     int j) {
  const float* w0 = w + static_cast<std::size_t>(j) * k;
  const float *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;
  int i = 0;
  for (; i + 2 <= m; i += 2) {
    const float* xa = x + static_cast<std::size_t>(i) * lda;
    const float* xb = xa + lda;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f;
#pragma omp simd reduction(+ : a0, a1, a2, a3, b0, b1, b2, b3)
    for (int p = 0; p < k; ++p) {
      a0 += xa[p] * w0[p];
      a1 += xa[p] * w1[p];
      a2 += xa[p] * w2[p];
      a3 += xa[p] * w3[p];
      b0 += xb[p] * w0[p];
      b1 += xb[p] * w1[p];
      b2 += xb[p] * w2[p];
      b3 += xb[p] * w3[p];
    }
    float* oa = out + static_cast<std::size_t>(i) * n + j;
    float* ob = oa + n;
    oa[0] = a0, oa[1] = a1, oa[2] = a2, oa[3] = a3;
    ob[0] = b0, ob[1] = b1, ob[2] = b2, ob[3] = b3;
  }
  dot_rows_block4(out, n, j, x, lda, w0, k, i, m);  // an odd m's last row
}

// The same for one weight row (the n % 4 tail).
LLMBENCH_CLONES
void few_rows_block1(float* out, const float* x, const float* w, int m, int n, int k, int lda,
                     int j) {
  const float* wj = w + static_cast<std::size_t>(j) * k;
  for (int i = 0; i < m; ++i) {
    const float* xi = x + static_cast<std::size_t>(i) * lda;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int p = 0; p < k; ++p) s += xi[p] * wj[p];
    out[static_cast<std::size_t>(i) * n + j] = s;
  }
}

}  // namespace

LLMBENCH_CLONES
void dot_rows_block4(float* out, int n, int j, const float* x, int x_stride, const float* w,
                     int k, int i_begin, int m) {
  const float *w0 = w, *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;
  for (int i = i_begin; i < m; ++i) {
    const float* xi = x + static_cast<std::size_t>(i) * x_stride;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int p = 0; p < k; ++p) {
      s0 += xi[p] * w0[p];
      s1 += xi[p] * w1[p];
      s2 += xi[p] * w2[p];
      s3 += xi[p] * w3[p];
    }
    float* o = out + static_cast<std::size_t>(i) * n + j;
    o[0] = s0, o[1] = s1, o[2] = s2, o[3] = s3;
  }
}

void matmul_few_rows(float* out, const float* x, const float* w, int m, int n, int k, int lda) {
  const int blocks = n / 4;
  // Static schedule: contiguous slices of the weight matrix per thread, streamed in order.
#pragma omp parallel for schedule(static) if (static_cast<long>(n) * k > (1 << 15))
  for (int b = 0; b < blocks; ++b) few_rows_block4(out, x, w, m, n, k, lda, 4 * b);
  for (int j = 4 * blocks; j < n; ++j) few_rows_block1(out, x, w, m, n, k, lda, j);
}

void matmul_reference(float* out, const float* x, const float* w, int m, int n, int k, int lda) {
  // Each out element is one sequential double sum, so the thread count cannot change it.
#pragma omp parallel for collapse(2) if (static_cast<long>(m) * n * k > (1 << 20))
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      const float* xi = x + static_cast<std::size_t>(i) * lda;
      const float* wj = w + static_cast<std::size_t>(j) * k;
      double acc = 0.0;
      for (int p = 0; p < k; ++p) acc += static_cast<double>(xi[p]) * wj[p];
      out[static_cast<std::size_t>(i) * n + j] = static_cast<float>(acc);
    }
  }
}

void matmul_f32_on(IsaPath p, float* out, const float* x, const float* w, int m, int n, int k,
                   int lda) {
  if (p == IsaPath::kAvx512) {
    // The AVX-512 weight-streaming kernel reads each weight once for all m rows
    // (matmul_avx512.h).
    avx512::matmul_f32(out, x, lda, w, m, n, k);
  } else if (p == IsaPath::kAvx2) {
    // One sequential weight stream per thread, four accumulators per output (matmul_avx2.h);
    // faster than sgemv in a model-sized stream (docs/case-studies/cpu-decode-vs-llama-cpp.md
    // "Against llama.cpp").
    avx2::matmul_f32_rows(out, x, lda, w, m, n, k);
  } else if (m == 1) {
    // Batch 1: out = W x with W row-major [n, k]; sgemv streams W once.
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w, k, x, 1, 0.0f, out, 1);
  } else {
    // The weights dominate the traffic and must stream at memory bandwidth. OpenBLAS sgemm
    // with a few rows reaches only a few GB/s on these machines.
    matmul_few_rows(out, x, w, m, n, k, lda);
  }
}

void matmul(float* out, const float* x, const float* w, int m, int n, int k, int lda) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // The empty sum. BLAS rejects a leading dimension of 0, so do not call it.
    std::fill(out, out + static_cast<std::size_t>(m) * n, 0.0f);
    return;
  }
  if (m <= kFewRowsMax) {
    // Decode: the path decode_dispatch.h picks for this dtype and row count.
    matmul_f32_on(decode_path(DType::kFp32, m), out, x, w, m, n, k, lda);
  } else if (m <= kStreamRowsMax && cpu_isa().avx512) {
    // Short prompts: the AVX-512 weight-streaming kernel reads each weight once for all m rows
    // (matmul_avx512.h).
    avx512::matmul_f32(out, x, lda, w, m, n, k);
  } else if (m <= kAvx2GemmRowsMax && cpu_isa().avx2 && !cpu_isa().avx512) {
    // Batched decode and prefill on a CPU with AVX2 but not AVX-512: outer-product tiles of 16
    // packed x rows by 6 weight rows copied into L1, one parallel region (gemm_avx2.h, the
    // 16-bit weights' kernel on fp32 weights); at these row counts faster than sgemm or level
    // with it (bench_kernels gemm_f32_avx2_gemm against gemm_f32_sgemm; docs/metrics.md).
    avx2::gemm_f32(out, x, lda, w, m, n, k);
  } else {
    // out = x * W^T: x is [m, k] with row stride lda, W is [n, k] used transposed.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, lda, w, k, 0.0f, out, n);
  }
}

}  // namespace llmbench::cpu
