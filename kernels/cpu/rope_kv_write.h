// RoPE on a layer's new queries and keys fused with the write of its new keys and values into a
// preallocated KV cache: the plain CPU reference (the spec: the unfused rope.h twice, then the
// copies kv_cache.h makes) and the fused loop the CPU backend runs. The decoder uses it with
// --fuse small on the default cache (--kv-cache prealloc, --qkv fused; docs/variants.md), in
// place of rope_q, rope_k, kv_write_k and kv_write_v.
#pragma once
#include <cstdint>

#include "kernels/common/rope_kv_shape.h"

namespace llmbench::cpu {

// Rotates q and k of every row in place (rope.h, at positions[r]), then copies row r's rotated
// k to k_cache[b, positions[r], :] and its v to v_cache[b, positions[r], :] (b = r / n_new).
// The spec: cpu::rope on q, cpu::rope on k, then one memcpy per row and cache.
void rope_kv_write_reference(float* qkv, float* k_cache, float* v_cache,
                             const int32_t* positions, const RopeKvShape& s);

// The same in one pass per row: the row's cos/sin table is computed once for q and k (the
// unfused ops compute it twice), then q and k are rotated and k and v copied while the row is in
// L1. The same arithmetic as the reference: equal bit for bit. Parallel over rows.
void rope_kv_write(float* qkv, float* k_cache, float* v_cache, const int32_t* positions,
                   const RopeKvShape& s);

}  // namespace llmbench::cpu
