// A paged KV cache on the GPU: scatter new tokens into their blocks, gather a sequence's blocks
// into a contiguous cache. The spec (layout and semantics) is kernels/cpu/paged_kv.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common/layout.h"

namespace llmbench::cuda {


// Device pointers (pool, block_table, src), as in cpu::kv_write_paged.
void kv_write_paged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                    const float* src, const HeadStrides& src_strides, int batch, int n_new,
                    int past_len, int n_kv_heads, int head_dim, cudaStream_t stream);

// Device pointers, as in cpu::kv_gather_paged.
void kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                     const PagedKv& paged, int batch, int len, int kv_dim, int out_seq,
                     cudaStream_t stream);

}  // namespace llmbench::cuda
