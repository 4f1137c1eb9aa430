// Ragged paged KV write and attention on the GPU (continuous batching): one row per token,
// each with its own sequence (block-table row) and position. The spec is
// kernels/cpu/ragged_attention.h; for pools of halves (--kv-cache-dtype fp16) it is
// kernels/cpu/kv_f16.h (kv_write_ragged_f16, ragged_paged_attention_f16_reference).
// Deliberately not: a scheduler, or a cuBLAS route for prompt chunks.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common/layout.h"

namespace llmbench::cuda {

// Device pointers (pool, block_table, src, seq, pos), as in cpu::kv_write_ragged.
void kv_write_ragged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                     const float* src, int src_stride, const std::int32_t* seq,
                     const std::int32_t* pos, int n_rows, int kv_dim, cudaStream_t stream);

// Device pointers, as in cpu::ragged_paged_attention. Throws llmbench::Error for a head_dim
// over kAttentionMaxHeadDim (attention.cuh).
void ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                            const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                            int n_heads, int n_kv_heads, int head_dim, cudaStream_t stream);

// kv_write_ragged() into a pool of halves: each value rounded to the nearest half, ties to even
// (cpu::kv_write_ragged_f16: equal bit for bit). Pool offsets count halves.
void kv_write_ragged_f16(__half* pool, const std::int32_t* block_table, const PagedKv& paged,
                         const float* src, int src_stride, const std::int32_t* seq,
                         const std::int32_t* pos, int n_rows, int kv_dim, cudaStream_t stream);

// ragged_paged_attention() over pools of halves: the same kernel, each key and value widened
// exactly as it is read and every sum in fp32, so its result equals, bit for bit, that of
// ragged_paged_attention() over the widened pools.
void ragged_paged_attention_f16(float* out, int out_stride, const float* q, int q_stride,
                                const __half* k_pool, const __half* v_pool,
                                const std::int32_t* block_table, const PagedKv& paged,
                                const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                                int n_heads, int n_kv_heads, int head_dim, cudaStream_t stream);

}  // namespace llmbench::cuda
