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

namespace llmbench::cpu {

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

}  // namespace llmbench::cpu
