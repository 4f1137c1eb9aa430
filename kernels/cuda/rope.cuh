// Rotary position embedding (Hugging Face rotate_half layout) on the GPU.
// The spec is kernels/cpu/rope.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmbench::cuda {

// Rotates, in place, n_heads heads of head_dim values in each of n_rows rows of the device
// array x (row r at x + r * row_stride, head h at + h * head_dim), pair i = (x[i],
// x[i + head_dim/2]) by angle positions[r] * theta^(-2i/head_dim). positions: n_rows device
// int32s. As on the CPU, the angle and its cos/sin are computed in double, then rounded to float.
void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
          const int32_t* positions, float theta, cudaStream_t stream);

}  // namespace llmbench::cuda
