// Causal GQA attention on the GPU over a contiguous (strided) cache: attention_kernel.cuh with
// keys at fixed strides. attention() is attention_strided() with the row-major strides.
#include "kernels/cuda/attention.cuh"

#include "kernels/common/op_math.h"
#include "kernels/cuda/attention_kernel.cuh"

namespace llmbench::cuda {

void attention_strided(float* out, const float* q, const float* k_cache, const float* v_cache,
                       const AttentionShape& s, const AttentionStrides& strides,
                       cudaStream_t stream) {
  const unsigned blocks = detail::attention_blocks(s, "cuda::attention");
  if (blocks == 0) return;
  detail::attention_kernel<<<blocks, detail::kAttentionThreads, 0, stream>>>(
      out, strides.out, q, strides.q, k_cache, v_cache, s, detail::StridedKvAt{strides.kv},
      detail::CausalKeys{s.past_len},
      attention_scale(s.head_dim));
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s, cudaStream_t stream) {
  attention_strided(out, q, k_cache, v_cache, s, row_major_strides(s), stream);
}

}  // namespace llmbench::cuda
