// Plain layout descriptions shared by kernels/cpu, kernels/cuda and the engine's Backend
// interface: where the elements of q, k, v and the attention output live (HeadStrides), the
// shape of one attention call (AttentionShape, AttentionStrides) and the paged KV cache's block
// geometry (PagedKv). Backends of every kind are written in these types; none of them belongs to
// one backend.
//
// HeadStrides: where the elements of a logical [batch, seq, heads, head_dim] tensor (q, k, v or
// the attention output) live in memory. The engine keeps such tensors in two layouts:
//   token-major: one row per token, heads side by side in the row (the projections' output,
//                and the preallocated KV cache [batch, cache_seq, kv_dim]);
//   head-major:  [batch, heads, seq, head_dim] contiguous (what a naive engine's
//                q.permute(0, 2, 1, 3).contiguous() produces, and Hugging Face's KV cache).
// Ops that read or write such tensors take strides instead of assuming one layout. head_dim
// values are always contiguous.
// Deliberately not: a tensor type. Plain strides, in floats.
#pragma once
#include <cstdint>

namespace llmbench {

// Element (b, t, h, i) lives at base + b * batch + t * seq + h * head + i (in floats).
struct HeadStrides {
  std::int64_t batch;
  std::int64_t seq;
  std::int64_t head;
};

// Token-major: row (b * seq_len + t) starts row_stride floats after the previous one; head h
// of a row starts at h * head_dim.
inline HeadStrides token_major(int seq_len, int row_stride, int head_dim) {
  return {std::int64_t(seq_len) * row_stride, row_stride, head_dim};
}

// Head-major: [batch, heads, seq_len, head_dim], contiguous.
inline HeadStrides head_major(int heads, int seq_len, int head_dim) {
  return {std::int64_t(heads) * seq_len * head_dim, head_dim, std::int64_t(seq_len) * head_dim};
}

// Whether the CUDA backend's streamed attention kernel (kernels/cuda/attention_streamed.cuh,
// --decode-attention streamed) takes this head_dim: each of a warp's 32 lanes holds 2, 4 or 8
// floats of a row. Other head dims run the tiled kernel. Here so the engine can say so.
inline bool streamed_attention_takes(int head_dim) {
  return head_dim == 64 || head_dim == 128 || head_dim == 256;
}

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

// pool: [n_blocks, block_size, kv_dim] floats (kv_dim = kv_heads * head_dim).
// block_table: [batch, max_blocks] int32; entry (b, k) is the pool block holding positions
// [k * block_size, (k + 1) * block_size) of sequence b.
struct PagedKv {
  int block_size;  // tokens per block
  int max_blocks;  // block-table entries per sequence
};

// Float offset of position `pos` of sequence b in the pool (the row of kv_dim floats).
inline std::int64_t paged_row(const std::int32_t* block_table, const PagedKv& p, int b, int pos,
                              int kv_dim) {
  const std::int64_t block = block_table[std::int64_t(b) * p.max_blocks + pos / p.block_size];
  return (block * p.block_size + pos % p.block_size) * kv_dim;
}

}  // namespace llmbench
