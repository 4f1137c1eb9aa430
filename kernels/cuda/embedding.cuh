// Embedding lookup on the GPU. The spec is kernels/cpu/embedding.h; the result is an exact copy.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmbench::cuda {

// out[i, :] = table[tokens[i], :] for i in [0, n_tokens). out: [n_tokens, dim];
// table: [vocab, dim]; tokens: n_tokens ids in [0, vocab) (not checked, as on the CPU).
// All pointers are device pointers; the copy is enqueued on `stream`.
void embedding(float* out, const float* table, const int32_t* tokens, int n_tokens, int dim,
               cudaStream_t stream);
// The same from a table of bf16 / fp16 values, each widened to fp32 (exact): the spec is
// CpuBackend::embedding_half (kernels/cpu/matmul_half.h, widen_half, per row).
void embedding_bf16(float* out, const __nv_bfloat16* table, const int32_t* tokens, int n_tokens,
                    int dim, cudaStream_t stream);
void embedding_f16(float* out, const __half* table, const int32_t* tokens, int n_tokens, int dim,
                   cudaStream_t stream);

}  // namespace llmbench::cuda
