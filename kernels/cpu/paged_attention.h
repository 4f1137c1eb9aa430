// Causal grouped-query attention that reads keys and values through a block table (a paged
// KV cache, kernels/cpu/paged_kv.h) instead of a contiguous cache: the plain CPU reference.
// What a paged-attention kernel does (vLLM's PagedAttention), so no gather copy is needed.
#pragma once
#include <cstdint>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/paged_kv.h"

namespace llmbench::cpu {

// The result of attention_strided() over the cache that kv_gather_paged() would produce:
// key/value j of sequence b is the pool row of position j (paged_row), kv head g at g * head_dim
// in that row. q and out are placed by q_strides / out_strides; the shape's q_stride,
// out_stride and cache_seq are not used. Same arithmetic in the same order as attention(), so
// on the same data the two agree bit for bit.
void paged_attention(float* out, const float* q, const float* k_pool, const float* v_pool,
                     const std::int32_t* block_table, const PagedKv& paged,
                     const AttentionShape& s, const HeadStrides& q_strides,
                     const HeadStrides& out_strides);

}  // namespace llmbench::cpu
