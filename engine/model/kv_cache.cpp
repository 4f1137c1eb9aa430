// The KV cache variants (see kv_cache.h). Every op runs through run_op, so each variant's
// extra work is traced under its own name.
#include "engine/model/kv_cache.h"

#include <numeric>

#include "kernels/common/error.h"
#include "engine/model/op_work.h"

namespace llmbench {

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

std::int64_t KvCache::max_bytes(const ModelConfig& c, int batch, int max_len,
                                const Variants& v) {
  // One of k or v; the paged and concat caches are fp32 (check_kv_dtype).
  const std::int64_t per_position = std::int64_t(batch) * c.kv_dim() * kv_dtype_bytes(v.kv_dtype);
  const std::int64_t all_layers = 2 * std::int64_t(c.n_layers) * max_len * per_position;
  switch (v.kv_cache) {
    case KvCacheKind::kPrealloc:
      return all_layers;
    case KvCacheKind::kConcat:
      // Every layer's caches, plus the new one of the tensor being concatenated.
      return all_layers + max_len * per_position;
    case KvCacheKind::kPaged:
    case KvCacheKind::kPagedGather: {
      const std::int64_t slots =
          std::int64_t(ceil_div(max_len, v.kv_cache_block)) * v.kv_cache_block;
      const std::int64_t pools = 2 * std::int64_t(c.n_layers) * slots * per_position;
      return pools + (v.kv_cache == KvCacheKind::kPagedGather ? 2 * max_len * per_position : 0);
    }
  }
  return all_layers;
}

KvCache::KvCache(Backend& be, const ModelConfig& c, int batch, int max_len, const Variants& v)
    : be_(be), c_(c), batch_(batch), max_len_(max_len), variants_(v) {
  check_kv_dtype(v);
  const std::size_t row_bytes = std::size_t(c.kv_dim()) * sizeof(float);
  if (v.paged()) {
    if (v.kv_cache_block <= 0) throw BadInput("--kv-cache-block: expected a positive block size");
    paged_ = {v.kv_cache_block, ceil_div(max_len, v.kv_cache_block)};
    const int n_blocks = batch * paged_.max_blocks;
    const std::size_t pool_bytes = std::size_t(n_blocks) * paged_.block_size * row_bytes;
    for (int l = 0; l < c.n_layers; ++l) {
      keys_.push_back(be.alloc(pool_bytes));
      values_.push_back(be.alloc(pool_bytes));
    }
    table_host_.assign(std::size_t(n_blocks), -1);
    table_ = be.alloc(table_host_.size() * sizeof(std::int32_t));
    if (v.kv_cache == KvCacheKind::kPagedGather) {
      gather_k_ = be.alloc(std::size_t(batch) * max_len * row_bytes);
      gather_v_ = be.alloc(std::size_t(batch) * max_len * row_bytes);
    }
  } else if (v.kv_cache == KvCacheKind::kPrealloc) {
    const std::size_t bytes =
        std::size_t(batch) * max_len * c.kv_dim() * std::size_t(kv_dtype_bytes(v.kv_dtype));
    for (int l = 0; l < c.n_layers; ++l) {
      keys_.push_back(be.alloc(bytes));
      values_.push_back(be.alloc(bytes));
    }
  } else {  // concat: buffers come with each pass
    keys_.resize(std::size_t(c.n_layers));
    values_.resize(std::size_t(c.n_layers));
  }
}

HeadStrides KvCache::cache_strides(int seq_len) const {
  return variants_.qkv == QkvLayout::kPermute
             ? head_major(c_.n_kv_heads, seq_len, c_.head_dim())
             : token_major(seq_len, c_.kv_dim(), c_.head_dim());
}

void KvCache::begin_pass(Tracer* tr, int past_len, int n_new) {
  if (past_len == 0) {  // prefill: a new request
    if (variants_.kv_cache == KvCacheKind::kConcat)
      for (int l = 0; l < c_.n_layers; ++l) keys_[l].reset(), values_[l].reset();
    if (variants_.paged()) {
      std::fill(table_host_.begin(), table_host_.end(), -1);
      free_blocks_.resize(table_host_.size());
      std::iota(free_blocks_.begin(), free_blocks_.end(), 0);  // popped from the back: descending
      mapped_blocks_ = 0;
    }
  }
  if (!variants_.paged()) return;
  // Map blocks for positions [past_len, past_len + n_new), sequence by sequence, as a block
  // manager does when the sequences grow.
  const int needed = ceil_div(past_len + n_new, paged_.block_size);
  if (needed > paged_.max_blocks) throw Error("kv cache: more positions than the case allocated");
  for (int b = 0; b < batch_; ++b)
    for (int k = mapped_blocks_; k < needed; ++k) {
      table_host_[std::size_t(b) * paged_.max_blocks + k] = free_blocks_.back();
      free_blocks_.pop_back();
    }
  mapped_blocks_ = needed;
  const std::int64_t bytes = std::int64_t(table_host_.size() * sizeof(std::int32_t));
  run_op(tr, "block_table_to_device", OpCategory::kTransfer, -1, {0, bytes}, [&] {
    be_.to_device(table_.data(), table_host_.data(), std::size_t(bytes));
  });
}

void KvCache::concat(Buffer& cache, const float* src, const HeadStrides& src_strides,
                     int past_len, int n_new) {
  const int len = past_len + n_new, g = c_.n_kv_heads, d = c_.head_dim();
  Buffer next = be_.alloc_async(std::size_t(batch_) * len * c_.kv_dim() * sizeof(float));
  const HeadStrides to = cache_strides(len);
  if (past_len > 0)
    be_.copy_heads(next.f32(), to, cache.f32(), cache_strides(past_len), batch_, past_len, g, d);
  be_.copy_heads(next.f32() + past_len * to.seq, to, src, src_strides, batch_, n_new, g, d);
  cache = std::move(next);  // frees the old cache, in stream order
}

void KvCache::append(Tracer* tr, int l, const float* k, const float* v, const HeadStrides& src,
                     int P, int T) {
  using C = OpCategory;
  const int B = batch_, G = c_.n_kv_heads, D = c_.head_dim(), KV = c_.kv_dim();
  const std::int64_t new_elems = std::int64_t(B) * T * KV;
  switch (variants_.kv_cache) {
    case KvCacheKind::kPrealloc: {
      if (f16()) {  // fused rows only (check_kv_dtype)
        auto write = [&](Buffer& cache, const float* from) {
          auto* to = cache.as<std::uint16_t>();
          if (device_positions_)
            be_.kv_cache_write_f16_at(to, from, int(src.seq), B, T, device_positions_,
                                      max_len_, KV);
          else
            be_.kv_cache_write_f16(to, from, int(src.seq), B, T, P, max_len_, KV);
        };
        const Work w{0, (4 + 2) * new_elems};  // fp32 read, fp16 written
        run_op(tr, "kv_write_k", C::kCopy, l, w, [&] { write(keys_[l], k); });
        run_op(tr, "kv_write_v", C::kCopy, l, w, [&] { write(values_[l], v); });
        return;
      }
      auto write = [&](float* cache, const float* from) {
        if (variants_.qkv == QkvLayout::kFused && device_positions_) {
          be_.kv_cache_write_at(cache, from, int(src.seq), B, T, device_positions_, max_len_, KV);
        } else if (variants_.qkv == QkvLayout::kFused) {  // from: rows of the fused projection
          be_.kv_cache_write(cache, from, int(src.seq), B, T, P, max_len_, KV);
        } else {
          const HeadStrides to = cache_strides(max_len_);
          be_.copy_heads(cache + P * to.seq, to, from, src, B, T, G, D);
        }
      };
      const Work w = copy_work(new_elems);
      run_op(tr, "kv_write_k", C::kCopy, l, w, [&] { write(keys_[l].f32(), k); });
      run_op(tr, "kv_write_v", C::kCopy, l, w, [&] { write(values_[l].f32(), v); });
      return;
    }
    case KvCacheKind::kConcat: {
      // Reads the old cache and the new tokens, writes both into the new buffer.
      const Work w = copy_work(std::int64_t(B) * (P + T) * KV);
      run_op(tr, "kv_concat_k", C::kCopy, l, w, [&] { concat(keys_[l], k, src, P, T); });
      run_op(tr, "kv_concat_v", C::kCopy, l, w, [&] { concat(values_[l], v, src, P, T); });
      return;
    }
    case KvCacheKind::kPaged:
    case KvCacheKind::kPagedGather: {
      const auto* table = table_.as<std::int32_t>();
      run_op(tr, "kv_write_paged_k", C::kCopy, l, copy_work(new_elems), [&] {
        be_.kv_write_paged(keys_[l].f32(), table, paged_, k, src, B, T, P, G, D);
      });
      run_op(tr, "kv_write_paged_v", C::kCopy, l, copy_work(new_elems), [&] {
        be_.kv_write_paged(values_[l].f32(), table, paged_, v, src, B, T, P, G, D);
      });
      return;
    }
  }
}

void KvCache::rope_append(Tracer* tr, int l, float* qkv, const std::int32_t* positions, int P,
                          int T) {
  if (variants_.kv_cache != KvCacheKind::kPrealloc || variants_.qkv != QkvLayout::kFused)
    throw Error("kv cache: rope_append needs --kv-cache prealloc with --qkv fused");
  RopeKvShape s;
  s.batch = batch_, s.n_new = T, s.past_len = P, s.cache_seq = max_len_;
  s.n_heads = c_.n_heads, s.n_kv_heads = c_.n_kv_heads, s.head_dim = c_.head_dim();
  s.theta = c_.rope_theta;
  // rope_q and rope_k's FLOPs; q read and written, k read and written in place and to the cache,
  // v read and written to the cache.
  const std::int64_t rq = std::int64_t(s.rows()) * s.q_dim(), rkv = std::int64_t(s.rows()) * s.kv_dim();
  // With the fp16 cache, the two cache writes are of halves.
  const int cached = kv_dtype_bytes(variants_.kv_dtype);
  const Work work{3 * (rq + rkv), 4 * (2 * rq + 3 * rkv) + 2 * cached * rkv};
  run_op(tr, "rope_kv_write", OpCategory::kElementwise, l, work, [&] {
    if (f16())
      be_.rope_kv_write_f16(qkv, keys_[l].as<std::uint16_t>(), values_[l].as<std::uint16_t>(),
                            positions, s);
    else
      be_.rope_kv_write(qkv, keys_[l].f32(), values_[l].f32(), positions, s);
  });
}

void KvCache::attend(Tracer* tr, int l, float* out, const HeadStrides& out_s, const float* q,
                     const HeadStrides& q_s, int P, int T) {
  using C = OpCategory;
  const int B = batch_, KV = c_.kv_dim();
  // q_stride, out_stride and cache_seq are unused by the strided and paged kernels.
  const AttentionShape shape{B, T, P, c_.n_heads, c_.n_kv_heads, c_.head_dim(), 0, 0, 0};
  const Work work = attention_work(c_, B, T, P, kv_dtype_bytes(variants_.kv_dtype));
  const DecodeAttention kernel = variants_.decode_attention;
  switch (variants_.kv_cache) {
    case KvCacheKind::kPrealloc:
    case KvCacheKind::kConcat: {
      // prealloc: the cache has max_len positions; concat: exactly P + T.
      const int cache_len = variants_.kv_cache == KvCacheKind::kPrealloc ? max_len_ : P + T;
      const AttentionStrides strides{q_s, cache_strides(cache_len), out_s};
      const bool at = device_positions_ && variants_.kv_cache == KvCacheKind::kPrealloc &&
                      variants_.qkv == QkvLayout::kFused;
      run_op(tr, "attention", C::kAttention, l, work, [&] {
        if (f16()) {  // prealloc with fused rows (check_kv_dtype)
          const auto* kc = keys_[l].as<std::uint16_t>();
          const auto* vc = values_[l].as<std::uint16_t>();
          if (at)
            be_.attention_f16_at(out, q, kc, vc, shape, strides, device_positions_, max_len_,
                                 kernel);
          else
            be_.attention_f16(out, q, kc, vc, shape, strides, kernel);
        } else if (at)
          be_.attention_at(out, q, keys_[l].f32(), values_[l].f32(), shape, strides,
                           device_positions_, max_len_, kernel);
        else
          be_.attention(out, q, keys_[l].f32(), values_[l].f32(), shape, strides, kernel);
      });
      return;
    }
    case KvCacheKind::kPaged:
      run_op(tr, "paged_attention", C::kAttention, l, work, [&] {
        be_.paged_attention(out, q, keys_[l].f32(), values_[l].f32(), table_.as<std::int32_t>(),
                            paged_, shape, q_s, out_s, kernel);
      });
      return;
    case KvCacheKind::kPagedGather: {
      const auto* table = table_.as<std::int32_t>();
      const Work gather = copy_work(std::int64_t(B) * (P + T) * KV);
      run_op(tr, "kv_gather_k", C::kCopy, l, gather, [&] {
        be_.kv_gather_paged(gather_k_.f32(), keys_[l].f32(), table, paged_, B, P + T, KV, max_len_);
      });
      run_op(tr, "kv_gather_v", C::kCopy, l, gather, [&] {
        be_.kv_gather_paged(gather_v_.f32(), values_[l].f32(), table, paged_, B, P + T, KV,
                            max_len_);
      });
      const AttentionStrides strides{q_s, token_major(max_len_, KV, c_.head_dim()), out_s};
      run_op(tr, "attention", C::kAttention, l, work, [&] {
        be_.attention(out, q, gather_k_.f32(), gather_v_.f32(), shape, strides, kernel);
      });
      return;
    }
  }
}

}  // namespace llmbench
