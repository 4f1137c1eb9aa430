// SwiGLU activation on the GPU. The spec is kernels/cpu/swiglu.h.
#pragma once

#include <cuda_runtime_api.h>

namespace llmbench::cuda {

// gate_up: [n_rows, 2 * ffn_dim] device array, each row = [gate | up];
// out: [n_rows, ffn_dim], out[r, i] = silu(gate[r, i]) * up[r, i], silu(g) = g / (1 + exp(-g)).
void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim, cudaStream_t stream);

}  // namespace llmbench::cuda
