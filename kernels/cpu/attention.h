// Causal grouped-query attention over a KV cache: the plain CPU reference.
#pragma once

#include "kernels/common/layout.h"

namespace llmbench::cpu {

// q:   row (b * n_new + t) at q + row * q_stride holds n_heads * head_dim values.
// k_cache, v_cache: [batch, cache_seq, n_kv_heads * head_dim]; positions
//   [0, past_len + n_new) are valid.
// out: row (b * n_new + t) at out + row * out_stride receives n_heads * head_dim values:
//   out_h = softmax_j(q_h . k_j / sqrt(head_dim)) v_j  over j in [0, past_len + t]  (causal).
// Softmax subtracts the row maximum; accumulation is in float.
void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s);

// attention() with every operand placed by `strides`; the shape's q_stride, out_stride and
// cache_seq are not used. Same arithmetic in the same order as attention().
void attention_strided(float* out, const float* q, const float* k_cache, const float* v_cache,
                       const AttentionShape& s, const AttentionStrides& strides);

}  // namespace llmbench::cpu
