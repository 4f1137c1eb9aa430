// CudaBackend's ops over the fp16 KV cache (--kv-cache-dtype fp16; backend.h, "the fp16 KV cache"):
// the writes, attention and its captured (_at) form, and the fused RoPE + write, each the
// kernels/cuda launcher of its fp32 twin in cuda_backend.cpp instantiated for __half caches. They
// route exactly as the fp32 ops do (cuda_backend_impl.h): prefill of kGemmAttentionMinQueries or
// more queries through cuBLAS (attention_gemm_f16: the visible positions widened to fp32 scratch
// first), every other call to the kernel --decode-attention names, split over keys by the same
// rule; every op ends in after_op, so --sync-check blames the right one.
// A file of its own: one concept, and cuda_backend.cpp was at the 500-line limit of a file.
// Deliberately not: paged or ragged fp16 caches (check_kv_dtype refuses them).
#include <cuda_fp16.h>

#include <cstdint>

#include "engine/model/cuda_backend.h"
#include "engine/model/cuda_backend_impl.h"
#include "kernels/cuda/attention_f16.cuh"
#include "kernels/cuda/kv_cache.cuh"
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
      detail::attention_split(impl_->attention_scratch, impl_->sm_count, shape),
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
      impl_->stream, detail::attention_split(impl_->attention_scratch, impl_->sm_count, shape),
      detail::kernel_of(kernel));
  after_op("attention_f16_at");
}

void CudaBackend::rope_kv_write_f16(float* qkv, std::uint16_t* k_cache, std::uint16_t* v_cache,
                                    const std::int32_t* positions, const RopeKvShape& s) {
  cuda::rope_kv_write_f16(qkv, as_half(k_cache), as_half(v_cache), positions, s, impl_->stream);
  after_op("rope_kv_write_f16");
}

}  // namespace llmbench
