// The two ops of a ragged (continuous-batching) step over a paged KV cache, plain CPU
// references. A ragged step is a list of rows; row r is the token at position pos[r] of the
// sequence whose block-table row is seq[r] (sequences may contribute one decode row or a chunk
// of prompt rows, in any order). Every sequence reads and writes its own blocks only, through
// the block table, so what else shares the step never changes a row's result.
// Deliberately not: a scheduler (engine/serving/scheduler.h) or GEMM-shaped prefill attention.
#pragma once
#include <cstdint>

#include "kernels/common/layout.h"

namespace llmbench::cpu {

// Scatter: the kv_dim floats of row r of src (rows src_stride floats apart) go to position
// pos[r] of sequence seq[r]: pool row paged_row(block_table, paged, seq[r], pos[r], kv_dim).
// The table must map every written position.
void kv_write_ragged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                     const float* src, int src_stride, const std::int32_t* seq,
                     const std::int32_t* pos, int n_rows, int kv_dim);

// out_h(r) = softmax_j(q_h(r) . k_j / sqrt(head_dim)) v_j over keys j in [0, pos[r]] of
// sequence seq[r] (causal: the row itself and everything before it), key/value j read from
// the pool through the block table, query head h reading kv head h / (n_heads / n_kv_heads).
// q and out are rows of n_heads * head_dim floats, q_stride / out_stride floats apart.
// Same arithmetic in the same order as attention() (attention_core.h), so a decode row agrees
// bit for bit with the static path's attention on the same data.
void ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                            const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                            int n_heads, int n_kv_heads, int head_dim);

}  // namespace llmbench::cpu
