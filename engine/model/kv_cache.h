// The KV cache of one Session, in one of the --kv-cache variants (variants.h):
//   prealloc      one buffer per layer for k and for v, sized for the whole case, written in
//                 place (ops kv_write_k, kv_write_v). The fast path. With --fuse small and
//                 --qkv fused, RoPE and both writes are one op (rope_kv_write, rope_append).
//   concat        no preallocated cache: every pass allocates, per layer, a k and a v buffer
//                 of length past + new and copies the old cache and the new tokens into it,
//                 then frees the old one (ops kv_concat_k, kv_concat_v; torch.cat semantics).
//   paged         one pool of fixed-size blocks per layer for k and for v, a block table per
//                 sequence (op block_table_to_device each pass); new tokens are scattered into
//                 their blocks (kv_write_paged_k/v) and attention reads through the table
//                 (paged_attention).
//   paged-gather  the same blocks, gathered into a contiguous scratch cache before attention
//                 (kv_gather_k, kv_gather_v, then the ordinary attention op).
// The contiguous caches are token-major [batch, len, kv_dim] with --qkv fused and head-major
// [batch, kv_heads, len, head_dim] with --qkv permute (the layout a permuting engine keeps).
// With --kv-cache-dtype fp16 the prealloc cache holds binary16 keys and values (kernels/cpu/kv_f16.h)
// and the same ops run their _f16 forms; the other caches are fp32 (check_kv_dtype refuses).
// Blocks are handed out from a free list in descending order, so a sequence's blocks are never
// adjacent in the pool and every kernel must follow the table.
// Not here: the rest of the forward pass (model.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/model/backend.h"
#include "engine/model/config.h"
#include "engine/model/trace.h"
#include "engine/model/variants.h"

namespace llmbench {

class KvCache {
 public:
  // For `batch` sequences of up to `max_len` positions.
  KvCache(Backend& backend, const ModelConfig& config, int batch, int max_len,
          const Variants& variants);

  // Before each pass that appends n_new tokens after past_len cached ones. past_len == 0
  // (prefill) empties the cache; paged caches map blocks for the new positions and upload the
  // block table (traced as block_table_to_device).
  void begin_pass(Tracer* tracer, int past_len, int n_new);
  // Appends layer `layer`'s new keys and values: k(b, t, g, :) and v(b, t, g, :) for t < n_new,
  // both at `src` strides (head_layout.h).
  void append(Tracer* tracer, int layer, const float* k, const float* v, const HeadStrides& src,
              int past_len, int n_new);
  // --fuse small on the prealloc cache with fused rows (fuses_rope): rotates q and k of the
  // fused projection rows `qkv` ([batch * n_new, qkv_dim], before RoPE) in place at `positions`
  // (backend memory, past_len + t) and appends k and v, as one op (rope_kv_write) in place of
  // rope_q, rope_k, kv_write_k and kv_write_v.
  void rope_append(Tracer* tracer, int layer, float* qkv, const std::int32_t* positions,
                   int past_len, int n_new);
  // out(b, t, h, :) = causal attention of the new queries q(b, t, h, :) over layer `layer`'s
  // cache (traced as attention or paged_attention, after kv_gather_k/v for paged-gather).
  void attend(Tracer* tracer, int layer, float* out, const HeadStrides& out_strides,
              const float* q, const HeadStrides& q_strides, int past_len, int n_new);

  // With `positions` (backend memory, [batch * n_new] int32: the pass's RoPE positions), the
  // prealloc cache over fused rows writes and attends through Backend::kv_cache_write_at and
  // attention_at, reading the pass's length from those positions instead of past_len, with
  // the attention grid sized for max_len: what a captured decode step needs to replay at every
  // length (--cuda-graphs). nullptr: past_len arguments again. Other layouts ignore it.
  void set_device_positions(const std::int32_t* positions) { device_positions_ = positions; }

  // Bytes of KV cache the case can hold at most at once (memory.h estimates the same).
  static std::int64_t max_bytes(const ModelConfig& config, int batch, int max_len,
                                const Variants& variants);

 private:
  bool f16() const { return variants_.kv_dtype == KvDtype::kFp16; }
  // Strides of a contiguous cache of seq_len positions, in this cache's layout.
  HeadStrides cache_strides(int seq_len) const;
  // kv_concat: replaces `cache` ([batch, past_len] positions) by a new buffer holding it and
  // the n_new tokens of `src`.
  void concat(Buffer& cache, const float* src, const HeadStrides& src_strides, int past_len,
              int n_new);

  Backend& be_;
  const ModelConfig& c_;
  int batch_, max_len_;
  Variants variants_;
  std::vector<Buffer> keys_, values_;  // per layer: caches, concat buffers or block pools
  // paged
  PagedKv paged_{};
  std::vector<std::int32_t> table_host_;  // [batch, max_blocks], -1 where unmapped
  std::vector<std::int32_t> free_blocks_;  // popped from the back
  int mapped_blocks_ = 0;                  // per sequence (all sequences advance together)
  Buffer table_;                           // the table in backend memory
  Buffer gather_k_, gather_v_;             // paged-gather: [batch, max_len, kv_dim]
  const std::int32_t* device_positions_ = nullptr;  // set_device_positions
};

}  // namespace llmbench
