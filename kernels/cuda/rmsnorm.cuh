// RMSNorm on the GPU. The spec is kernels/cpu/rmsnorm.h.
#pragma once

#include <cuda_runtime_api.h>

namespace llmbench::cuda {

// For each row r: out[r, i] = x[r, i] / sqrt(mean_j(x[r, j]^2) + eps) * weight[i].
// out and x: [n_rows, dim] contiguous device arrays (out may alias x); weight: [dim].
// Like the CPU reference, the sum of squares is accumulated in double (see rmsnorm.cu).
void rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim, float eps,
             cudaStream_t stream);

}  // namespace llmbench::cuda
