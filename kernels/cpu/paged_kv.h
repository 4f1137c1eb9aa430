// A paged KV cache (--kv-cache paged, the vLLM scheme): keys (or values) of every sequence live
// in fixed-size blocks of one pool, and a block table per sequence says which block holds its
// positions [k * block_size, (k + 1) * block_size). Writing scatters new tokens into their
// blocks; gathering copies a sequence's positions back into a contiguous cache. The plain CPU
// references; kernels/cpu/paged_attention.h reads through the table without gathering.
#pragma once
#include <cstdint>

#include "kernels/common/layout.h"

namespace llmbench::cpu {

// Scatter: src(b, t, h, :) (at src_strides, n_kv_heads heads of head_dim floats) goes to
// position past_len + t of sequence b, for b < batch, t < n_new. The table must map every
// written position to a block.
void kv_write_paged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                    const float* src, const HeadStrides& src_strides, int batch, int n_new,
                    int past_len, int n_kv_heads, int head_dim);

// Gather: out[b, pos, :] = the pool row of position pos of sequence b, for pos < len; out is
// [batch, out_seq, kv_dim] (out_seq >= len; positions >= len are left alone).
void kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                     const PagedKv& paged, int batch, int len, int kv_dim, int out_seq);

}  // namespace llmbench::cpu
