// Residual add + RMSNorm (see add_rmsnorm.h).
// Deliberately not: vectorised by hand. The sum of squares stays a sequential double loop (as in
// rmsnorm.cpp), which is what keeps the fused result bit-identical to the unfused ops.
#include "kernels/cpu/add_rmsnorm.h"

#include <cmath>
#include <cstddef>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/rmsnorm.h"

namespace llmbench::cpu {

void add_rmsnorm_reference(float* x, const float* residual, float* out, const float* weight,
                           int n_rows, int dim, float eps) {
  add_inplace(x, residual, static_cast<std::size_t>(n_rows) * dim);
  rmsnorm(out, x, weight, n_rows, dim, eps);
}

void add_rmsnorm(float* x, const float* residual, float* out, const float* weight, int n_rows,
                 int dim, float eps) {
#pragma omp parallel for if (static_cast<long>(n_rows) * dim > (1 << 15))
  for (int r = 0; r < n_rows; ++r) {
    float* xr = x + static_cast<std::size_t>(r) * dim;
    const float* rr = residual + static_cast<std::size_t>(r) * dim;
    float* outr = out + static_cast<std::size_t>(r) * dim;

    double sum_sq = 0.0;
    for (int i = 0; i < dim; ++i) {
      const float v = xr[i] + rr[i];  // the same float add as add_inplace
      xr[i] = v;
      sum_sq += static_cast<double>(v) * v;
    }
    const float scale = static_cast<float>(1.0 / std::sqrt(sum_sq / dim + eps));
    for (int i = 0; i < dim; ++i) outr[i] = xr[i] * scale * weight[i];
  }
}

}  // namespace llmbench::cpu
