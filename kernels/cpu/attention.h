// Causal grouped-query attention over a KV cache: the plain CPU reference.
#pragma once

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

}  // namespace llmbench::cpu
