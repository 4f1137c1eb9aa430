// Causal GQA attention reading a paged KV cache through its block table, on the GPU.
// The spec is kernels/cpu/paged_attention.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/cuda/attention.cuh"

namespace llmbench::cuda {

// Device pointers, as in cpu::paged_attention. Throws llmbench::Error for a head_dim over
// kAttentionMaxHeadDim (attention.cuh).
void paged_attention(float* out, const float* q, const float* k_pool, const float* v_pool,
                     const std::int32_t* block_table, const PagedKv& paged,
                     const AttentionShape& s, const HeadStrides& q_strides,
                     const HeadStrides& out_strides, cudaStream_t stream,
                     const AttentionSplit& split = {},
                     AttentionKernel kernel = AttentionKernel::kTiled);

}  // namespace llmbench::cuda
