// out[m, n] = sum_k x[m, k] * w[n, k] (w in nn.Linear layout [out_features, in_features]).
// matmul_reference is the spec: a plain triple loop with double accumulation, slow on purpose.
// matmul is what the engine runs: OpenBLAS sgemv for one row, sgemm otherwise. Deliberately
// not: a hand-written GEMM; OpenBLAS is the CPU "version" of matmul, tested against the spec.
#include "kernels/cpu/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <cstddef>

namespace llmbench::cpu {

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

void matmul(float* out, const float* x, const float* w, int m, int n, int k, int lda) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // The empty sum. BLAS rejects a leading dimension of 0, so do not call it.
    std::fill(out, out + static_cast<std::size_t>(m) * n, 0.0f);
    return;
  }
  if (m == 1) {
    // Decode at batch 1: out = W x, with W row-major [n, k]. sgemv streams W once, at close to
    // memory bandwidth, where sgemm with one row is several times slower.
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w, k, x, 1, 0.0f, out, 1);
  } else {
    // out = x * W^T: x is [m, k] with row stride lda, W is [n, k] used transposed.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, lda, w, k, 0.0f, out, n);
  }
}

}  // namespace llmbench::cpu
