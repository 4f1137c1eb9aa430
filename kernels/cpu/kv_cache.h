// Writing new keys/values into a preallocated KV cache: the plain CPU reference.
#pragma once

namespace llmbench::cpu {

// src row (b * n_new + t) at src + row * src_stride holds kv_dim floats; it is copied to
// cache[b, past_len + t, :], where cache is [batch, cache_seq, kv_dim] contiguous.
void kv_cache_write(float* cache, const float* src, int src_stride, int batch, int n_new,
                    int past_len, int cache_seq, int kv_dim);

}  // namespace llmbench::cpu
