// Small elementwise and copy ops (residual add, bias add, row gather): the plain CPU references.
// Deliberately not: fused with each other; each is one readable loop, parallel when large.
#include "kernels/cpu/elementwise.h"

#include <cstring>

namespace llmbench::cpu {

namespace {
// Below this many floats a parallel region costs more than the loop itself.
constexpr long kParallelMinFloats = 1 << 16;
}  // namespace

void add_inplace(float* x, const float* y, std::size_t n) {
#pragma omp parallel for simd if (static_cast<long>(n) > kParallelMinFloats)
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n) {
#pragma omp parallel for if (static_cast<long>(n_rows) * n > kParallelMinFloats)
  for (int r = 0; r < n_rows; ++r) {
    float* row = x + static_cast<std::size_t>(r) * stride;
#pragma omp simd
    for (int i = 0; i < n; ++i) row[i] += bias[i];
  }
}

void gather_rows(float* out, const float* x, const int32_t* rows, int n_rows, int dim) {
  const std::size_t row_bytes = static_cast<std::size_t>(dim) * sizeof(float);
#pragma omp parallel for if (static_cast<long>(n_rows) * dim > kParallelMinFloats)
  for (int r = 0; r < n_rows; ++r) {
    std::memcpy(out + static_cast<std::size_t>(r) * dim,
                x + static_cast<std::size_t>(rows[r]) * dim, row_bytes);
  }
}

}  // namespace llmbench::cpu
