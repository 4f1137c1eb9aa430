// The fp16 KV cache (--kv-cache-dtype fp16): keys and values stored as IEEE binary16, half the bytes
// a decode step's attention reads at long contexts. The plain CPU references (the spec every
// backend is tested against) and the kernels the CPU backend runs.
// A write rounds each fp32 key and value to the nearest half, ties to even
// (kernels/common/half.h fp32_to_fp16; F16C's and CUDA's __float2half_rn round the same way);
// attention widens them exactly, so over fp16 caches it computes what the fp32 attention
// computes over the widened caches.
// Deliberately not: paged or head-major fp16 caches (--kv-cache-dtype fp16 needs --kv-cache prealloc
// and --qkv fused), fp16 arithmetic (every sum is fp32), or bf16 (fp16 keeps 3 more mantissa
// bits, and a key or value past 65504 does not occur in the models we load).
#pragma once
#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/common/rope_kv_shape.h"

namespace llmbench::cpu {

// As kv_cache_write (kv_cache.h), each value rounded to binary16: src row (b * n_new + t) at
// src + row * src_stride (kv_dim floats) to cache[b, past_len + t, :], cache [batch,
// cache_seq, kv_dim] of halves.
void kv_cache_write_f16(std::uint16_t* cache, const float* src, int src_stride, int batch,
                        int n_new, int past_len, int cache_seq, int kv_dim);

// out(b, j, g, :) = in(b, j, g, :) widened to fp32 for j < len, both placed by their strides
// (layout.h: batch, seq and head strides in elements).
void widen_kv_f16(float* out, const HeadStrides& out_strides, const std::uint16_t* in,
                  const HeadStrides& in_strides, int batch, int len, int n_kv_heads,
                  int head_dim);

// The reference: the visible positions [0, past_len + n_new) of both caches widened into
// fp32 copies (token-major), then attention_strided (attention.h) over them. Equal bit for bit
// to attention_strided over widened caches, by construction.
void attention_f16_strided(float* out, const float* q, const std::uint16_t* k_cache,
                           const std::uint16_t* v_cache, const AttentionShape& s,
                           const AttentionStrides& strides);

// The CPU backend's decode attention over fp16 caches: the AVX2 kernel with F16C loads
// (attention_avx2.cpp, the same operations in the same order as its fp32 form on the widened
// values: equal bit for bit) where the CPU has AVX2 and the head fits
// (avx2::attention_decode_fits), else the reference.
void attention_f16_decode(float* out, const float* q, const std::uint16_t* k_cache,
                          const std::uint16_t* v_cache, const AttentionShape& s,
                          const AttentionStrides& strides);

// The CPU backend's prefill attention over fp16 caches (n_new >= kAttentionGemmMinRows): the
// visible positions widened into `scratch` (attention_f16_scratch_floats(s) floats, the
// caller's), then attention_gemm (attention_gemm.h) over it. Equal bit for bit to
// attention_gemm over the widened caches.
void attention_f16_gemm(float* out, const float* q, const std::uint16_t* k_cache,
                        const std::uint16_t* v_cache, const AttentionShape& s,
                        const AttentionStrides& strides, float* scratch);
// Floats attention_f16_gemm's scratch holds: both caches' visible positions.
inline long attention_f16_scratch_floats(const AttentionShape& s) {
  return 2L * s.batch * (s.past_len + s.n_new) * s.n_kv_heads * s.head_dim;
}

// rope_kv_write (rope_kv_write.h) into fp16 caches: the same rotation in place, then each row's
// k and v rounded as kv_cache_write_f16 rounds them. Equal bit for bit to the unfused rope,
// rope, kv_cache_write_f16, kv_cache_write_f16.
void rope_kv_write_f16(float* qkv, std::uint16_t* k_cache, std::uint16_t* v_cache,
                       const std::int32_t* positions, const RopeKvShape& s);

// The continuous-batching pool in binary16 (ragged_attention.h's ops over halves).
// kv_write_ragged with each value rounded as kv_cache_write_f16 rounds it.
void kv_write_ragged_f16(std::uint16_t* pool, const std::int32_t* block_table,
                         const PagedKv& paged, const float* src, int src_stride,
                         const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                         int kv_dim);
// paged_attention_decode (attention_decode.h) over fp16 pools: the AVX2 kernel with F16C loads
// through the block table where it fits (bit for bit its fp32 form over the widened pool), else
// each sequence's visible positions widened and the reference loop.
void paged_attention_f16_decode(float* out, const float* q, const std::uint16_t* k_pool,
                                const std::uint16_t* v_pool, const std::int32_t* block_table,
                                const PagedKv& paged, const AttentionShape& s,
                                const HeadStrides& q_strides, const HeadStrides& out_strides);
// kv_gather_paged (paged_kv.h) of one sequence from an fp16 pool, widened: out [len, kv_dim]
// holds positions [0, len) of the sequence whose block-table row is `block_table`.
void kv_gather_paged_f16(float* out, const std::uint16_t* pool, const std::int32_t* block_table,
                         const PagedKv& paged, int len, int kv_dim);
// The reference: ragged_paged_attention (ragged_attention.h) over the pools widened to fp32
// (the whole pools: a reference, not a kernel). Equal bit for bit to it by construction.
void ragged_paged_attention_f16_reference(float* out, int out_stride, const float* q,
                                          int q_stride, const std::uint16_t* k_pool,
                                          const std::uint16_t* v_pool,
                                          const std::int32_t* block_table, const PagedKv& paged,
                                          const std::int32_t* seq, const std::int32_t* pos,
                                          int n_rows, int n_heads, int n_kv_heads, int head_dim,
                                          long pool_rows);

}  // namespace llmbench::cpu
