// Causal GQA attention on the GPU over an fp16 KV cache (--kv-dtype fp16): keys and values stored
// as IEEE binary16 (__half), widened exactly to fp32, every sum in fp32. The spec is
// kernels/cpu/kv_f16.h (attention_f16_strided: widen, then the fp32 attention); the fp32 forms
// are attention.cuh and attention_gemm.cuh, whose contracts these follow. Strides of the caches
// count halves.
// Deliberately not: paged fp16 caches (the engine refuses them), the ragged pool of halves
// (ragged_attention.cuh), or fp16 arithmetic.
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/cuda/attention.cuh"

namespace llmbench::cuda {

// Whether AttentionKernel::kStreamed runs a call over these fp16 caches rather than falling back
// to kTiled: head_dim 64, 128 or 256, and k_cache, v_cache and every cache row aligned to a
// lane's load of head_dim / 32 halves (4, 8 or 16 bytes). Host code; reads no device memory.
bool attention_streamed_supported_f16(const AttentionShape& s, const AttentionStrides& strides,
                                      const __half* k_cache, const __half* v_cache);

// attention_strided() (attention.cuh) over fp16 caches: the same kernels, split and combine,
// each key and value widened as it is read.
void attention_strided_f16(float* out, const float* q, const __half* k_cache,
                           const __half* v_cache, const AttentionShape& s,
                           const AttentionStrides& strides, cudaStream_t stream,
                           const AttentionSplit& split = {},
                           AttentionKernel kernel = AttentionKernel::kTiled);

// attention_strided_at() (attention.cuh) over fp16 caches: each query's key count read from
// device positions, the grid sized by max_keys (a captured decode step, --cuda-graphs).
void attention_strided_at_f16(float* out, const float* q, const __half* k_cache,
                              const __half* v_cache, const AttentionShape& s,
                              const AttentionStrides& strides, const std::int32_t* positions,
                              int max_keys, cudaStream_t stream, const AttentionSplit& split = {},
                              AttentionKernel kernel = AttentionKernel::kTiled);

// out(b, j, g, :) = in(b, j, g, :) widened to fp32 for b < batch, j < len, g < n_kv_heads, both
// placed by their strides (in elements). Exact: equal bit for bit to cpu::widen_kv_f16.
void widen_kv_f16(float* out, const HeadStrides& out_strides, const __half* in,
                  const HeadStrides& in_strides, int batch, int len, int n_kv_heads, int head_dim,
                  cudaStream_t stream);

// Prefill over fp16 caches through cuBLAS: the visible positions [0, past_len + n_new) of both
// caches widened (widen_kv_f16) into fp32 scratch, then attention_gemm (attention_gemm.cuh) over
// the widened copies, a chunk of sequences at a time so the copies stay within the budget. The
// arithmetic is attention_gemm's on exactly the widened values, as the CPU backend's
// attention_f16_gemm does.
// Scratch bytes for shape `s`: the widened keys and values of as many sequences as fit
// budget_bytes (at least one), then attention_gemm's scratch for such a chunk with its scores
// within budget_bytes. 0 when attention_gemm cannot take the shape.
std::size_t attention_gemm_f16_scratch_bytes(const AttentionShape& s, std::size_t budget_bytes);

// out = causal softmax(q k^T / sqrt(head_dim)) v over the widened caches, on the handle's stream
// (which must be `stream`). budget_bytes: the one given to attention_gemm_f16_scratch_bytes;
// `scratch` holds scratch_bytes device bytes, at least what that returned. Throws
// llmbench::Error when the scratch is too small or the shape unsupported.
void attention_gemm_f16(cublasHandle_t handle, float* out, const float* q, const __half* k_cache,
                        const __half* v_cache, const AttentionShape& s,
                        const AttentionStrides& strides, std::size_t budget_bytes, void* scratch,
                        std::size_t scratch_bytes, cudaStream_t stream);

}  // namespace llmbench::cuda
