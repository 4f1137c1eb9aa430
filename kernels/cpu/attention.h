// Causal grouped-query attention over a KV cache: the plain CPU reference.
#pragma once

#include "kernels/cpu/head_layout.h"

namespace llmbench::cpu {

// Shapes of one attention call. A batch of `batch` sequences each appends `n_new` tokens
// after `past_len` cached tokens; the cache already holds the new tokens' k and v.
struct AttentionShape {
  int batch;       // sequences
  int n_new;       // query tokens per sequence (prompt length in prefill, 1 in decode)
  int past_len;    // tokens cached before these queries
  int n_heads;     // query heads
  int n_kv_heads;  // key/value heads; query head h reads kv head h / (n_heads / n_kv_heads)
  int head_dim;
  int q_stride;    // floats between consecutive query rows
  int out_stride;  // floats between consecutive output rows
  int cache_seq;   // positions allocated per sequence in the cache (its max length)
};

// q:   row (b * n_new + t) at q + row * q_stride holds n_heads * head_dim values.
// k_cache, v_cache: [batch, cache_seq, n_kv_heads * head_dim]; positions
//   [0, past_len + n_new) are valid.
// out: row (b * n_new + t) at out + row * out_stride receives n_heads * head_dim values:
//   out_h = softmax_j(q_h . k_j / sqrt(head_dim)) v_j  over j in [0, past_len + t]  (causal).
// Softmax subtracts the row maximum; accumulation is in float.
void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s);

// Where the operands of attention_strided live (head_layout.h): q(b, t, h), out(b, t, h) over
// the n_new new tokens, and k/v(b, j, kv_head) over cache positions j (k and v share one
// layout). Lets the same kernel run over token-major rows or head-major tensors.
struct AttentionStrides {
  HeadStrides q;
  HeadStrides kv;
  HeadStrides out;
};

// The strides attention() uses: token-major q and out rows of q_stride / out_stride floats,
// a token-major cache of cache_seq positions. (Inline: the CUDA kernels use it too.)
inline AttentionStrides row_major_strides(const AttentionShape& s) {
  return {token_major(s.n_new, s.q_stride, s.head_dim),
          token_major(s.cache_seq, s.n_kv_heads * s.head_dim, s.head_dim),
          token_major(s.n_new, s.out_stride, s.head_dim)};
}

// attention() with every operand placed by `strides`; the shape's q_stride, out_stride and
// cache_seq are not used. Same arithmetic in the same order as attention().
void attention_strided(float* out, const float* q, const float* k_cache, const float* v_cache,
                       const AttentionShape& s, const AttentionStrides& strides);

}  // namespace llmbench::cpu
