// The shape of one fused RoPE + KV-cache write (kernels/cpu/rope_kv_write.h, the spec, and
// kernels/cuda/rope_kv_write.cuh), shared by both and by the engine's Backend interface.
// Deliberately not: a paged or head-major cache (those variants keep the unfused ops).
#pragma once

#include "kernels/common/host_device.h"

namespace llmbench {

// `batch` sequences of `n_new` new rows each (row r = b * n_new + t); each row is the fused
// projection [q (n_heads x head_dim) | k (n_kv_heads x head_dim) | v (same)], contiguous, rows
// qkv_dim() floats apart. The caches are [batch, cache_seq, kv_dim()] token-major (the
// preallocated cache of --kv-cache prealloc --qkv fused); row r's position (positions[r], device
// or host memory as the backend's) is both its RoPE position and its cache row. The fused
// kernels read the cache row from positions (so a captured decode step replays at the positions
// uploaded before it); past_len states the same for code that cannot read them (the unfused
// default of Backend::rope_kv_write): positions[b * n_new + t] == past_len + t.
struct RopeKvShape {
  int batch = 0, n_new = 0, past_len = 0, cache_seq = 0;
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float theta = 10000.0f;

  LLMBENCH_HD int rows() const { return batch * n_new; }
  LLMBENCH_HD int q_dim() const { return n_heads * head_dim; }
  LLMBENCH_HD int kv_dim() const { return n_kv_heads * head_dim; }
  LLMBENCH_HD int qkv_dim() const { return q_dim() + 2 * kv_dim(); }
};

}  // namespace llmbench
