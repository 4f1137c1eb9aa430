// Embedding lookup on the GPU. The spec is kernels/cpu/embedding.h; the result is an exact copy.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmbench::cuda {

// out[i, :] = table[tokens[i], :] for i in [0, n_tokens). out: [n_tokens, dim];
// table: [vocab, dim]; tokens: n_tokens ids in [0, vocab) (not checked, as on the CPU).
// All pointers are device pointers; the copy is enqueued on `stream`.
void embedding(float* out, const float* table, const int32_t* tokens, int n_tokens, int dim,
               cudaStream_t stream);

}  // namespace llmbench::cuda
