// Residual add + RMSNorm on the GPU. The spec is kernels/cpu/add_rmsnorm.h.
#pragma once

#include <cuda_runtime_api.h>

namespace llmbench::cuda {

// x += residual, then out = rmsnorm(x, weight): x, residual, out [n_rows, dim] contiguous
// device arrays (out aliases neither), weight [dim]. One kernel in place of add_inplace and
// rmsnorm (elementwise.cuh, rmsnorm.cuh), with their arithmetic: the sums are the same float
// adds, and the sum of squares runs in double in rmsnorm's thread and block order, so the result
// equals that pair's bit for bit.
void add_rmsnorm(float* x, const float* residual, float* out, const float* weight, int n_rows,
                 int dim, float eps, cudaStream_t stream);

}  // namespace llmbench::cuda
