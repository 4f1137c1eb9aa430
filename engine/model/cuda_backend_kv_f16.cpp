// CudaBackend's ops over the fp16 KV cache (--kv-cache-dtype fp16; backend.h, "the fp16 KV cache"
// and "the continuous-batching pool in binary16"): the writes, attention and its captured (_at)
// form, the fused RoPE + write, and the ragged pool's write and attention, each the kernels/cuda
// launcher of its fp32 twin in cuda_backend.cpp instantiated for __half caches. They route
// exactly as the fp32 ops do (cuda_backend_impl.h): prefill of kGemmAttentionMinQueries or more
// queries through cuBLAS (attention_gemm_f16: the visible positions widened to fp32 scratch
// first), every other call to the kernel --decode-attention names, split over keys by the same
// rule; ragged attention always through its one kernel, prompt chunks included, as the fp32
// ragged_paged_attention; every op ends in after_op, so --sync-check blames the right one.
// A file of its own: one concept, and cuda_backend.cpp was at the 500-line limit of a file.
// Deliberately not: paged (non-ragged) fp16 caches (check_kv_dtype refuses them).
#include <cuda_fp16.h>

#include <cstdint>

#include "engine/model/cuda_backend.h"
#include "engine/model/cuda_backend_impl.h"
#include "kernels/cuda/attention_f16.cuh"
#include "kernels/cuda/kv_cache.cuh"
#include "kernels/cuda/ragged_attention.cuh"
#include "kernels/cuda/rope_kv_write.cuh"

namespace llmbench {

namespace {

// The cache's binary16 bits as the CUDA half type the kernels take (the same 16 bits).
__half* as_half(std::uint16_t* p) { return reinterpret_cast<__half*>(p); }
const __half* as_half(const std::uint16_t* p) { return reinterpret_cast<const __half*>(p); }

}  // namespace

void CudaBackend::kv_cache_write_f16(std::uint16_t* cache, const float* src, int src_stride,
                                     int batch, int n_new, int past_len, int cache_seq,
                                     int kv_dim) {
  cuda::kv_cache_write_f16(as_half(cache), src, src_stride, batch, n_new, past_len, cache_seq,
                           kv_dim, impl_->stream);
  after_op("kv_cache_write_f16");
}

void CudaBackend::attention_f16(float* out, const float* q, const std::uint16_t* k_cache,
                                const std::uint16_t* v_cache, const AttentionShape& shape,
                                const AttentionStrides& strides, DecodeAttention kernel) {
  // Long prefills through cuBLAS whichever kernel --decode-attention names, as attention().
  if (shape.n_new >= detail::kGemmAttentionMinQueries) {
    const std::size_t bytes =
        cuda::attention_gemm_f16_scratch_bytes(shape, detail::kAttentionScoreBudget);
    if (bytes > 0) {
      void* scratch = impl_->attention_scratch.at_least(bytes);
      cuda::attention_gemm_f16(impl_->cublas, out, q, as_half(k_cache), as_half(v_cache), shape,
                               strides, detail::kAttentionScoreBudget, scratch,
                               impl_->attention_scratch.bytes, impl_->stream);
      after_op("attention_f16");
      return;
    }
  }
  cuda::attention_strided_f16(
      out, q, as_half(k_cache), as_half(v_cache), shape, strides, impl_->stream,
      impl_->attention_split(shape),
      detail::kernel_of(kernel));
  after_op("attention_f16");
}

void CudaBackend::kv_cache_write_f16_at(std::uint16_t* cache, const float* src, int src_stride,
                                        int batch, int n_new, const std::int32_t* positions,
                                        int cache_seq, int kv_dim) {
  cuda::kv_cache_write_f16_at(as_half(cache), src, src_stride, batch, n_new, positions,
                              cache_seq, kv_dim, impl_->stream);
  after_op("kv_cache_write_f16_at");
}

void CudaBackend::attention_f16_at(float* out, const float* q, const std::uint16_t* k_cache,
                                   const std::uint16_t* v_cache, const AttentionShape& shape,
                                   const AttentionStrides& strides,
                                   const std::int32_t* positions, int max_keys,
                                   DecodeAttention kernel) {
  // Always the attention kernel, as attention_at (the cuBLAS route sizes its work by past_len).
  cuda::attention_strided_at_f16(
      out, q, as_half(k_cache), as_half(v_cache), shape, strides, positions, max_keys,
      impl_->stream, impl_->attention_split(shape),
      detail::kernel_of(kernel));
  after_op("attention_f16_at");
}

void CudaBackend::rope_kv_write_f16(float* qkv, std::uint16_t* k_cache, std::uint16_t* v_cache,
                                    const std::int32_t* positions, const RopeKvShape& s) {
  cuda::rope_kv_write_f16(qkv, as_half(k_cache), as_half(v_cache), positions, s, impl_->stream);
  after_op("rope_kv_write_f16");
}

void CudaBackend::kv_write_ragged_f16(std::uint16_t* pool, const std::int32_t* block_table,
                                      const PagedKv& paged, const float* src, int src_stride,
                                      const std::int32_t* seq, const std::int32_t* pos,
                                      int n_rows, int kv_dim) {
  cuda::kv_write_ragged_f16(as_half(pool), block_table, paged, src, src_stride, seq, pos, n_rows,
                            kv_dim, impl_->stream);
  after_op("kv_write_ragged_f16");
}

void CudaBackend::ragged_paged_attention_f16(float* out, int out_stride, const float* q,
                                             int q_stride, const std::uint16_t* k_pool,
                                             const std::uint16_t* v_pool,
                                             const std::int32_t* block_table,
                                             const PagedKv& paged, const std::int32_t* seq,
                                             const std::int32_t* pos, int n_rows, int n_heads,
                                             int n_kv_heads, int head_dim) {
  // The kernel for every row, prompt chunks too: ragged_paged_attention has no cuBLAS route.
  cuda::ragged_paged_attention_f16(out, out_stride, q, q_stride, as_half(k_pool),
                                   as_half(v_pool), block_table, paged, seq, pos, n_rows, n_heads,
                                   n_kv_heads, head_dim, impl_->stream);
  after_op("ragged_paged_attention_f16");
}

}  // namespace llmbench
