// RMSNorm: the plain CPU reference, one row per loop iteration, parallel over rows.
// Deliberately not: fused with the residual add or the following matmul. The sum of squares is
// a sequential double loop per row, so results are bit-identical for any thread count.
#include "kernels/cpu/rmsnorm.h"

#include <cmath>
#include <cstddef>

namespace llmbench::cpu {

void rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim, float eps) {
#pragma omp parallel for if (static_cast<long>(n_rows) * dim > (1 << 15))
  for (int r = 0; r < n_rows; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * dim;
    float* outr = out + static_cast<std::size_t>(r) * dim;

    double sum_sq = 0.0;
    for (int i = 0; i < dim; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(sum_sq / dim + eps));

    // Reads xr[i] before writing outr[i], so out may alias x.
    for (int i = 0; i < dim; ++i) outr[i] = xr[i] * scale * weight[i];
  }
}

}  // namespace llmbench::cpu
