// Small elementwise and copy ops on the GPU. The spec is kernels/cpu/elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace llmbench::cuda {

// All pointers are device pointers; each op is enqueued on `stream`.

// x[i] += y[i] for i in [0, n) (the residual add).
void add_inplace(float* x, const float* y, std::size_t n, cudaStream_t stream);

// x[r * stride + i] += bias[i] for r in [0, n_rows), i in [0, n).
void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n,
                   cudaStream_t stream);

// out[r, :] = x[rows[r], :] for r in [0, n_rows); x and out have `dim` floats per row.
void gather_rows(float* out, const float* x, const int32_t* rows, int n_rows, int dim,
                 cudaStream_t stream);

}  // namespace llmbench::cuda
