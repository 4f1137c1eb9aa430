// Prefill attention through cuBLAS, the GPU counterpart of kernels/cpu/attention.h for many
// query tokens: per (sequence, query head) S = Q K^T in batched fp32 GEMMs (CUBLAS_COMPUTE_32F,
// no TF32), a causal softmax kernel that turns each row of S into probabilities in place, and
// O = P V in a second batched GEMM. The (sequence, head) pairs are processed in chunks so that the
// scores of one chunk fit the scratch the caller gives; pointer arrays are built on the device.
// Why: attention_kernel.cuh re-reads every key row for every query and does its dot products
// one warp per key, about 3 TFLOP/s on an H100 for a 512-token prompt; the GEMMs run the same
// arithmetic at the fp32 GEMM rate (docs/gpu-validation.md has the measured before and after).
// The queries go in blocks of 128 rows, each block's GEMMs over the keys it can see, so most of
// the masked triangle is skipped (at 512 new tokens, 5/8 of the full score matrix is computed).
// Deliberately not: tensor cores (tf32/bf16 scores would move logits beyond the tests'
// tolerance against the CPU), or flash-attention tiling (no score matrix in memory).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/common/layout.h"

namespace llmbench::cuda {

// Scratch bytes attention_gemm needs for shape `s` so that the scores of one chunk of
// (sequence, head) pairs stay within `score_budget_bytes` (at least one pair per chunk).
// 0 when the shape cannot take this path (a key count beyond cuBLAS's int arguments).
std::size_t attention_gemm_scratch_bytes(const AttentionShape& s, std::size_t score_budget_bytes);

// out = causal softmax(q k^T / sqrt(head_dim)) v, operands placed by `strides`, on the handle's
// stream (which must be `stream`); `scratch` holds scratch_bytes device bytes, at least
// attention_gemm_scratch_bytes(s, budget) for some budget. Throws llmbench::Error if the scratch
// is too small for a single pair or the shape is unsupported.
void attention_gemm(cublasHandle_t handle, float* out, const float* q, const float* k_cache,
                    const float* v_cache, const AttentionShape& s, const AttentionStrides& strides,
                    void* scratch, std::size_t scratch_bytes, cudaStream_t stream);

}  // namespace llmbench::cuda
